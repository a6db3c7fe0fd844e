// The line table: allocation and eviction, fills, leases (pin + data lock) (engine_impl.hpp).
// Marking lines dirty and the journal's group commit: engine_dirty.cpp.
#include "engine_impl.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace iosig::tier::detail {

// With mutex_ held: a slot for a new line (the caller pins and locks it). Evicts a clean, unpinned
// line when there is no free slot.
int Engine::take_slot(std::unique_lock<std::mutex>& lock, Slot& slot) {
    auto evictable = [&](Slot s) {
        const LineMeta& m = meta_[s];
        return m.valid && !m.in_free_list && m.pins == 0 && !m.dirty && !m.flushing;
    };
    for (;;) {
        if (stopping_ && abandoned_) return -EIO;
        if (!set_aside_.empty()) {
            return_slots_set_aside_locked();
            // No slot can take a line until the journal takes records again: the caller goes
            // to the home file rather than wait.
            if (set_aside_.size() == lines_) return -EIO;
        }
        if (!free_.empty()) {
            slot = free_.back();
            free_.pop_back();
            meta_[slot].in_free_list = false;
            return 0;
        }
        bool found = false;
        for (int attempt = 0; attempt < 8 && !found && policy_lines_ > 0; ++attempt) {
            const Slot s = policy_->choose_victim(Access{});
            if (s >= lines_) break; // nil: the policy holds no line after all
            if (evictable(s)) {
                slot = s;
                found = true;
            } else {
                policy_->on_busy(s, Access{meta_[s].key, 1, never_again});
                if (meta_[s].dirty) flusher_wake_.notify_one();
            }
        }
        // The policy keeps offering lines in use or not yet written back: take any clean one.
        for (std::size_t i = 0; i < lines_ && !found; ++i) {
            const Slot s = static_cast<Slot>((scan_cursor_ + i) % lines_);
            if (evictable(s)) {
                slot = s;
                found = true;
                scan_cursor_ = (s + 1) % lines_;
            }
        }
        if (found) {
            policy_->on_evict(slot);
            --policy_lines_;
            if (index_.erase(meta_[slot].key)) note_line_left_locked(meta_[slot].file);
            meta_[slot].valid = false;
            ++evictions_;
            return 0;
        }
        // Every line is dirty or in use: let the flusher clean some, or wait for a reader to
        // finish.
        if (const int e = flush_error_.load(); e < 0) return e;
        flusher_wake_.notify_one();
        ++slot_waiters_;
        changed_.wait_for(lock, std::chrono::milliseconds(100));
        --slot_waiters_;
    }
}

// With mutex_ held: the slots set aside get their CLEAN records, as long as the journal takes
// them, and return to the free list; the next line in each waits for its record to be durable.
// While the journal fails this costs one failed append per slot taken.
void Engine::return_slots_set_aside_locked() {
    while (!set_aside_.empty()) {
        const Slot s = set_aside_.back();
        const std::int64_t record = journal_->append_clean(s);
        if (record < 0) return;
        set_aside_.pop_back();
        LineMeta& m = meta_[s];
        m.clean_record = record;
        m.in_free_list = true;
        free_.push_back(s);
    }
}

int Engine::sync_cache() {
    std::lock_guard lock(cache_sync_mutex_);
    const std::uint64_t target = cache_epoch_.load();
    if (cache_synced_epoch_.load() >= target) return 0;
    if (const int e = cache_->fdatasync(); e < 0) return e;
    cache_synced_epoch_ = target;
    return 0;
}

