// The prefetch buffer and its worker (engine_impl.hpp). Prefetched lines wait in memory, outside
// the cache file, until a demand miss promotes one into the cache or they expire. The worker reads
// home files only while no demand fill is in flight and only into free buffer entries.
#include "engine_impl.hpp"

#include <chrono>
#include <cstring>

namespace iosig::tier::detail {

void Engine::request_prefetch(Handle& handle, HomeFile& file, std::uint64_t line) {
    std::vector<Key> candidates;
    {
        std::lock_guard lock(handle.mutex);
        handle.prefetcher->on_miss_stream(line, candidates);
    }
    if (candidates.empty()) return;
    {
        std::lock_guard lock(prefetch_mutex_);
        for (const Key c : candidates)
            if (prefetch_queue_.size() < prefetch_lines_) prefetch_queue_.emplace_back(file.id, c);
    }
    prefetch_wake_.notify_one();
}

bool Engine::take_prefetched(Key key, char* destination, std::uint32_t) {
    if (!prefetch_pool_) return false;
    std::unique_lock lock(prefetch_mutex_);
    ++demand_misses_;
    // The worker is reading this very line: wait for it. Reading it here too would cost the home
    // device a second IO for the same bytes, and the program's next miss would queue behind both
    // (a sequential scan on the lab's throttled hdd took 2.80 s with the stream prefetcher and
    // 2.49 s without it, every prefetch racing the demand read of the same line).
    prefetch_done_.wait(lock, [&] { return prefetch_reading_ != key; });
    const auto it = prefetched_.find(key);
    if (it == prefetched_.end()) return false;
    std::memcpy(destination, it->second.data, line_size_);
    prefetch_pool_->release(it->second.data);
    prefetched_.erase(it);
    return true;
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

void Engine::prefetch_loop() {
    const std::uint64_t lifetime = 8 * prefetch_lines_;
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
            const auto [file_id, line] = prefetch_queue_.front();
            prefetch_queue_.pop_front();
            if (prefetched_.size() + prefetch_in_flight_ >= prefetch_lines_)
                continue; // no room: skip
            const Key key = key_of(file_id, line);
            if (prefetched_.contains(key)) continue;
            HomeFile* file = nullptr;
            {
                std::shared_lock files(files_mutex_);
                if (const auto it = files_.find(file_id); it != files_.end())
                    file = it->second.get();
            }
            if (file == nullptr) continue;
            bool skip;
            {
                std::lock_guard table(mutex_);
                skip = index_.contains(key) ||
                       static_cast<std::int64_t>(line * line_size_) >= file->home_size;
            }
            if (skip) continue;
            const std::uint64_t generation = file->write_generation.load();
            char* data = prefetch_pool_->acquire();
            ++prefetch_in_flight_;
            prefetch_reading_ = key;
            lock.unlock();
            const ssize_t n =
                file->io->pread(data, line_size_, static_cast<off_t>(line * line_size_));
            if (n >= 0) std::memset(data + n, 0, line_size_ - static_cast<std::size_t>(n));
            lock.lock();
            --prefetch_in_flight_;
            prefetch_reading_.reset();
            // A write to the file since the read began may have made it stale.
            if (n < 0 || file->write_generation.load() != generation || prefetched_.contains(key)) {
                prefetch_pool_->release(data);
            } else {
                prefetched_[key] = Prefetched{data, demand_misses_};
                ++prefetches_;
            }
            prefetch_done_.notify_all(); // a demand miss may wait for this line
        }
    }
}

} // namespace iosig::tier::detail
