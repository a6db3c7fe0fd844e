// IO buffers for the measurements: page-aligned, on the NUMA node of the device being measured
// (libnuma), so that O_DIRECT transfers and memcpy measurements do not cross the interconnect.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace iosig::calibrate {

// What backs a buffer. Device measurements want `huge`: a block layer request holds a bounded
// number of physically contiguous segments (128 on a loop device, 254 on virtio-blk), and a 1 MiB
// transfer into 256 scattered 4 KiB pages is split into two requests, which measured 25-35 % less
// sequential bandwidth on the lab's btrfs raid1 than the same loop with a transparent huge page.
// Whether fresh 4 KiB pages come out contiguous is the page allocator's luck (docs/calibrate.md).
// Memory-copy measurements want `small`, the pages a program's own buffers have.
enum class Pages { small, huge };

class IoBuffer {
public:
    // `numa_node` < 0 or no NUMA support: local to the calling thread.
    IoBuffer(std::size_t bytes, int numa_node, Pages pages = Pages::small);
    ~IoBuffer();
    IoBuffer(const IoBuffer&) = delete;
    IoBuffer& operator=(const IoBuffer&) = delete;

    std::byte* data() { return data_; }
    std::size_t size() const { return size_; }
    // The share of the buffer's 4 KiB pages that continue the previous page physically (1 for a
    // buffer of huge pages); nullopt when the page frames cannot be read (not root).
    std::optional<double> contiguous_share() const;
    // Incompressible content: some devices and hosts detect zeroed blocks.
    void fill_random(std::uint64_t seed);
    // Makes the `bytes` from `offset` differ from every earlier write of them, as fio's
    // scramble_buffers does: one 8-byte word in every 512 bytes takes a value made of `salt`.
    // Storage that deduplicates or caches repeated content writes one buffer written again and
    // again faster than a program's data: on this machine's virtual disk, 1 MiB QD4 writes of
    // one unchanging buffer ran at 3.8-4.0 GB/s, fio's scrambled ones at 3.3-3.4, and fio's with
    // scrambling off at 4.0-4.1 (session 32).
    void scramble(std::size_t offset, std::size_t bytes, std::uint64_t salt);

private:
    std::byte* mapping_ = nullptr; // what munmap gets back
    std::size_t mapping_size_ = 0;
    std::byte* data_ = nullptr;
    std::size_t size_ = 0;
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
