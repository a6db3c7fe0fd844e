// The data path: line allocation, fills, reads, writes, truncation (engine_impl.hpp).
#include "engine_impl.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace iosig::tier::detail {

// With mutex_ held: a slot for a new line, pinned once and exclusively locked by the caller... the
// caller locks it. Evicts a clean, unpinned line when there is no free slot.
int Engine::take_slot(std::unique_lock<std::mutex>& lock, Slot& slot) {
    auto evictable = [&](Slot s) {
        const LineMeta& m = meta_[s];
        return m.valid && !m.in_free_list && m.pins == 0 && !m.dirty && !m.flushing;
    };
    for (;;) {
        if (stopping_ && abandoned_) return -EIO;
        if (!free_.empty()) {
            slot = free_.back();
            free_.pop_back();
            meta_[slot].in_free_list = false;
            return 0;
        }
        bool found = false;
        for (int attempt = 0; attempt < 8 && !found; ++attempt) {
            const Slot s = policy_->choose_victim(Access{});
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
            index_.erase(meta_[slot].key);
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

int Engine::sync_cache() {
    std::lock_guard lock(cache_sync_mutex_);
    const std::uint64_t target = cache_epoch_.load();
    if (cache_synced_epoch_.load() >= target) return 0;
    if (const int e = cache_->fdatasync(); e < 0) return e;
    cache_synced_epoch_ = target;
    return 0;
}

// Reads the line into the freshly assigned slot (exclusively locked): from the prefetch buffer if
// it is there, else from the home file; bytes beyond the home file are zeros.
int Engine::fill(HomeFile& file, std::uint64_t line, Slot slot) {
    StagingBuffer buffer(*staging_);
    const auto start = static_cast<std::int64_t>(line * line_size_);
    std::int64_t home_size;
    {
        std::lock_guard lock(mutex_);
        home_size = file.home_size;
    }
    std::size_t got = 0;
    if (take_prefetched(key_of(file.id, line), buffer.data(), file.id)) {
        got = line_size_;
        ++prefetch_hits_;
    } else if (start < home_size) {
        const ssize_t n = file.io->pread(buffer.data(), line_size_, start);
        if (n < 0) return static_cast<int>(n);
        got = static_cast<std::size_t>(n);
        ++fills_;
    }
    std::memset(buffer.data() + got, 0, line_size_ - got);
    const ssize_t w =
        cache_->pwrite(buffer.data(), line_size_, static_cast<off_t>(slot * line_size_));
    if (w < 0) return static_cast<int>(w);
    std::lock_guard lock(mutex_);
    meta_[slot].content_epoch = ++cache_epoch_;
    return 0;
}

int Engine::acquire(HomeFile& file, std::uint64_t line, Mode mode, bool need_fill, Lease& lease) {
    const Key key = key_of(file.id, line);
    const Access access{key, 1, never_again};
    std::unique_lock lock(mutex_);
    for (;;) {
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
        policy_->on_miss(access);
        Slot slot;
        if (const int e = take_slot(lock, slot); e < 0) return e;
        if (index_.contains(key)) { // another thread brought the line in while we waited
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
        m.line = line;
        m.pins = 1;
        index_.put(key, slot);
        policy_->on_insert(slot, access);
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
        int e =
            clean_record > 0 ? journal_->sync_to(clean_record, [this] { return sync_cache(); }) : 0;
        if (e == 0 && need_fill) e = fill(file, line, slot);
        --demand_in_flight_;
        prefetch_wake_.notify_one();

        lock.lock();
        if (e < 0) {
            index_.erase(key);
            policy_->on_erase(slot);
            m.valid = false;
            m.key = 0;
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

// A slot that lost its line (failed fill, truncate) returns to the free list with its last pin.
void Engine::unpin_locked(Slot slot) {
    LineMeta& m = meta_[slot];
    if (--m.pins != 0) return;
    if (!m.valid && m.key == 0 && !m.in_free_list) {
        m.in_free_list = true;
        free_.push_back(slot);
    }
    if (slot_waiters_ > 0) changed_.notify_all();
}

// With the line's data lock held exclusively, after its data was written into the cache file.
int Engine::mark_dirty(HomeFile& file, Slot slot, std::int64_t new_size) {
    std::int64_t record = 0;
    {
        std::lock_guard lock(mutex_);
        LineMeta& m = meta_[slot];
        ++m.generation;
        const bool grew = new_size > file.size;
        if (grew) file.size = new_size;
        if (!m.dirty) {
            m.dirty = true;
            ++dirty_count_;
            m.dirty_token = ++dirty_tokens_;
            m.dirty_since = now();
            dirty_fifo_.emplace_back(slot, m.dirty_token);
            record = journal_->append_dirty(slot, file.id, m.line, file.size);
        } else if (grew) {
            record = journal_->append_size(file.id, file.size);
        }
    }
    if (record < 0) return static_cast<int>(record);
    if (record == 0) return 0;
    // Group commit. A DIRTY record must not be durable before the line's first data in this slot:
    // syncing the cache file first guarantees that recovery never writes another line's bytes home.
    ++journal_syncs_;
    return journal_->sync_to(record, [this] { return sync_cache(); });
}

bool Engine::bypass(Handle& handle, off_t offset, std::size_t count) {
    std::lock_guard lock(handle.mutex);
    if (offset == handle.stream_end)
        handle.stream_bytes += count;
    else
        handle.stream_bytes = count;
    handle.stream_end = offset + static_cast<off_t>(count);
    return config_.sequential_cutoff > 0 && handle.stream_bytes > config_.sequential_cutoff;
}

ssize_t Engine::pread(int handle, void* buffer, std::size_t count, off_t offset) {
    Handle* h = nullptr;
    HomeFile* file = file_of(handle, &h);
    if (file == nullptr || !h->readable) return -EBADF;
    if (offset < 0) return -EINVAL;
    if (abandoned_) return -EIO;
    std::int64_t size;
    {
        std::lock_guard lock(mutex_);
        size = file->size;
    }
    if (count == 0 || offset >= size) return 0;
    count = static_cast<std::size_t>(
        std::min<std::int64_t>(static_cast<std::int64_t>(count), size - offset));
    const bool direct = bypass(*h, offset, count);
    char* out = static_cast<char*>(buffer);
    const off_t end = offset + static_cast<off_t>(count);
    for (off_t pos = offset; pos < end;) {
        const std::uint64_t line = static_cast<std::uint64_t>(pos) / line_size_;
        const std::size_t in = static_cast<std::size_t>(pos) % line_size_;
        const std::size_t chunk =
            std::min<std::size_t>(line_size_ - in, static_cast<std::size_t>(end - pos));
        bool resident;
        {
            std::lock_guard lock(mutex_);
            resident = index_.contains(key_of(file->id, line));
        }
        Lease lease;
        int e = -EAGAIN;
        if (!direct || resident) e = acquire(*file, line, Mode::read, true, lease);
        if (e < 0) {
            // Bypass, or the cache could not take the line: read as the program would have.
            const ssize_t n = file->io->pread(out + (pos - offset), chunk, pos);
            if (n < 0) return n;
            std::memset(out + (pos - offset) + n, 0, chunk - static_cast<std::size_t>(n));
            if (direct) bypassed_ += chunk;
        } else {
            const ssize_t n = cache_->pread(out + (pos - offset), chunk,
                                            static_cast<off_t>(lease.slot * line_size_ + in));
            release(lease);
            if (n < 0) return n;
            if (lease.hit) {
                ++read_hits_;
            } else {
                ++read_misses_;
                if (h->prefetcher) request_prefetch(*h, *file, line);
            }
        }
        pos += static_cast<off_t>(chunk);
    }
    return static_cast<ssize_t>(count);
}

ssize_t Engine::write_range(Handle& h, HomeFile& file, const char* in_buffer, std::size_t count,
                            off_t offset) {
    const bool direct = bypass(h, offset, count);
    const off_t end = offset + static_cast<off_t>(count);
    for (off_t pos = offset; pos < end;) {
        const std::uint64_t line = static_cast<std::uint64_t>(pos) / line_size_;
        const std::size_t in = static_cast<std::size_t>(pos) % line_size_;
        const std::size_t chunk =
            std::min<std::size_t>(line_size_ - in, static_cast<std::size_t>(end - pos));
        const Key key = key_of(file.id, line);
        const char* data = in_buffer + (pos - offset);
        bool resident;
        {
            std::lock_guard lock(mutex_);
            resident = index_.contains(key);
        }
        invalidate_prefetched(key);
        ++file.write_generation;
        Lease lease;
        int e = -EAGAIN;
        if (!direct || resident)
            e = acquire(file, line, Mode::write, in != 0 || chunk != line_size_, lease);
        if (e < 0) {
            // Bypass, or no room in the cache: write home as the program would have.
            const ssize_t n = file.io->pwrite(data, chunk, pos);
            if (n < 0) return n;
            std::lock_guard lock(mutex_);
            file.home_size =
                std::max<std::int64_t>(file.home_size, pos + static_cast<off_t>(chunk));
            file.size = std::max<std::int64_t>(file.size, file.home_size);
            if (direct) bypassed_ += chunk;
        } else {
            const ssize_t n =
                cache_->pwrite(data, chunk, static_cast<off_t>(lease.slot * line_size_ + in));
            if (n >= 0 && !lease.hit) {
                std::lock_guard lock(mutex_);
                meta_[lease.slot].content_epoch =
                    ++cache_epoch_; // the line's first data in this slot
            }
            const int marked = n < 0
                                   ? static_cast<int>(n)
                                   : mark_dirty(file, lease.slot, pos + static_cast<off_t>(chunk));
            release(lease);
            if (marked < 0) return marked;
            ++(lease.hit ? write_hits_ : write_misses_);
        }
        pos += static_cast<off_t>(chunk);
    }
    wait_for_dirty_room();
    return static_cast<ssize_t>(count);
}

ssize_t Engine::pwrite(int handle, const void* buffer, std::size_t count, off_t offset) {
    Handle* h = nullptr;
    HomeFile* file = file_of(handle, &h);
    if (file == nullptr || !h->writable) return -EBADF;
    if (offset < 0) return -EINVAL;
    if (abandoned_) return -EIO;
    if (count == 0) return 0;
    return write_range(*h, *file, static_cast<const char*>(buffer), count, offset);
}

ssize_t Engine::append(int handle, const void* buffer, std::size_t count) {
    Handle* h = nullptr;
    HomeFile* file = file_of(handle, &h);
    if (file == nullptr || !h->writable) return -EBADF;
    if (abandoned_) return -EIO;
    std::lock_guard serial(file->append_mutex);
    off_t offset;
    {
        std::lock_guard lock(mutex_);
        offset = file->size;
    }
    return write_range(*h, *file, static_cast<const char*>(buffer), count, offset);
}

// Writers wait while too many lines are dirty (the flusher makes room), unless write-back is
// failing.
void Engine::wait_for_dirty_room() {
    std::unique_lock lock(mutex_);
    while (dirty_count_ > max_dirty_ && !stopping_ && flush_error_.load() == 0) {
        flusher_wake_.notify_one();
        ++slot_waiters_;
        changed_.wait_for(lock, std::chrono::milliseconds(100));
        --slot_waiters_;
    }
}

int Engine::ftruncate(int handle, off_t length) {
    Handle* h = nullptr;
    HomeFile* file = file_of(handle, &h);
    if (file == nullptr || !h->writable) return -EBADF;
    if (length < 0) return -EINVAL;
    if (abandoned_) return -EIO;
    // Pin and lock every cached line of the file at or beyond the new end.
    std::vector<Slot> slots;
    {
        std::lock_guard lock(mutex_);
        for (Slot s = 0; s < lines_; ++s) {
            const LineMeta& m = meta_[s];
            if (m.valid && m.file == file->id &&
                static_cast<std::int64_t>((m.line + 1) * line_size_) > length) {
                ++meta_[s].pins;
                slots.push_back(s);
            }
        }
    }
    for (const Slot s : slots)
        data_locks_[s].lock();
    std::int64_t record;
    std::vector<std::pair<Slot, std::size_t>> partial;
    {
        std::lock_guard lock(mutex_);
        for (const Slot s : slots) {
            LineMeta& m = meta_[s];
            if (!m.valid || m.file != file->id) continue;
            const auto start = static_cast<std::int64_t>(m.line * line_size_);
            if (start < length) {
                partial.emplace_back(s, static_cast<std::size_t>(length - start));
                continue;
            }
            if (m.dirty) {
                m.dirty = false;
                --dirty_count_;
                m.clean_record = journal_->append_clean(s);
            }
            index_.erase(m.key);
            policy_->on_erase(s);
            m.valid = false;
            m.key = 0;
        }
        file->size = length;
        record = journal_->append_truncate(file->id, length);
    }
    int e = record < 0 ? static_cast<int>(record) : 0;
    // The bytes beyond the new end of the partial line must read as zeros if the file grows again.
    std::vector<char> zeros(line_size_, 0);
    for (const auto& [s, keep] : partial) {
        if (e < 0) break;
        const ssize_t n = cache_->pwrite(zeros.data(), line_size_ - keep,
                                         static_cast<off_t>(s * line_size_ + keep));
        if (n < 0) e = static_cast<int>(n);
    }
    if (e == 0) e = journal_->sync_to(record, [this] { return sync_cache(); });
    if (e == 0) e = file->io->ftruncate(length);
    {
        std::lock_guard lock(mutex_);
        if (e == 0) file->home_size = length;
        for (const Slot s : slots) {
            data_locks_[s].unlock();
            unpin_locked(s);
        }
        changed_.notify_all();
    }
    ++file->write_generation;
    drop_prefetched(file->id);
    return e;
}

} // namespace iosig::tier::detail
