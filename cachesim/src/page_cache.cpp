// Dirty blocks with active/inactive LRU lists and write-back (CAWL Alg. 1, lines 16-40).
//
// The LRU order of blocks is (time, order, file, offset), oldest first. The lists are kept in that
// order without searching them, because every change lands at a known place:
// - new and rewritten bytes carry the newest order, so they join the young end of their list;
// - the untouched tail of a split block keeps its time and order and no other block lies between
//   it and the block it came from, so it takes that block's place;
// - the block demoted from the active list is the oldest active one, so every older block is
//   inactive: in the inactive list it follows the block right before it in the list of all blocks.
// Each list is walked from its young end to the first older block, so inputs whose times go back
// (possible through the public interface, never in the simulation) still keep the order.
#include "iosig/cachesim/page_cache.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <utility>

namespace iosig::cachesim {

PageCacheModel::PageCacheModel(const PageCacheModel& other)
    : pool_(other.pool_), free_blocks_(other.free_blocks_), positions_(other.positions_),
      by_age_(other.by_age_), active_(other.active_), inactive_(other.inactive_),
      dirty_(other.dirty_), active_bytes_(other.active_bytes_), next_order_(other.next_order_) {
    for (auto it = positions_.begin(); it != positions_.end(); ++it)
        pool_[it->block].position = it;
}

PageCacheModel::PageCacheModel(PageCacheModel&& other) noexcept {
    swap(other);
}

PageCacheModel& PageCacheModel::operator=(const PageCacheModel& other) {
    if (this != &other) {
        PageCacheModel copy(other);
        swap(copy);
    }
    return *this;
}

PageCacheModel& PageCacheModel::operator=(PageCacheModel&& other) noexcept {
    if (this != &other) {
        PageCacheModel taken(std::move(other));
        swap(taken);
    }
    return *this;
}

// Swapping keeps the index nodes where they are, so the blocks' iterators stay valid.
void PageCacheModel::swap(PageCacheModel& other) noexcept {
    pool_.swap(other.pool_);
    free_blocks_.swap(other.free_blocks_);
    positions_.swap(other.positions_);
    spare_positions_.swap(other.spare_positions_);
    std::swap(by_age_, other.by_age_);
    std::swap(active_, other.active_);
    std::swap(inactive_, other.inactive_);
    std::swap(dirty_, other.dirty_);
    std::swap(active_bytes_, other.active_bytes_);
    std::swap(next_order_, other.next_order_);
}

bool PageCacheModel::older(const Block& a, const Block& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.order != b.order) return a.order < b.order;
    if (a.file != b.file) return a.file < b.file;
    return a.offset < b.offset;
}

void PageCacheModel::link_after(List& list, LinksIn links, BlockIndex after, BlockIndex b) {
    Links& own = pool_[b].*links;
    own.older = after;
    own.newer = after == no_block ? list.oldest : (pool_[after].*links).newer;
    if (own.older != no_block)
        (pool_[own.older].*links).newer = b;
    else
        list.oldest = b;
    if (own.newer != no_block)
        (pool_[own.newer].*links).older = b;
    else
        list.newest = b;
}

void PageCacheModel::unlink(List& list, LinksIn links, BlockIndex b) {
    Links& own = pool_[b].*links;
    if (own.older != no_block)
        (pool_[own.older].*links).newer = own.newer;
    else
        list.oldest = own.newer;
    if (own.newer != no_block)
        (pool_[own.newer].*links).older = own.older;
    else
        list.newest = own.older;
    own = {};
}

void PageCacheModel::link_by_age(BlockIndex b) {
    const Block& block = pool_[b];
    auto place = [&](List& list, LinksIn links) {
        BlockIndex after = list.newest;
        while (after != no_block && older(block, pool_[after]))
            after = (pool_[after].*links).older;
        link_after(list, links, after, b);
    };
    place(by_age_, &Block::by_age);
    place(list_of(block.active), &Block::in_list);
}

