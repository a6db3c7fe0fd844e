// The prefetch buffer and its worker (engine_impl.hpp). Prefetched lines wait in memory, outside
// the cache file, until a demand miss promotes one into the cache or they expire. The worker reads
// home files only while no demand fill is in flight and only into free buffer entries.
#include "engine_impl.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <vector>

namespace iosig::tier::detail {

void Engine::request_prefetch(Handle& handle, HomeFile& file, std::uint64_t line) {
    std::vector<Key> candidates;
    {
        std::lock_guard lock(handle.mutex);
        handle.prefetcher->on_miss_stream(line, candidates);
    }
    if (candidates.empty()) return;
    std::vector<Key> rejected;
    {
        std::lock_guard lock(prefetch_mutex_);
        const std::uint64_t batch = ++prefetch_batches_;
        // Queued lines count against the buffer they are headed for: a line admitted here finds
        // room when the worker reads it, and one without room goes back to its stream at once.
        // A line already cached, already in the buffer or past the end of the file is not read,
        // so it takes no room (as in the simulator); the stream's frontier moves past it.
        for (const Key c : candidates) {
            if (!needs_reading(file, c)) continue;
            if (prefetch_queue_.size() + prefetched_.size() + prefetch_in_flight_ < prefetch_lines_)
                prefetch_queue_.push_back(PrefetchRequest{file.id, c, batch});
            else
                rejected.push_back(c);
        }
    }
    if (!rejected.empty()) {
        std::lock_guard lock(handle.mutex);
        for (const Key c : rejected)
            handle.prefetcher->on_rejected(c);
    }
    prefetch_wake_.notify_one();
}

bool Engine::take_prefetched(Key key, char* destination, std::uint64_t incarnation) {
    if (!prefetch_pool_) return false;
    std::unique_lock lock(prefetch_mutex_);
    ++demand_misses_;
    // The worker is reading this very line: wait for it. Reading it here too would cost the home
    // device a second IO for the same bytes, and the program's next miss would queue behind both
    // (a sequential scan on the lab's throttled hdd took 2.80 s with the stream prefetcher and
    // 2.49 s without it, every prefetch racing the demand read of the same line).
    prefetch_done_.wait(lock,
                        [&] { return !prefetch_reading_ || !prefetch_reading_->covers(key); });
    const auto it = prefetched_.find(key);
    if (it == prefetched_.end()) return false;
    // Read from a forgotten file whose id this one has now: not this file's bytes.
    const bool ours = it->second.incarnation == incarnation;
    if (ours) std::memcpy(destination, it->second.data, line_size_);
    prefetch_pool_->release(it->second.data);
    prefetched_.erase(it);
    return ours;
}

// A demand miss on a line the prefetcher has proposed but not read yet reads the line's batch
// itself, in one IO, and leaves the rest of it in the prefetch buffer. Reading the line alone and
// then the rest cost two IOs a batch: on the lab's throttled hdd a prefetched scan took 1.30 s
// where one IO a batch takes 0.6 s. Returns the bytes of `line` read (zeros after them are the
// caller's), a negative errno, or not_queued when the line is not waiting in the queue.
ssize_t Engine::read_queued_batch(HomeFile& file, std::uint64_t line, char* destination) {
    if (!prefetch_pool_) return not_queued;
    std::unique_lock lock(prefetch_mutex_);
    auto it =
        std::find_if(prefetch_queue_.begin(), prefetch_queue_.end(),
                     [&](const PrefetchRequest& r) { return r.file == file.id && r.line == line; });
    if (it == prefetch_queue_.end()) return not_queued;
    const PrefetchRequest first = *it;
    it = prefetch_queue_.erase(it);
    // The demand's own line is not a prefetch: it takes no room in the buffer.
    const std::uint64_t count = 1 + take_adjacent(it, first, file, 0);
    RunBuffer run; // without the memory, the line alone (the rest of its batch is dropped)
    if (count == 1 || !run.reserve(*prefetch_pool_, count * line_size_)) return not_queued;
    std::vector<char*> rest(count - 1);
    for (char*& data : rest)
        data = prefetch_pool_->acquire();
    prefetch_in_flight_ += rest.size();
    const std::uint64_t generation = file.write_generation.load();
    lock.unlock();
    const ssize_t n =
        file.io->pread(run.data(), count * line_size_, static_cast<off_t>(line * line_size_));
    const auto bytes_of = [&](std::uint64_t i) {
        return static_cast<std::size_t>(std::clamp<ssize_t>(
            n - static_cast<ssize_t>(i * line_size_), 0, static_cast<ssize_t>(line_size_)));
    };
    if (n >= 0) {
        std::memcpy(destination, run.data(), bytes_of(0));
        for (std::uint64_t i = 1; i < count; ++i) {
            std::memcpy(rest[i - 1], run.data() + i * line_size_, bytes_of(i));
            std::memset(rest[i - 1] + bytes_of(i), 0, line_size_ - bytes_of(i));
        }
    }
    lock.lock();
    prefetch_in_flight_ -= rest.size();
    const bool stale = file.write_generation.load() != generation;
    for (std::uint64_t i = 1; i < count; ++i) {
        const Key key = key_of(file.id, line + i);
        if (n < 0 || stale || prefetched_.contains(key)) {
            prefetch_pool_->release(rest[i - 1]);
        } else {
            prefetched_[key] = Prefetched{rest[i - 1], demand_misses_, file.incarnation};
            ++prefetches_;
        }
    }
    prefetch_done_.notify_all();
    return n < 0 ? n : static_cast<ssize_t>(bytes_of(0));
}

void Engine::invalidate_prefetched(Key key) {
    if (!prefetch_pool_) return;
    std::lock_guard lock(prefetch_mutex_);
    if (const auto it = prefetched_.find(key); it != prefetched_.end()) {
        prefetch_pool_->release(it->second.data);
        prefetched_.erase(it);
    }
}

void Engine::drop_prefetched(std::uint32_t file) {
    if (!prefetch_pool_) return;
    std::lock_guard lock(prefetch_mutex_);
    std::erase_if(prefetched_, [&](const auto& entry) {
        if ((entry.first >> line_bits) != file) return false;
        prefetch_pool_->release(entry.second.data);
        return true;
    });
}

// Whether `line` of `file` is worth reading now, beside `pending` lines already taken for the
// run: room in the buffer, and needs_reading. Holds prefetch_mutex_.
bool Engine::worth_prefetching(const HomeFile& file, std::uint64_t line, std::uint64_t pending) {
    if (prefetched_.size() + prefetch_in_flight_ + pending >= prefetch_lines_) return false;
    return needs_reading(file, line);
}

// Whether `line` of `file` is neither in the prefetch buffer nor cached, and inside the file.
// Holds prefetch_mutex_.
bool Engine::needs_reading(const HomeFile& file, std::uint64_t line) {
    if (line >= (std::uint64_t{1} << line_bits)) return false; // past cacheable_end()
    const Key key = key_of(file.id, line);
    if (prefetched_.contains(key)) return false;
    std::lock_guard table(mutex_);
    return !index_.contains(key) && static_cast<std::int64_t>(line * line_size_) < file.home_size;
}

// Takes out of the queue, from `it` on, the lines proposed in `first`'s batch right after it
// (first.line + 1, + 2, ...) while they are worth reading, up to one home IO's worth of lines with
// `first`; `pending` lines are already taken for the buffer. Returns how many. Holds
// prefetch_mutex_.
std::uint64_t Engine::take_adjacent(std::deque<PrefetchRequest>::iterator it,
                                    const PrefetchRequest& first, const HomeFile& file,
                                    std::uint64_t pending) {
    const std::uint64_t most = io_run_lines(config_.io_run_bytes, line_size_);
    std::uint64_t taken = 0;
    while (1 + taken < most && it != prefetch_queue_.end() && it->batch == first.batch &&
           it->file == first.file && it->line == first.line + 1 + taken &&
           worth_prefetching(file, it->line, pending + taken)) {
        it = prefetch_queue_.erase(it);
        ++taken;
    }
    return taken;
}

void Engine::prefetch_loop() {
    const std::uint64_t lifetime = 8 * prefetch_lines_;
    std::vector<char*> lines;
    std::unique_lock lock(prefetch_mutex_);
    while (!prefetch_stopping_) {
        prefetch_wake_.wait_for(lock, std::chrono::milliseconds(50));
        while (!prefetch_stopping_ && !prefetch_queue_.empty()) {
            if (demand_in_flight_.load() > 0) { // demand misses first
                prefetch_wake_.wait_for(lock, std::chrono::milliseconds(1));
                continue;
            }
            std::erase_if(prefetched_, [&](const auto& entry) {
                if (entry.second.issued + lifetime >= demand_misses_) return false;
                prefetch_pool_->release(entry.second.data);
                return true;
            });
            const PrefetchRequest first = prefetch_queue_.front();
            prefetch_queue_.pop_front();
            std::shared_ptr<HomeFile> held; // the file may be forgotten while it is read
            {
                std::shared_lock files(files_mutex_);
                if (const auto it = files_.find(first.file); it != files_.end()) held = it->second;
            }
            HomeFile* const file = held.get();
            if (file == nullptr || !worth_prefetching(*file, first.line, 0)) continue;
            // Lines queued before the file's last close may find its descriptors released.
            std::optional<HomeIo::Use> io;
            io.emplace(file->io);
            if (!*io) continue;
            // The adjacent lines proposed with it follow it in the queue: one read for all.
            const std::uint64_t count = 1 + take_adjacent(prefetch_queue_.begin(), first, *file, 1);
            const std::uint64_t generation = file->write_generation.load();
            lines.resize(count);
            for (char*& data : lines)
                data = prefetch_pool_->acquire();
            prefetch_in_flight_ += count;
            prefetch_reading_ = ReadingRun{key_of(first.file, first.line), count};
            lock.unlock();
            const auto offset = static_cast<off_t>(first.line * line_size_);
            std::vector<ssize_t> got(count, -1); // bytes of each line read (-1: an error)
            std::uint64_t reads = 0;
            if (count > 1 && prefetch_run_buffer_.reserve(*prefetch_pool_, count * line_size_)) {
                const ssize_t n =
                    (*io)->pread(prefetch_run_buffer_.data(), count * line_size_, offset);
                ++reads;
                for (std::uint64_t i = 0; i < count && n >= 0; ++i) {
                    const auto start = static_cast<ssize_t>(i * line_size_);
                    got[i] = std::clamp<ssize_t>(n - start, 0, static_cast<ssize_t>(line_size_));
                    std::memcpy(lines[i], prefetch_run_buffer_.data() + start,
                                static_cast<std::size_t>(got[i]));
                }
            } else { // one line, or no memory for the run: a read per line
                for (std::uint64_t i = 0; i < count; ++i, ++reads)
                    got[i] = (*io)->pread(lines[i], line_size_,
                                          offset + static_cast<off_t>(i * line_size_));
            }
            for (std::uint64_t i = 0; i < count; ++i)
                if (got[i] >= 0)
                    std::memset(lines[i] + got[i], 0,
                                line_size_ - static_cast<std::size_t>(got[i]));
            lock.lock();
            prefetch_in_flight_ -= count;
            prefetch_reading_.reset();
            prefetch_reads_ += reads;
            // A write to the file since the read began may have made them stale.
            const bool stale = file->write_generation.load() != generation;
            for (std::uint64_t i = 0; i < count; ++i) {
                const Key key = key_of(first.file, first.line + i);
                if (got[i] < 0 || stale || prefetched_.contains(key)) {
                    prefetch_pool_->release(lines[i]);
                } else {
                    prefetched_[key] = Prefetched{lines[i], demand_misses_, file->incarnation};
                    ++prefetches_;
                }
            }
            prefetch_done_.notify_all(); // a demand miss may wait for these lines
        }
    }
}

} // namespace iosig::tier::detail
