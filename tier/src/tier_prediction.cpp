// Eqs. 1-4 and the flusher's replay combined (tier_prediction.hpp).
#include "iosig/tier/tier_prediction.hpp"

#include "iosig/tier/throttle_slices.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace iosig::tier {
namespace {

// Tier 2's time for `ios` reads of `bytes` in all: the throttle's budgets when it has them, else
// each read at the rate of one of their mean size.
double bypass_read_seconds(const TierRates& rates, std::uint64_t ios, std::uint64_t bytes) {
    if (ios == 0) return 0;
    if (const auto budgeted = budgeted_fetch_seconds(rates, ios, bytes)) return *budgeted;
    const double per_second =
        rates.tier2_read_io ? rates.tier2_read_io(bytes / ios) : rates.tier2_read;
    return static_cast<double>(ios) / per_second;
}

// Tier 1's time for request `r`: each line it touches is one IO of the request's part of it when
// the rates know an IO's size, else a whole line's time.
double tier1_seconds(const TierRates& rates, const Request& r, std::uint64_t line_size) {
    const LineSpan span = line_span(r, line_size);
    const auto& per_io = r.write ? rates.tier1_write_io : rates.tier1_read_io;
    if (!per_io)
        return static_cast<double>(span.count) / (r.write ? rates.tier1_write : rates.tier1_read);
    double seconds = 0;
    for (std::uint64_t line = span.first; line < span.first + span.count; ++line) {
        const ByteRange part = line_part(r, line, line_size);
        seconds += 1 / per_io(part.end - part.begin);
    }
    return seconds;
}

} // namespace

