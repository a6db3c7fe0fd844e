#include "io_buffer.hpp"

#include <cstdlib>
#include <cstring>
#include <new>
#include <numa.h>

namespace iosig::calibrate {
namespace {
constexpr std::size_t alignment = 4096;
}

IoBuffer::IoBuffer(std::size_t bytes, int numa_node) : size_(bytes) {
    const std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    if (numa_available() >= 0) {
        void* p =
            numa_node >= 0 ? numa_alloc_onnode(rounded, numa_node) : numa_alloc_local(rounded);
        if (p != nullptr) { // numa_alloc_* map whole pages: page-aligned
            data_ = static_cast<std::byte*>(p);
            from_numa_ = true;
        }
    }
    if (data_ == nullptr) {
        data_ = static_cast<std::byte*>(std::aligned_alloc(alignment, rounded));
        if (data_ == nullptr) throw std::bad_alloc();
    }
    size_ = rounded;
    std::memset(data_, 0, size_); // fault every page in now, not during a timed IO
}

IoBuffer::~IoBuffer() {
    if (from_numa_)
        numa_free(data_, size_);
    else
        std::free(data_);
}

void IoBuffer::fill_random(std::uint64_t seed) {
    Random r(seed);
    for (std::size_t i = 0; i + 8 <= size_; i += 8) {
        const std::uint64_t v = r.next();
        std::memcpy(data_ + i, &v, 8);
    }
}

void run_on_numa_node(int numa_node) {
    if (numa_available() < 0) return;
    numa_run_on_node(numa_node < 0 ? -1 : numa_node); // -1: every node again
}

} // namespace iosig::calibrate