// Right after `elder`, which has the same time and order and the next lower offset.
void PageCacheModel::link_after_elder(BlockIndex elder, BlockIndex b) {
    link_after(by_age_, &Block::by_age, elder, b);
    link_after(list_of(pool_[b].active), &Block::in_list, elder, b);
}

void PageCacheModel::unlink_everywhere(BlockIndex b) {
    unlink(by_age_, &Block::by_age, b);
    unlink(list_of(pool_[b].active), &Block::in_list, b);
}

PageCacheModel::BlockIndex PageCacheModel::add_block(FileId file, std::uint64_t offset,
                                                     std::uint64_t size, double time, bool active,
                                                     std::uint64_t order,
                                                     PositionIndex::const_iterator hint) {
    BlockIndex b = 0;
    if (!free_blocks_.empty()) {
        b = free_blocks_.back();
        free_blocks_.pop_back();
    } else {
        if (pool_.size() >= no_block) throw std::length_error("PageCacheModel: too many blocks");
        b = static_cast<BlockIndex>(pool_.size());
        pool_.emplace_back();
    }
    Block& block = pool_[b];
    block = Block{file, offset, size, time, order, active, {}, {}, {}};
    const Position position{file, offset, b};
    if (spare_positions_.empty()) {
        block.position = positions_.insert(hint, position);
    } else {
        auto node = std::move(spare_positions_.back());
        spare_positions_.pop_back();
        node.value() = position;
        block.position = positions_.insert(hint, std::move(node));
    }
    dirty_ += size;
    if (active) active_bytes_ += size;
    return b;
}

void PageCacheModel::remove_block(BlockIndex b) {
    unlink_everywhere(b);
    Block& block = pool_[b];
    dirty_ -= block.size;
    if (block.active) active_bytes_ -= block.size;
    spare_positions_.push_back(positions_.extract(block.position));
    block.position = {};
    free_blocks_.push_back(b);
}

// A block rewritten as a whole becomes active with the new time: same place in the index, new
// place in the lists.
void PageCacheModel::rewrite_whole_block(BlockIndex b, double time, std::uint64_t order) {
    unlink_everywhere(b);
    Block& block = pool_[b];
    if (!block.active) active_bytes_ += block.size;
    block.active = true;
    block.time = time;
    block.order = order;
    link_by_age(b);
}

// Writes back the first `bytes` of a block: the kernel writes a file's pages in offset order.
void PageCacheModel::shrink_front(BlockIndex b, std::uint64_t bytes) {
    Block& block = pool_[b];
    block.offset += bytes;
    block.position->offset = block.offset;
    block.size -= bytes;
    dirty_ -= bytes;
    if (block.active) active_bytes_ -= bytes;
}

// The first block of `file` that ends after `offset` (or the first one after it).
PageCacheModel::PositionIndex::const_iterator
PageCacheModel::first_reaching(FileId file, std::uint64_t offset) const {
    auto it = positions_.upper_bound(Position{file, offset, no_block});
    if (it != positions_.begin()) {
        auto prev = std::prev(it);
        if (prev->file == file && prev->offset + pool_[prev->block].size > offset) it = prev;
    }
    return it;
}

std::uint64_t PageCacheModel::new_bytes(FileId file, std::uint64_t offset,
                                        std::uint64_t size) const {
    const std::uint64_t end = offset + size;
    std::uint64_t covered = 0;
    for (auto it = first_reaching(file, offset);
         it != positions_.end() && it->file == file && it->offset < end; ++it) {
        const std::uint64_t lo = std::max(it->offset, offset);
        const std::uint64_t hi = std::min(it->offset + pool_[it->block].size, end);
        if (hi > lo) covered += hi - lo;
    }
    return size - covered;
}