TierPrediction predict_tier_time(const Trace& trace, std::uint64_t tier2_reads,
                                 const TierRates& rates, WritebackModelConfig writeback,
                                 const std::vector<std::uint32_t>* request_fills,
                                 const std::vector<std::uint32_t>* request_fill_reads,
                                 std::uint64_t prefetch_reads, BypassReads bypass) {
    if (trace.kind != TraceKind::blocks)
        throw std::invalid_argument("the tier's time needs a block trace");
    if (writeback.line_size == 0) throw std::invalid_argument("line size must be > 0");
    if (request_fills && request_fills->size() != trace.requests.size())
        throw std::invalid_argument("one fill count per request");
    if (request_fill_reads &&
        (!request_fills || request_fill_reads->size() != request_fills->size()))
        throw std::invalid_argument("one fill read count per request, with the fill counts");
    if ((bypass.request_ios == nullptr) != (bypass.request_bytes == nullptr) ||
        (bypass.request_ios && (bypass.request_ios->size() != trace.requests.size() ||
                                bypass.request_bytes->size() != trace.requests.size())))
        throw std::invalid_argument("one bypass read count and byte count per request");
    // Every line a request touches is served by tier 1 (n_i,r and n_i,w count line references).
    ProcessLoad load{0, 0, tier2_reads, 0, std::nullopt};
    // Every line tier 2 reads is written into tier 1 once: a demand fill before its request is
    // served, a prefetched line when a request takes it from the prefetch buffer (one never taken
    // is not, so this counts high by the prefetches wasted).
    load.fills = tier2_reads;
    const double fill_write = 1 / rates.tier1_write; // a whole line
    // With fill runs known: the demand fills' time, request by request; the rest of tier2_reads
    // (prefetches) one read per line.
    double demand_fetch = 0;
    std::uint64_t demand_lines = 0;
    const auto request_fetch = [&](std::size_t i) {
        const std::uint32_t lines = (*request_fills)[i];
        return request_fill_reads
                   ? fetch_seconds(rates, lines, (*request_fill_reads)[i], writeback.line_size)
                   : static_cast<double>(lines) / rates.tier2_read;
    };
    bool any_write = false;
    std::vector<RequestPace> pace;
    double clock = 0;
    double hit_seconds = 0;
    for (std::size_t i = 0; i < trace.requests.size(); ++i) {
        const Request& r = trace.requests[i];
        const std::uint64_t lines = line_span(r, writeback.line_size).count;
        (r.write ? load.writes : load.reads) += lines;
        any_write = any_write || r.write;
        const double tier1 = tier1_seconds(rates, r, writeback.line_size);
        hit_seconds += tier1;
        if (request_fills) {
            double fetch = request_fetch(i);
            if (bypass.request_ios)
                fetch += bypass_read_seconds(rates, (*bypass.request_ios)[i],
                                             (*bypass.request_bytes)[i]);
            demand_fetch += fetch;
            demand_lines += (*request_fills)[i];
            // For a throttle's two budgets: the fills' reads (a line each without fill runs)
            // and the bypass's, and their bytes.
            double ios = request_fill_reads ? (*request_fill_reads)[i] : (*request_fills)[i];
            double bytes = static_cast<double>((*request_fills)[i] * writeback.line_size);
            if (bypass.request_ios) {
                ios += (*bypass.request_ios)[i];
                bytes += static_cast<double>((*bypass.request_bytes)[i]);
            }
            // The request's fills write their lines into tier 1 before it is served.
            const double filled = tier1 + (*request_fills)[i] * fill_write;
            pace.push_back({filled, fetch, ios, bytes});
            clock += filled + fetch;
        }
    }
    if (request_fill_reads) {
        const std::uint64_t prefetched = tier2_reads - std::min(tier2_reads, demand_lines);
        const std::uint64_t fill_reads = std::accumulate(
            request_fill_reads->begin(), request_fill_reads->end(), std::uint64_t{0});
        // On a throttle's budgets, single-line fills and large prefetch runs together cost the
        // scarcer budget's time (a prefetched scan of 16 MiB in 133 reads: 0.7 s measured, 0.8 s
        // summing each read's larger charge); elsewhere each read its own time.
        load.fetch_seconds = budgeted_fetch_seconds(
            rates, fill_reads + (prefetch_reads ? prefetch_reads : prefetched), // 0: a line each
            (demand_lines + prefetched) * writeback.line_size);
        if (!load.fetch_seconds)
            load.fetch_seconds = demand_fetch + fetch_seconds(rates, prefetched, prefetch_reads,
                                                              writeback.line_size);
    }
    if (rates.tier1_read_io || rates.tier1_write_io) load.hit_seconds = hit_seconds;
    TierPrediction p;
    if (bypass.request_ios) {
        const std::uint64_t ios = std::accumulate(bypass.request_ios->begin(),
                                                  bypass.request_ios->end(), std::uint64_t{0});
        const std::uint64_t bytes = std::accumulate(bypass.request_bytes->begin(),
                                                    bypass.request_bytes->end(), std::uint64_t{0});
        p.bypass_seconds = bypass_read_seconds(rates, ios, bytes);
        load.fetch_seconds =
            load.fetch_seconds.value_or(static_cast<double>(load.tier2_reads) / rates.tier2_read) +
            p.bypass_seconds;
    }
    p.queueing = completion_time({load}, rates);
    p.foreground_seconds = request_fills ? clock : p.queueing.seconds;
    // The fills go through the device's read throttle slices, the flusher's batches through its
    // write slices when it limits the directions separately (one budget: the flusher's share,
    // below, stands for the fills' use of it).
    writeback.write_throttle_slice =
        rates.tier2_independent_read_write ? rates.tier2_throttle_slice : 0;
    if (rates.tier2_write_io)
        writeback.write_cost = [&rates](std::uint64_t bytes) {
            return rates.tier2_write / rates.tier2_write_io(bytes);
        };
    // A throttle alone (its budgets known) grants the fills' IOs and bytes apart, as blk-throttle
    // does; other devices their work in seconds.
    const ThrottleSlices fetch_throttle =
        rates.tier2_read_iops_budget > 0 && rates.tier2_read_bytes_budget > 0
            ? ThrottleSlices(rates.tier2_throttle_slice, rates.tier2_read_iops_budget,
                             rates.tier2_read_bytes_budget)
            : ThrottleSlices(rates.tier2_throttle_slice);
    if (any_write) {
        // A device with one budget for both directions: iterate on the share of its time the
        // fills leave the flusher.
        double share = 1;
        for (int i = 0; i < 20; ++i) {
            writeback.writeback_rate = rates.tier2_write * share;
            p.writeback = request_fills
                              ? estimate_writebacks(trace, pace, fetch_throttle, writeback)
                              : estimate_writebacks(trace, p.foreground_seconds, writeback);
            p.writeback_share = share;
            load.tier2_writes = static_cast<std::uint64_t>(std::llround(p.writeback.write_units)) +
                                p.writeback.syncs;
            p.queueing = completion_time({load}, rates);
            if (rates.tier2_independent_read_write || p.queueing.seconds <= 0) break;
            const double fill_seconds =
                load.fetch_seconds ? *load.fetch_seconds
                                   : static_cast<double>(load.tier2_reads) / rates.tier2_read;
            const double next = std::max(0.05, 1 - fill_seconds / p.queueing.seconds);
            if (std::abs(next - share) < 1e-3) break;
            share = next;
        }
    }
    p.seconds = std::max(p.queueing.seconds, p.writeback.seconds);
    return p;
}

} // namespace iosig::tier
