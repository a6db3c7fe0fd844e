// Warm memory for the page cache, handed over write by write.
//
// On this VM free guest memory is reported to the hypervisor (free page reporting, blocks of 2 MiB
// and up) and dropped there; the next touch of such a page faults on the host and is an order of
// magnitude slower than a write into memory the guest already holds. A buffered writer whose new
// page-cache pages come from reported memory measures the hypervisor, not the page cache: 8 MiB
// writes that take 1.9 ms on warm pages take 20-30 ms on reported ones, with no throttling at all,
// and which pages a run gets changes from run to run. Touching memory and freeing it all before the
// run does not help: the freed blocks are reported again before the writer reaches them.
//
// So the writer process holds a pool of touched transparent huge pages and frees one just before
// the write that needs it: the allocator hands out the most recently freed block first, and there
// is no time for it to be reported in between. The frees happen before the write is timed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace iosig::cachesim::validate {

class WarmPool {
public:
    // Maps and touches `bytes` (rounded up to whole 2 MiB pages). An empty pool if that fails.
    explicit WarmPool(std::uint64_t bytes);
    ~WarmPool();
    WarmPool(const WarmPool&) = delete;
    WarmPool& operator=(const WarmPool&) = delete;

    // Frees whole pages until what was freed covers every byte asked for so far (a write of
    // `bytes` is about to allocate at most that much page cache).
    void release_for(std::uint64_t bytes);

    std::size_t held_bytes() const { return size_ - next_; }

private:
    unsigned char* base_ = nullptr; // 2 MiB aligned
    std::size_t size_ = 0;
    std::size_t next_ = 0;    // offset of the first page still held
    std::int64_t credit_ = 0; // bytes freed minus bytes asked for
};

} // namespace iosig::cachesim::validate
