// NUMA-placed staging buffers (staging.hpp).
#include "staging.hpp"

#include <cstdlib>
#include <cstring>
#include <new>
#include <numa.h>
#include <sched.h>

namespace iosig::tier::detail {

StagingPool::StagingPool(std::size_t count, std::size_t size, int node)
    : count_(count), size_(size) {
    const std::size_t bytes = count * size;
    if (numa_available() >= 0) {
        node_ = node >= 0 ? node : numa_node_of_cpu(sched_getcpu());
        if (node_ < 0) node_ = 0;
        memory_ = static_cast<char*>(numa_alloc_onnode(bytes, node_));
        numa_ = memory_ != nullptr;
    }
    if (memory_ == nullptr) {
        node_ = -1;
        memory_ = static_cast<char*>(std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096));
        if (memory_ == nullptr) throw std::bad_alloc();
    }
    std::memset(memory_, 0, bytes); // fault the pages in here, on the chosen node
    for (std::size_t i = 0; i < count; ++i)
        free_.push_back(memory_ + i * size);
}

StagingPool::~StagingPool() {
    if (numa_)
        numa_free(memory_, count_ * size_);
    else
        std::free(memory_);
}

char* StagingPool::acquire() {
    std::unique_lock lock(mutex_);
    available_.wait(lock, [&] { return !free_.empty(); });
    char* b = free_.back();
    free_.pop_back();
    return b;
}

std::vector<char*> StagingPool::acquire_many(std::size_t n) {
    std::unique_lock lock(mutex_);
    available_.wait(lock, [&] { return free_.size() >= n; });
    std::vector<char*> out(free_.end() - static_cast<std::ptrdiff_t>(n), free_.end());
    free_.resize(free_.size() - n);
    return out;
}

void StagingPool::release(char* buffer) {
    {
        std::lock_guard lock(mutex_);
        free_.push_back(buffer);
    }
    available_.notify_all();
}

bool RunBuffer::reserve(const StagingPool& pool, std::size_t bytes) {
    if (capacity_ >= bytes) return true;
    release();
    const std::size_t rounded = (bytes + 4095) / 4096 * 4096;
    if (pool.numa_placed()) data_ = static_cast<char*>(numa_alloc_onnode(rounded, pool.node()));
    numa_ = data_ != nullptr;
    if (data_ == nullptr) data_ = static_cast<char*>(std::aligned_alloc(4096, rounded));
    capacity_ = data_ != nullptr ? rounded : 0;
    return data_ != nullptr;
}

void RunBuffer::release() {
    if (data_ == nullptr) return;
    if (numa_)
        numa_free(data_, capacity_);
    else
        std::free(data_);
    data_ = nullptr;
    capacity_ = 0;
}

} // namespace iosig::tier::detail
