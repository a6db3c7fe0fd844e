// The data path: reads, writes, appends, the sequential bypass (engine_impl.hpp; truncation:
// engine_truncate.cpp).
#include "engine_impl.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>

namespace iosig::tier::detail {

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
    if (offset < 0) return -EINVAL; // before the handle, as pread(2) and pwrite(2) check
    Handle* h = nullptr;
    HomeFile* file = file_of(handle, &h);
    if (file == nullptr || !h->readable) return -EBADF;
    if (abandoned_) return -EIO;
    if (count == 0) return 0;
    // The bytes asked for, whether or not the file reaches them now: an append or a truncate
    // there is wholly before or after this read.
    const RangeLock::Hold hold(
        file->ranges, offset,
        offset + static_cast<off_t>(std::min<std::size_t>(
                     count, static_cast<std::size_t>(std::numeric_limits<off_t>::max() - offset))),
        false);
    std::int64_t size;
    {
        std::lock_guard lock(mutex_);
        size = file->size;
    }
    if (offset >= size) return 0;
    if (offset >= cacheable_end()) return -EFBIG;
    const std::int64_t available = std::min<std::int64_t>(size, cacheable_end()) - offset;
    count = static_cast<std::size_t>(
        std::min<std::uint64_t>(count, static_cast<std::uint64_t>(available)));
    const bool direct = bypass(*h, offset, count);
    char* out = static_cast<char*>(buffer);
    const off_t end = offset + static_cast<off_t>(count);
    FillRun run;
    run.last_line = static_cast<std::uint64_t>(end - 1) / line_size_;
    // Reads `bytes` at `at` from the home file; zeros beyond the engine's idea of its size, which
    // a truncate lowers even when cutting the file failed.
    const auto read_home = [&](off_t at, std::size_t bytes) {
        std::int64_t home_size;
        {
            std::lock_guard lock(mutex_);
            home_size = file->home_size;
        }
        const auto limit = static_cast<std::size_t>(
            std::clamp<std::int64_t>(home_size - at, 0, static_cast<std::int64_t>(bytes)));
        char* to = out + (at - offset);
        const ssize_t n = limit > 0 ? file->io->pread(to, limit, at, h->past_cache) : 0;
        if (n >= 0) std::memset(to + n, 0, bytes - static_cast<std::size_t>(n));
        return n;
    };
    // As read(2): the bytes read before an error, or the error when there are none.
    off_t pos = offset;
    const auto failed = [&](ssize_t error) { return pos > offset ? pos - offset : error; };
    while (pos < end) {
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
        if (!direct || resident) e = acquire(*file, line, Mode::read, true, lease, &run);
        if (e < 0) {
            // Bypass, or the cache could not take the line: read as the program would have,
            // through the page cache unless it opened the file O_DIRECT; the page cache's
            // readahead serves a sequential stream in large IOs (O_DIRECT made every 4 KiB read of
            // a bypassed scan its own IO: 200 reads a second on the lab's hdd instead of its
            // 20 MiB/s).
            if (const ssize_t n = read_home(pos, chunk); n < 0) return failed(n);
            if (direct) bypassed_ += chunk;
        } else {
            ssize_t n = cache_->pread(out + (pos - offset), chunk,
                                      static_cast<off_t>(lease.slot * line_size_ + in));
            // The cache file cannot read it: a clean line holds the home file's bytes (read there
            // under the lease, so that no write changes them meanwhile); a dirty line's bytes are
            // only in the cache file.
            if (n < 0 && line_clean(lease.slot)) n = read_home(pos, chunk);
            release(lease);
            if (n < 0) return failed(n);
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

bool Engine::line_clean(Slot slot) {
    std::lock_guard lock(mutex_);
    return !meta_[slot].dirty;
}

ssize_t Engine::write_range(Handle& h, HomeFile& file, const char* in_buffer, std::size_t count,
                            off_t offset) {
    const off_t end = offset + static_cast<off_t>(count);
    const RangeLock::Hold hold(file.ranges, offset, end, true);
    // A truncate that failed after the caller's finish_cut: nothing may go home beyond its length
    // until the home file is cut there.
    if (file.reaches_beyond_unfinished_cut(end)) return -EIO;
    const bool direct = bypass(h, offset, count);
    // As write(2): the bytes written before an error, or the error when there are none.
    off_t pos = offset;
    const auto failed = [&](ssize_t error) { return pos > offset ? pos - offset : error; };
    while (pos < end) {
        const std::uint64_t line = static_cast<std::uint64_t>(pos) / line_size_;
        const std::size_t in = static_cast<std::size_t>(pos) % line_size_;
        const std::size_t chunk =
            std::min<std::size_t>(line_size_ - in, static_cast<std::size_t>(end - pos));
        const Key key = key_of(file.id, line);
        const char* data = in_buffer + (pos - offset);
        invalidate_prefetched(key);
        ++file.write_generation;
        // A write home past the cache (the bypass, or a line the cache refused) is listed in
        // home_writes_ in the same step as the line is found not cached: until it is home no fill
        // may bring the line in, as it could read the old bytes and keep them after this write
        // has returned (acquire waits). (A truncate of these bytes waits for the range hold.)
        Lease lease;
        bool past_cache = false;
        for (bool refused = false;;) {
            {
                std::lock_guard lock(mutex_);
                if ((direct || refused) && !index_.contains(key)) {
                    home_writes_.push_back(key);
                    past_cache = true;
                    break;
                }
            }
            if (acquire(file, line, Mode::write, in != 0 || chunk != line_size_, lease) == 0) break;
            refused = true; // home, unless another thread has cached the line meanwhile
        }
        if (!past_cache) {
            const int e = write_leased_line(file, lease, data, chunk, pos);
            if (e < 0) return failed(e);
            past_cache = e == refused_by_cache;
        }
        if (past_cache) {
            // Bypass, or no room in the cache: write home as the program would have, through the
            // page cache unless it opened the file O_DIRECT; there the kernel merges a sequential
            // stream into large writes (fsync syncs the home file, so durability is the same).
            const ssize_t n = file.io->pwrite(data, chunk, pos, h.past_cache);
            file.home_unsynced = true;
            // What was read from home while the write was under way is stale: fill runs and
            // prefetches see the generation move, and a copy already prefetched is dropped.
            ++file.write_generation;
            invalidate_prefetched(key);
            file.journal_sync_at_fsync = true;
            std::lock_guard lock(mutex_);
            unlist_home_write_locked(key);
            if (n < 0) return failed(n);
            file.home_size =
                std::max<std::int64_t>(file.home_size, pos + static_cast<off_t>(chunk));
            file.size = std::max<std::int64_t>(file.size, file.home_size);
            if (direct)
                bypassed_ += chunk;
            else
                ++cache_refusals_;
        }
        pos += static_cast<off_t>(chunk);
    }
    wait_for_dirty_room();
    return static_cast<ssize_t>(count);
}

// Writes `chunk` bytes of a write at `pos` into the leased line and releases it: 0, -errno, or
// refused_by_cache when the cache file failed and the line was dropped (refuse_clean_line), so that
// the caller writes the bytes home instead.
int Engine::write_leased_line(HomeFile& file, const Lease& lease, const char* data,
                              std::size_t chunk, off_t pos) {
    const std::size_t in = static_cast<std::size_t>(pos) % line_size_;
    const ssize_t n = cache_->pwrite(data, chunk, static_cast<off_t>(lease.slot * line_size_ + in));
    if (n < 0 && refuse_clean_line(lease.slot)) {
        release(lease);
        return refused_by_cache;
    }
    if (n >= 0 && !lease.hit) ++cache_epoch_; // the line's first data in this slot
    const ByteRange written{static_cast<std::uint32_t>(in), static_cast<std::uint32_t>(in + chunk)};
    int marked = n < 0 ? static_cast<int>(n)
                       : mark_dirty(file, lease.slot, pos + static_cast<off_t>(chunk), written);
    // The journal cannot record the line dirty: the slot now holds bytes the home file lacks
    // under no record, so the line leaves the cache and the write goes home (the line was clean
    // and is not being written back, or mark_dirty would have needed no record).
    if (marked == unrecorded_dirty) {
        marked = refuse_clean_line(lease.slot) ? refused_by_cache : -EIO;
        release(lease);
        return marked;
    }
    // The journal cannot record the size the write grew the file to: recovery would write the
    // line home only up to the old size, and a crash of the process would lose the bytes beyond
    // it. They go home too, under the lease (no write-back reads the slot meanwhile; one that read
    // it before leaves the line dirty, as the write moved its generation).
    if (marked == unrecorded_size) {
        const ssize_t home = file.io->pwrite(data, chunk, pos, File::Path::page_cache);
        file.home_unsynced = true;
        if (home >= 0) {
            std::lock_guard lock(mutex_);
            file.home_size =
                std::max<std::int64_t>(file.home_size, pos + static_cast<off_t>(chunk));
        }
        marked = home < 0 ? static_cast<int>(home) : 0;
    }
    release(lease);
    if (marked == 0) ++(lease.hit ? write_hits_ : write_misses_);
    return marked;
}

// The cache file failed to take a write into `slot` (leased exclusively). If the line holds
// nothing the home file lacks (clean: filled from home, or just taken for a whole-line write),
// it is dropped and listed as written home past the cache, so that the write goes there, as the
// program's own would have, and no read sees what the failed write left in the slot (a whole-line
// write's slot still held the previous line's bytes). A dirty line's earlier writes are only in
// the cache file: it stays, and the write fails.
bool Engine::refuse_clean_line(Slot slot) {
    std::lock_guard lock(mutex_);
    const Key key = meta_[slot].key;
    if (!drop_clean_line_locked(slot)) return false;
    home_writes_.push_back(key);
    return true;
}

// With mutex_ held: drops the slot's line unless it holds bytes the home file lacks.
bool Engine::drop_clean_line_locked(Slot slot) {
    const LineMeta& m = meta_[slot];
    if (m.dirty || m.flushing) return false;
    drop_line_locked(slot);
    return true;
}

// With mutex_ held: a write past the cache listed in home_writes_ is done (or failed); fills of
// its line may start.
void Engine::unlist_home_write_locked(Key key) {
    home_writes_.erase(std::find(home_writes_.begin(), home_writes_.end(), key));
    changed_.notify_all();
}

ssize_t Engine::pwrite(int handle, const void* buffer, std::size_t count, off_t offset) {
    if (offset < 0) return -EINVAL; // before the handle, as pread(2) and pwrite(2) check
    Handle* h = nullptr;
    HomeFile* file = file_of(handle, &h);
    if (file == nullptr || !h->writable) return -EBADF;
    if (abandoned_) return -EIO;
    if (count == 0) return 0;
    if (offset >= cacheable_end()) return -EFBIG;
    count = std::min<std::size_t>(count, static_cast<std::size_t>(cacheable_end() - offset));
    if (file->reaches_beyond_unfinished_cut(offset + static_cast<off_t>(count)))
        if (const int e = finish_cut(*file); e < 0) return e;
    return write_range(*h, *file, static_cast<const char*>(buffer), count, offset);
}

ssize_t Engine::append(int handle, const void* buffer, std::size_t count) {
    Handle* h = nullptr;
    HomeFile* file = file_of(handle, &h);
    if (file == nullptr || !h->writable) return -EBADF;
    if (abandoned_) return -EIO;
    std::lock_guard serial(file->append_mutex);
    if (const int e = finish_cut_locked(*file); e < 0) return e;
    off_t offset;
    {
        std::lock_guard lock(mutex_);
        offset = file->size;
    }
    if (count == 0) return 0;
    if (offset >= cacheable_end()) return -EFBIG;
    count = std::min<std::size_t>(count, static_cast<std::size_t>(cacheable_end() - offset));
    return write_range(*h, *file, static_cast<const char*>(buffer), count, offset);
}

// Writers wait while too many lines are dirty (the flusher makes room), unless write-back is
// failing.
void Engine::wait_for_dirty_room() {
    std::unique_lock lock(mutex_);
    if (dirty_count_ <= max_dirty_) return;
    const auto start = std::chrono::steady_clock::now();
    while (dirty_count_ > max_dirty_ && !stopping_ && flush_error_.load() == 0) {
        flusher_wake_.notify_one();
        ++slot_waiters_;
        changed_.wait_for(lock, std::chrono::milliseconds(100));
        --slot_waiters_;
    }
    writer_wait_ns_ +=
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                       std::chrono::steady_clock::now() - start)
                                       .count());
}

} // namespace iosig::tier::detail