std::uint64_t PageCacheModel::insert(FileId file, std::uint64_t offset, std::uint64_t size,
                                     double time, const RewriteObserver* rewritten) {
    if (size == 0) return 0;
    const std::uint64_t end = offset + size;
    const std::uint64_t order = next_order_++;
    // Bytes nobody wrote before form new inactive blocks, rewritten bytes become active; both get
    // this write's time and order. The untouched rest of an old block keeps its time, list, order.
    auto add_written = [&](std::uint64_t from, std::uint64_t to, bool active,
                           PositionIndex::const_iterator hint) {
        link_by_age(add_block(file, from, to - from, time, active, order, hint));
    };

    auto it = first_reaching(file, offset);
    std::uint64_t cursor = offset;
    std::uint64_t fresh = 0;
    while (it != positions_.end() && it->file == file && it->offset < end) {
        const BlockIndex b = it->block;
        const std::uint64_t b_off = it->offset;
        const std::uint64_t b_end = b_off + pool_[b].size;
        const auto next = std::next(it);
        if (cursor < b_off) {
            add_written(cursor, b_off, false, it);
            fresh += b_off - cursor;
            cursor = b_off;
        }
        const std::uint64_t overlap_end = std::min(b_end, end);
        if (rewritten) (*rewritten)(overlap_end - cursor, pool_[b].time);
        if (b_off < cursor) {
            // The untouched head keeps key, time and list: shorten the block where it is.
            const std::uint64_t cut = b_end - cursor;
            pool_[b].size -= cut;
            dirty_ -= cut;
            if (pool_[b].active) active_bytes_ -= cut;
            add_written(cursor, overlap_end, true, next);
            if (b_end > end) {
                const Block& head = pool_[b];
                link_after_elder(
                    b, add_block(file, end, b_end - end, head.time, head.active, head.order, next));
            }
        } else if (b_end > end) {
            // The untouched tail stays in the block's place; its start moves past the write.
            Block& block = pool_[b];
            block.offset = end;
            it->offset = end;
            block.size = b_end - end;
            dirty_ -= end - b_off;
            if (block.active) active_bytes_ -= end - b_off;
            add_written(b_off, end, true, it);
        } else {
            rewrite_whole_block(b, time, order);
        }
        cursor = overlap_end;
        it = next;
    }
    if (cursor < end) {
        add_written(cursor, end, false, it);
        fresh += end - cursor;
    }
    return fresh;
}

void PageCacheModel::balance_lists() {
    while (active_bytes_ > dirty_ - active_bytes_ && active_.oldest != no_block) {
        const BlockIndex b = active_.oldest;
        unlink(active_, &Block::in_list, b);
        Block& block = pool_[b];
        block.active = false;
        active_bytes_ -= block.size;
        // Every block older than the oldest active one is inactive.
        link_after(inactive_, &Block::in_list, block.by_age.older, b);
    }
}

PageCacheModel::BlockIndex PageCacheModel::oldest_victim() const {
    return inactive_.oldest != no_block ? inactive_.oldest : active_.oldest;
}

double PageCacheModel::write_back(double bytes) {
    double written = 0;
    while (bytes - written >= 1 && !positions_.empty()) {
        balance_lists();
        const BlockIndex victim = oldest_victim();
        const auto budget = static_cast<std::uint64_t>(bytes - written);
        const std::uint64_t size = pool_[victim].size;
        if (size <= budget) {
            written += static_cast<double>(size);
            remove_block(victim);
        } else {
            shrink_front(victim, budget);
            written += static_cast<double>(budget);
        }
    }
    return written;
}

double PageCacheModel::oldest_time() const {
    double oldest = std::numeric_limits<double>::infinity();
    if (active_.oldest != no_block) oldest = std::min(oldest, pool_[active_.oldest].time);
    if (inactive_.oldest != no_block) oldest = std::min(oldest, pool_[inactive_.oldest].time);
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
            const double block = static_cast<double>(pool_[oldest_victim()].size);
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
    out.reserve(positions_.size());
    for (const Position& p : positions_) {
        const Block& b = pool_[p.block];
        out.push_back({p.file, p.offset, b.size, b.time, b.active});
    }
    return out;
}

} // namespace iosig::cachesim
