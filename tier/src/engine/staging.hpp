// Staging memory for line transfers (fills from the home file, write-back snapshots, prefetched
// lines): page-aligned (O_DIRECT needs it) and placed on one NUMA node with libnuma, by default the
// node of the CPU that creates the engine, so that copies between the caller's buffers and the
// devices do not cross the interconnect. Falls back to aligned_alloc without NUMA support.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <vector>

namespace iosig::tier::detail {

class StagingPool {
public:
    // `count` buffers of `size` bytes on `node` (-1: the current CPU's node).
    StagingPool(std::size_t count, std::size_t size, int node);
    ~StagingPool();
    StagingPool(const StagingPool&) = delete;
    StagingPool& operator=(const StagingPool&) = delete;

    // Blocks until a buffer is free.
    char* acquire();
    // Blocks until `n` buffers are free at the same time (n <= count()).
    std::vector<char*> acquire_many(std::size_t n);
    std::size_t count() const { return count_; }
    void release(char* buffer);

    std::size_t buffer_size() const { return size_; }
    int node() const { return node_; } // -1 when not NUMA-placed
    bool numa_placed() const { return numa_; }

private:
    std::size_t count_, size_;
    int node_ = -1;
    bool numa_ = false;
    char* memory_ = nullptr;
    std::mutex mutex_;
    std::condition_variable available_;
    std::vector<char*> free_;
};

// A transient page-aligned buffer of several lines (a read's fill run, engine_impl.hpp), on the
// staging pool's NUMA node when the pool is placed; freed when it goes out of scope.
class RunBuffer {
public:
    RunBuffer() = default;
    ~RunBuffer() { release(); }
    RunBuffer(const RunBuffer&) = delete;
    RunBuffer& operator=(const RunBuffer&) = delete;
    // Room for `bytes`, keeping what is there when it is enough; false when the memory cannot be
    // had (the caller then reads one line at a time).
    bool reserve(const StagingPool& pool, std::size_t bytes);
    char* data() const { return data_; }

private:
    void release();
    char* data_ = nullptr;
    std::size_t capacity_ = 0;
    bool numa_ = false;
};

// RAII lease of one staging buffer.
class StagingBuffer {
public:
    explicit StagingBuffer(StagingPool& pool) : pool_(pool), data_(pool.acquire()) {}
    ~StagingBuffer() { pool_.release(data_); }
    StagingBuffer(const StagingBuffer&) = delete;
    StagingBuffer& operator=(const StagingBuffer&) = delete;
    char* data() const { return data_; }

private:
    StagingPool& pool_;
    char* data_;
};

} // namespace iosig::tier::detail
