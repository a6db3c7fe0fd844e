// A workload's completion time through the tier: the queueing model (queueing.hpp, Eqs. 1-4) with
// the write-backs the engine's flusher makes (writeback_model.hpp), as iosig-tierbench predicts it.
//
// The requests run on the foreground's clock: spread evenly over the time Eqs. 1-4 give without
// write-backs, or paced by each request's own fills when those are known (below). The write-backs
// follow from replaying the flusher over that clock at the rate the home device takes
// them, writers waiting for it under the dirty bound; they then join n_i,m (a batch's sync counted
// as one write IO). On a home device that serves reads and writes from one budget, the flusher gets
// only the share of the device's time the fills leave it, iterated to a fixed point.
//
// Eqs. 1-4 charge the write-backs as if the flusher never idled; the replay knows when it waits for
// lines to ripen, when writers wait for it and what close leaves it. Both bound the run's time from
// below, so the prediction is the later of the two (on the lab's zipf workload with 30 % writes,
// Eqs. 1-4 said 3.60 s, the replay 4.41 s, the runs took 4.10-4.42 s).
#pragma once

#include "iosig/tier/queueing.hpp"
#include "iosig/tier/trace.hpp"
#include "iosig/tier/writeback_model.hpp"

#include <cstdint>
#include <vector>

namespace iosig::tier {

struct TierPrediction {
    double seconds = 0;            // the prediction: the later of the two below
    CompletionTime queueing;       // Eqs. 1-4, write-backs included
    WritebackEstimate writeback;   // the flusher's replay
    double foreground_seconds = 0; // Eqs. 1-4 without write-backs: the clock the requests run on
    double writeback_share = 1;    // share of the home device's write rate the flusher got
    double bypass_seconds = 0;     // tier 2's time for the bypass's reads (in Eq. 2)
};

// `trace` (kind blocks) is the workload's requests in order; `tier2_reads` the lines tier 2 reads
// for it (demand fills and prefetches, e.g. from the simulator); `writeback` the engine's flusher
// settings (its writeback_rate is set here from `rates`). `request_fills`, when given, holds each
// request's demand fills (SimResult::request_fills): the replay then issues request i when the
// requests before it have been served, each taking its lines at tier 1's rate plus its fills at
// tier 2's and their writes of whole lines into tier 1 (Eq. 1's fills, queueing.hpp), instead of
// spreading the requests evenly over the foreground time. A program waits for its fills, so writes
// that follow one another without misses come close together and a line they rewrite absorbs them
// in one dirty period. Throws std::invalid_argument for a trace that is not a block trace, a line
// size of 0, or request_fills of another length than the trace. `request_fill_reads`, when given
// with request_fills, holds the home reads each request's fills take
// (SimResult::request_fill_reads: adjacent lines share one): its fills then cost fetch_seconds
// (queueing.hpp) on the foreground's clock and in Eq. 2, instead of one read each; the rest of
// tier2_reads (prefetched lines) then take `prefetch_reads` home reads (SimResult::prefetch_reads;
// 0: one each).
//
// `bypass`, when given, holds the home reads the sequential bypass made through the page cache
// for each request (SimResult::request_bypass_ios and request_bypass_bytes; readahead_model.hpp):
// they are tier 2's work too, on the request's pace and in Eq. 2. On a throttle's budgets the
// bypass is a phase of its own: a stream longer than the cutoff keeps the device busy for slices
// at a time, and blk-throttle does not carry one phase's unused budget into the next (a bypassed
// 15 MiB after 256 single-line fills: 1.28 s of IOs, then 0.75 s of bytes; measured 1.88 s).
struct BypassReads {
    const std::vector<std::uint32_t>* request_ios = nullptr;
    const std::vector<std::uint64_t>* request_bytes = nullptr;
};
TierPrediction predict_tier_time(const Trace& trace, std::uint64_t tier2_reads,
                                 const TierRates& rates, WritebackModelConfig writeback,
                                 const std::vector<std::uint32_t>* request_fills = nullptr,
                                 const std::vector<std::uint32_t>* request_fill_reads = nullptr,
                                 std::uint64_t prefetch_reads = 0, BypassReads bypass = {});

} // namespace iosig::tier
