// How many line write-backs the engine makes for a request sequence: the write-back part of n_i,m
// in the queueing model's Eq. 2 (queueing.hpp). The engine never evicts a dirty line; its flusher
// wakes every writeback_delay / 2 and writes lines home in batches of queue_depth, oldest first,
// once they have been dirty for TierConfig::writeback_delay, or regardless of age while more than
// half of max_dirty_lines are dirty or a writer waits for room (engine_flush.cpp, flusher_loop);
// writers wait while more than max_dirty_lines are dirty, and close writes the rest. A write to a
// clean line starts a new dirty period, so a line written again and again costs one write-back
// per period, not one in all; a line written again while its write-back is in flight stays dirty,
// and a new dirty period starts when the write-back completes.
//
// The home device takes write-backs at a finite rate, and that decides how many there are: while
// the flusher is busy, lines wait longer and absorb more rewrites. On the lab's throttled hdd, a
// flusher assumed infinitely fast counted 1,189 write-backs for 1,500 random 4 KiB writes over a
// 2 MiB working set where the engine made 946 (+24 % on the modelled time).
#pragma once

#include "iosig/tier/readahead_model.hpp"
#include "iosig/tier/throttle_slices.hpp"
#include "iosig/tier/trace.hpp"

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace iosig::tier {

struct WritebackModelConfig {
    std::uint64_t line_size = 4096;
    std::uint64_t max_dirty_lines = 64; // the engine's bound (TierConfig: 0 means lines / 4)
    double writeback_delay = 0.5;       // s (TierConfig::writeback_delay)
    unsigned queue_depth = 32;          // lines per flusher batch (TierConfig::queue_depth)
    // Write IOs per second the home device takes (mu_2,w of the queueing model, or what the device
    // has left beside the fills); a batch of b lines takes b + 1 of them (the sync, below); 0 = a
    // batch takes no time.
    double writeback_rate = 0;
    // As the engine's flusher: a batch's adjacent lines go home in one write of up to this many
    // bytes (TierConfig::io_run_bytes; 0 or one line: one write per line), and such a write of
    // `bytes` costs write_cost(bytes) line writes (unset: one per line it holds).
    std::uint64_t io_run_bytes = default_io_run_bytes;
    std::function<double(std::uint64_t bytes)> write_cost = {};
    // The home device's blk-throttle slice for writes (throttle_slices.hpp;
    // Performance::throttle_slice); 0: every batch takes its writes' time.
    double write_throttle_slice = 0;
    // The sequential bypass's writes (SimResult::bypassed_write_lines: (request, line) in trace
    // order). Those lines of the requests go into the home file's page cache instead of dirtying
    // a cache line. The kernel leaves them there for dirty_expire_centisecs (30 s) or until the
    // background threshold, but every flusher batch ends with an fdatasync of the home file, and
    // that writes them all: the first batch to start after them writes their dirty pages, each
    // run of adjacent pages in IOs of up to home_max_io_bytes (the home device's max_sectors_kb),
    // each IO costing write_cost. Pages no later batch syncs stay in the page cache after close
    // (WritebackEstimate::bypass_deferred_bytes). On the lab's throttled hdd, 4 MiB cached and
    // 60 MiB bypassed took 3.24 s: the first batch's sync wrote the 60 MiB at 20 MiB/s.
    const std::vector<std::pair<std::uint32_t, std::uint64_t>>* bypassed_write_lines = nullptr;
    std::uint64_t home_max_io_bytes = 1280 << 10;
    std::uint64_t home_page_bytes = 4096;
};

// Each batch ends with an fdatasync of the home file, and a sync costs the device about one write
// IO: on the lab's throttled hdd, 400 direct 4 KiB writes took 1.90 s, and 3.97 s with a sync
// after each (`dd bs=4k count=400 oflag=direct` against `oflag=direct,dsync` inside `lab exec`).
struct WritebackEstimate {
    std::uint64_t writebacks = 0; // including those close makes
    std::uint64_t writes = 0;     // home writes for them (adjacent lines of a batch share one)
    double write_units = 0;       // what those writes cost, in line writes (write_cost)
    std::uint64_t syncs = 0;      // the home file's syncs: one per batch, close's batches included
    double writer_wait = 0;       // s the writers waited for room under the dirty bound
    // The sequential bypass's writes (WritebackModelConfig::bypassed_write_lines): bytes of dirty
    // pages the batches' syncs wrote home (their cost is in write_units), in how many IOs, and
    // bytes of those left in the home file's page cache at close, which the kernel writes later.
    std::uint64_t bypass_synced_bytes = 0;
    std::uint64_t bypass_writes = 0;
    std::uint64_t bypass_deferred_bytes = 0;
    double seconds = 0; // when the last write-back (close included) completes
};

// Replays the flusher on the requests of `trace` (kind blocks), request i issued at
// `issue_times[i]` s of foreground time (non-decreasing, one per request), each delayed by the
// writers' waits before it. Throws std::invalid_argument for an object trace, a line size or dirty
// bound of 0, a negative rate, or a count of times that is not the count of requests.
WritebackEstimate estimate_writebacks(const Trace& trace, const std::vector<double>& issue_times,
                                      const WritebackModelConfig& config);

// The same with the requests issued evenly over `seconds`.
WritebackEstimate estimate_writebacks(const Trace& trace, double seconds,
                                      const WritebackModelConfig& config);

// The program's own pace: each request is issued when the one before it has been served, after
// any wait for room under the dirty bound, and takes `tier1_seconds` plus its demand fills, which
// need `fetch_seconds` of the home device's sustained read rate, granted by `fetch_throttle`
// (throttle_slices.hpp; without a slice each request's fills take their time after the ones
// before): after a wait for the flusher the program's fills find unused budget, and after a
// longer one a new slice. A throttle with two budgets grants `fetch_ios` IOs of `fetch_bytes`
// instead.
struct RequestPace {
    double tier1_seconds = 0;
    double fetch_seconds = 0;
    double fetch_ios = 0;
    double fetch_bytes = 0;
};
WritebackEstimate estimate_writebacks(const Trace& trace, const std::vector<RequestPace>& pace,
                                      ThrottleSlices fetch_throttle,
                                      const WritebackModelConfig& config);

} // namespace iosig::tier