// How many lines, from `line` on, one home read fetches for a read (FillRun): `line` and the
// lines after it up to the read's last one that the cache does not hold, within the home file and
// TierConfig::io_run_bytes. The generation is taken first, so that a write racing the read is
// seen.
std::uint64_t Engine::fill_run_length(const HomeFile& file, std::uint64_t line,
                                      std::int64_t home_size, FillRun& run) {
    run.count = 0;
    run.generation = file.write_generation.load();
    const std::uint64_t home_lines =
        (static_cast<std::uint64_t>(home_size) + line_size_ - 1) / line_size_;
    const std::uint64_t last = std::min(
        {run.last_line, line + io_run_lines(config_.io_run_bytes, line_size_) - 1, home_lines - 1});
    std::uint64_t count = 1;
    std::lock_guard lock(mutex_);
    while (line + count <= last && !index_.contains(key_of(file.id, line + count)))
        ++count;
    return count;
}

// Reads the line into the freshly assigned slot (exclusively locked): from the prefetch buffer if
// it is there, else from the read's fill run if an earlier fill of the same read fetched it and no
// write has touched the file since, else from the home file (with the lines after it, FillRun);
// bytes beyond the home file are zeros.
int Engine::fill(HomeFile& file, std::uint64_t line, Slot slot, FillRun* run) {
    StagingBuffer buffer(*staging_);
    const auto start = static_cast<std::int64_t>(line * line_size_);
    std::int64_t home_size;
    {
        std::lock_guard lock(mutex_);
        home_size = file.home_size;
    }
    const char* source = buffer.data();
    std::size_t got = 0;
    ssize_t batch = not_queued;
    if (take_prefetched(key_of(file.id, line), buffer.data(), file.incarnation)) {
        got = line_size_;
        ++prefetch_hits_;
    } else if (start < home_size &&
               (batch = read_queued_batch(file, line, buffer.data())) != not_queued) {
        if (batch < 0) return static_cast<int>(batch);
        got = static_cast<std::size_t>(batch);
        ++fills_;
        ++fill_reads_;
    } else if (run != nullptr && run->holds(line) &&
               file.write_generation.load() == run->generation) {
        source = run->buffer.data() + (line - run->first) * line_size_;
        got = line_size_;
        ++fills_;
    } else if (start < home_size) {
        const std::uint64_t count =
            run != nullptr ? fill_run_length(file, line, home_size, *run) : 1;
        // Without the memory for the run, this line alone.
        const bool as_run = count > 1 && run->buffer.reserve(*staging_, count * line_size_);
        char* target = as_run ? run->buffer.data() : buffer.data();
        const std::size_t want = (as_run ? count : 1) * line_size_;
        const ssize_t n = file.io->pread(target, want, start);
        if (n < 0) return static_cast<int>(n);
        got = static_cast<std::size_t>(n);
        if (as_run) { // zeros beyond the home file, as for a single line below
            std::memset(target + got, 0, want - got);
            run->first = line;
            run->count = count;
            source = target;
        }
        ++fills_;
        ++fill_reads_;
    }
    if (source == buffer.data()) std::memset(buffer.data() + got, 0, line_size_ - got);
    const ssize_t w = cache_->pwrite(source, line_size_, static_cast<off_t>(slot * line_size_));
    if (w < 0) return static_cast<int>(w);
    ++cache_epoch_;
    return 0;
}

