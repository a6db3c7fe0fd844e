// Page-aligned IO buffers allocated on the NUMA node of the device being measured (libnuma), so
// that O_DIRECT transfers and memcpy measurements do not cross the interconnect.
#pragma once

#include <cstddef>
#include <cstdint>

namespace iosig::calibrate {

class IoBuffer {
public:
    // `numa_node` < 0 or no NUMA support: local to the calling thread.
    IoBuffer(std::size_t bytes, int numa_node);
    ~IoBuffer();
    IoBuffer(const IoBuffer&) = delete;
    IoBuffer& operator=(const IoBuffer&) = delete;

    std::byte* data() { return data_; }
    std::size_t size() const { return size_; }
    // Incompressible content: some devices and hosts detect zeroed blocks.
    void fill_random(std::uint64_t seed);

private:
    std::byte* data_ = nullptr;
    std::size_t size_ = 0;
    bool from_numa_ = false;
};

// Runs the calling thread on the CPUs of `numa_node` (< 0: on every node; no-op without NUMA).
void run_on_numa_node(int numa_node);

// A fast deterministic generator for offsets (xorshift64*).
class Random {
public:
    explicit Random(std::uint64_t seed) : state_(seed ? seed : 0x9e3779b97f4a7c15ULL) {}
    std::uint64_t next() {
        state_ ^= state_ >> 12;
        state_ ^= state_ << 25;
        state_ ^= state_ >> 27;
        return state_ * 0x2545f4914f6cdd1dULL;
    }
    std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : next() % n; }

private:
    std::uint64_t state_;
};

} // namespace iosig::calibrate
