// Dirty blocks with active/inactive LRU lists and write-back (CAWL Alg. 1, lines 16-40).
#include "iosig/cachesim/page_cache.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

namespace iosig::cachesim {

void PageCacheModel::add_block(Key key, std::uint64_t size, double time, bool active,
                               std::uint64_t order) {
    if (size == 0) return;
    blocks_.emplace(key, Entry{size, time, active, order});
    list_of(active).insert(Lru{time, order, key});
    dirty_ += size;
    if (active) active_bytes_ += size;
}

void PageCacheModel::remove_block(BlockMap::iterator it) {
    const Entry& e = it->second;
    list_of(e.active).erase(Lru{e.time, e.order, it->first});
    dirty_ -= e.size;
    if (e.active) active_bytes_ -= e.size;
    blocks_.erase(it);
}

// Writes back the first `bytes` of a block: the kernel writes a file's pages in offset order.
void PageCacheModel::shrink_front(BlockMap::iterator it, std::uint64_t bytes) {
    Entry& e = it->second;
    auto& list = list_of(e.active);
    auto lru = list.extract(Lru{e.time, e.order, it->first});
    auto node = blocks_.extract(it);
    node.key().offset += bytes;
    node.mapped().size -= bytes;
    lru.value().key = node.key();
    list.insert(std::move(lru));
    blocks_.insert(std::move(node));
    dirty_ -= bytes;
    if (e.active) active_bytes_ -= bytes;
}

std::uint64_t PageCacheModel::new_bytes(FileId file, std::uint64_t offset,
                                        std::uint64_t size) const {
    const std::uint64_t end = offset + size;
    std::uint64_t covered = 0;
    auto it = blocks_.upper_bound(Key{file, offset});
    if (it != blocks_.begin()) {
        auto prev = std::prev(it);
        if (prev->first.file == file && prev->first.offset + prev->second.size > offset) it = prev;
    }
    for (; it != blocks_.end() && it->first.file == file && it->first.offset < end; ++it) {
        const std::uint64_t lo = std::max(it->first.offset, offset);
        const std::uint64_t hi = std::min(it->first.offset + it->second.size, end);
        if (hi > lo) covered += hi - lo;
    }
    return size - covered;
}

std::uint64_t PageCacheModel::insert(FileId file, std::uint64_t offset, std::uint64_t size,
                                     double time) {
    if (size == 0) return 0;
    const std::uint64_t end = offset + size;
    const std::uint64_t order = next_order_++;

    struct Piece {
        std::uint64_t offset, size;
        double time;
        bool active;
        std::uint64_t order;
    };
    // Pieces to (re)insert: remnants of old blocks keep their time, list and order; rewritten bytes
    // become active with the new time; bytes nobody wrote before form new inactive blocks.
    Piece local[8];
    std::vector<Piece> spill;
    std::size_t count = 0;
    auto push = [&](Piece piece) {
        if (piece.size == 0) return;
        if (count < std::size(local))
            local[count++] = piece;
        else
            spill.push_back(piece);
    };

    auto it = blocks_.upper_bound(Key{file, offset});
    if (it != blocks_.begin()) {
        auto prev = std::prev(it);
        if (prev->first.file == file && prev->first.offset + prev->second.size > offset) it = prev;
    }
    std::uint64_t cursor = offset;
    std::uint64_t fresh = 0;
    while (it != blocks_.end() && it->first.file == file && it->first.offset < end) {
        const std::uint64_t b_off = it->first.offset;
        const std::uint64_t b_end = b_off + it->second.size;
        const Entry old = it->second;
        if (cursor < b_off) {
            push({cursor, b_off - cursor, time, false, order});
            fresh += b_off - cursor;
            cursor = b_off;
        }
        const std::uint64_t overlap_end = std::min(b_end, end);
        push({cursor, overlap_end - cursor, time, true, order});
        if (b_end > end) push({end, b_end - end, old.time, old.active, old.order});
        auto next = std::next(it);
        if (b_off < cursor) {
            // The untouched head keeps key, time and list: shorten the block where it is.
            const std::uint64_t cut = old.size - (cursor - b_off);
            it->second.size -= cut;
            dirty_ -= cut;
            if (old.active) active_bytes_ -= cut;
        } else {
            remove_block(it);
        }
        cursor = overlap_end;
        it = next;
    }
    if (cursor < end) {
        push({cursor, end - cursor, time, false, order});
        fresh += end - cursor;
    }
    for (std::size_t i = 0; i < count; ++i)
        add_block(Key{file, local[i].offset}, local[i].size, local[i].time, local[i].active,
                  local[i].order);
    for (const Piece& piece : spill)
        add_block(Key{file, piece.offset}, piece.size, piece.time, piece.active, piece.order);
    return fresh;
}

void PageCacheModel::balance_lists() {
    while (active_bytes_ > dirty_ - active_bytes_ && !active_.empty()) {
        auto lru = active_.extract(active_.begin());
        auto it = blocks_.find(lru.value().key);
        it->second.active = false;
        active_bytes_ -= it->second.size;
        inactive_.insert(std::move(lru));
    }
}

double PageCacheModel::write_back(double bytes) {
    double written = 0;
    while (bytes - written >= 1 && !blocks_.empty()) {
        balance_lists();
        const Lru& victim = inactive_.empty() ? *active_.begin() : *inactive_.begin();
        auto it = blocks_.find(victim.key);
        const auto budget = static_cast<std::uint64_t>(bytes - written);
        if (it->second.size <= budget) {
            written += static_cast<double>(it->second.size);
            remove_block(it);
        } else {
            shrink_front(it, budget);
            written += static_cast<double>(budget);
        }
    }
    return written;
}

double PageCacheModel::oldest_time() const {
    double oldest = std::numeric_limits<double>::infinity();
    if (!active_.empty()) oldest = std::min(oldest, active_.begin()->time);
    if (!inactive_.empty()) oldest = std::min(oldest, inactive_.begin()->time);
    return oldest;
}

FlushResult PageCacheModel::flush(double now, double duration, double bandwidth,
                                  double background_thresh, double expire, double wakeup_interval,
                                  const std::function<void(double, double)>& on_progress) {
    FlushResult result;
    if (bandwidth <= 0 || duration <= 0) return result;
    double t = now;
    const double end = now + duration;
    auto account = [&](double bytes) {
        const double busy = bytes / bandwidth;
        t += busy;
        result.busy += busy;
        result.written += bytes;
        if (on_progress) on_progress(t, dirty_bytes());
    };
    while (t < end && dirty_ > 0) {
        const double dirty = dirty_bytes();
        if (dirty > background_thresh) {
            const double written =
                write_back(std::min(dirty - background_thresh, (end - t) * bandwidth));
            if (written <= 0) break;
            account(written);
            continue;
        }
        // Below the background threshold only expired data is written, once the flusher wakes up.
        double due = oldest_time() + expire;
        if (wakeup_interval > 0) due = std::ceil(due / wakeup_interval) * wakeup_interval;
        if (due >= end) break;
        if (due > t) {
            t = due;
            if (on_progress) on_progress(t, dirty);
        }
        while (t < end && has_expired(t, expire)) {
            auto victim = inactive_.empty() ? active_.begin() : inactive_.begin();
            const double block = static_cast<double>(blocks_.find(victim->key)->second.size);
            const double written = write_back(std::min(block, (end - t) * bandwidth));
            if (written <= 0) break;
            account(written);
        }
        if (t < end && has_expired(t, expire)) break; // out of time mid-block
    }
    return result;
}

std::vector<DirtyBlock> PageCacheModel::blocks() const {
    std::vector<DirtyBlock> out;
    out.reserve(blocks_.size());
    for (const auto& [key, e] : blocks_)
        out.push_back({key.file, key.offset, e.size, e.time, e.active});
    return out;
}

} // namespace iosig::cachesim