int Engine::acquire(HomeFile& file, std::uint64_t line, Mode mode, bool need_fill, Lease& lease,
                    FillRun* run) {
    const Key key = key_of(file.id, line);
    const Access access{key, 1, never_again};
    std::unique_lock lock(mutex_);
    for (;;) {
        // A truncate of the file is one step for this thread: before it or after it.
        if (truncating_locked(file.id)) {
            changed_.wait(lock, [&] { return !truncating_locked(file.id); });
            continue;
        }
        if (const std::uint32_t* found = index_.find(key)) {
            const Slot slot = *found;
            LineMeta& m = meta_[slot];
            ++m.pins;
            policy_->on_hit(slot, access);
            lock.unlock();
            if (mode == Mode::read)
                data_locks_[slot].lock_shared();
            else
                data_locks_[slot].lock();
            lock.lock();
            if (m.valid && m.key == key) {
                lease = Lease{slot, mode, true};
                return 0;
            }
            // Its fill failed, or a truncate dropped it, while we waited: start over.
            if (mode == Mode::read)
                data_locks_[slot].unlock_shared();
            else
                data_locks_[slot].unlock();
            unpin_locked(slot);
            continue;
        }
        if (writing_home_locked(key)) { // a fill now could read the bytes it is replacing
            changed_.wait(lock, [&] { return !writing_home_locked(key); });
            continue;
        }
        policy_->on_miss(access);
        Slot slot;
        if (const int e = take_slot(lock, slot); e < 0) return e;
        // Another thread brought the line in while we waited, a truncate of the file began, or
        // a write of the line past the cache.
        if (index_.contains(key) || truncating_locked(file.id) || writing_home_locked(key)) {
            meta_[slot].in_free_list = true;
            free_.push_back(slot);
            continue;
        }
        LineMeta& m = meta_[slot];
        const std::int64_t clean_record = m.clean_record;
        m = LineMeta{};
        m.in_free_list = false;
        m.key = key;
        m.file = file.id;
        m.pins = 1;
        index_.put(key, slot);
        ++resident_lines_[file.id];
        file.line_end = std::max(file.line_end, line + 1);
        policy_->on_insert(slot, access);
        ++policy_lines_;
        // Unpinned until now, so nobody holds or waits for its data lock: try_lock succeeds (and
        // keeps the order data lock -> mutex_ everywhere else free of a real inversion).
        if (!data_locks_[slot].try_lock()) {
            lock.unlock();
            data_locks_[slot].lock();
        } else {
            lock.unlock();
        }

        ++demand_in_flight_;
        // The slot's previous owner must be recorded clean on disk before other data lands in it.
        const int synced =
            clean_record > 0 ? journal_->sync_to(clean_record, [this] { return sync_cache(); }) : 0;
        const int e = synced == 0 && need_fill ? fill(file, line, slot, run) : synced;
        --demand_in_flight_;
        prefetch_wake_.notify_one();

        lock.lock();
        if (e < 0) {
            drop_line_locked(slot);
            // Not yet durable: whoever takes the slot next must still wait for it.
            if (synced < 0) m.clean_record = clean_record;
            data_locks_[slot].unlock();
            unpin_locked(slot);
            changed_.notify_all();
            return e;
        }
        m.valid = true;
        lock.unlock();
        if (mode == Mode::read) { // let other readers in
            data_locks_[slot].unlock();
            data_locks_[slot].lock_shared();
        }
        lease = Lease{slot, mode, false};
        return 0;
    }
}

void Engine::release(const Lease& lease) {
    if (lease.mode == Mode::read)
        data_locks_[lease.slot].unlock_shared();
    else
        data_locks_[lease.slot].unlock();
    std::lock_guard lock(mutex_);
    unpin_locked(lease.slot);
}

// With mutex_ held: the slot's line leaves the cache (its fill failed, a truncate removed it, or
// the cache file refused a write to it while it was clean). The slot returns to the free list with
// its last pin (unpin_locked); a thread that waited for its data lock finds it gone and starts
// over. The slot keeps its CLEAN record's sequence: the next line in it waits for that record.
void Engine::drop_line_locked(Slot slot) {
    LineMeta& m = meta_[slot];
    if (index_.erase(m.key)) note_line_left_locked(m.file);
    policy_->on_erase(slot);
    --policy_lines_;
    m.valid = false;
    m.key = 0;
}

// A slot that lost its line (drop_line_locked) returns to the free list with its last pin, or is
// set aside when the journal could not record that line clean (set_aside_).
void Engine::unpin_locked(Slot slot) {
    LineMeta& m = meta_[slot];
    if (--m.pins != 0) return;
    if (!m.valid && m.key == 0 && !m.in_free_list) {
        if (m.clean_record == Journal::never_appended) {
            set_aside_.push_back(slot);
        } else {
            m.in_free_list = true;
            free_.push_back(slot);
        }
    }
    if (slot_waiters_ > 0) changed_.notify_all();
}

} // namespace iosig::tier::detail
