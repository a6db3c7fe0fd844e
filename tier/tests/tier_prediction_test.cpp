// The tier's predicted time (tier_prediction.hpp): Eqs. 1-4 on the line references, the flusher's
// replay for the write-backs, the later of the two, and the flusher's share of a home device that
// serves reads and writes from one budget.
#include "iosig/tier/tier_prediction.hpp"

#include <algorithm>
#include <gtest/gtest.h>
#include <stdexcept>
#include <vector>

namespace iosig::tier {
namespace {

// `count` requests of `size` bytes at line `line + i % lines`, reads or writes.
Trace requests(std::size_t count, std::uint64_t lines, bool write, std::uint32_t size = 4096) {
    Trace t;
    t.kind = TraceKind::blocks;
    for (std::size_t i = 0; i < count; ++i)
        t.requests.push_back(Request{(i % lines) * 4096, size, write});
    return t;
}

TierRates rates(bool independent) {
    TierRates r;
    r.tier1_read = 1000;
    r.tier1_write = 100;
    r.tier2_read = 50;
    r.tier2_write = 100;
    r.tier2_independent_read_write = independent;
    return r;
}

TEST(TierPrediction, ReadsAloneAreEquationsOneToFour) {
    // 1,000 reads through tier 1 at 1,000/s take 1 s, and writing the 50 fetched lines into it at
    // 100/s 0.5 s more; 50 fills at 50/s take 1 s (Eq. 3: the later).
    const TierPrediction p = predict_tier_time(requests(1000, 500, false), 50, rates(true), {});
    EXPECT_DOUBLE_EQ(p.queueing.hit[0], 1.5);
    EXPECT_DOUBLE_EQ(p.queueing.miss[0], 1.0);
    EXPECT_DOUBLE_EQ(p.seconds, 1.5);
    EXPECT_EQ(p.writeback.writebacks, 0u);
}

TEST(TierPrediction, AFillWritesItsWholeLineIntoTierOne) {
    // 100 reads of 1 KiB, each a miss: tier 1 reads 1 KiB of each line and writes the whole
    // 4 KiB line first. Tier 1 takes 1 ms per IO plus 1 us per KiB (5 ms for a line written in
    // the Eq. 1 term, whole lines at tier1_write = 1 / 5 ms); the request waits for its fill,
    // that write and its read, one after another.
    TierRates r = rates(true);
    r.tier1_read = r.tier1_write = 1 / 5e-3;
    r.tier1_read_io = r.tier1_write_io = [](std::uint64_t bytes) {
        return 1 / (1e-3 + static_cast<double>(bytes) / 1024 * 1e-6);
    };
    const Trace t = requests(100, 100, false, 1024);
    const std::vector<std::uint32_t> fills(100, 1);
    const TierPrediction p = predict_tier_time(t, 100, r, {}, &fills);
    EXPECT_NEAR(p.queueing.hit[0], 100 * (1.001e-3 + 5e-3), 1e-12);
    EXPECT_NEAR(p.foreground_seconds, 100 * (1 / 50.0 + 5e-3 + 1.001e-3), 1e-12);
    // Without the fills known per request, Eq. 1 still charges the lines tier 2 read.
    EXPECT_NEAR(predict_tier_time(t, 100, r, {}).queueing.hit[0], 100 * (1.001e-3 + 5e-3), 1e-12);
}

TEST(TierPrediction, EveryLineARequestTouchesIsATierOneReference) {
    // 500 reads of 8 KiB on 4 KiB lines: 1,000 line references, 1 s at 1,000/s.
    const TierPrediction p = predict_tier_time(requests(500, 100, false, 8192), 0, rates(true), {});
    EXPECT_DOUBLE_EQ(p.queueing.hit[0], 1.0);
}

TEST(TierPrediction, ARequestsPartOfALineCostsTierOneThePartsTime) {
    // 1,000 reads of 4 KiB on 64 KiB lines. Tier 1 takes 1 ms per IO plus 1 us per KiB: a whole
    // line 1.064 ms, the 4 KiB the engine reads of it 1.004 ms.
    TierRates r = rates(true);
    r.tier1_read = 1 / 1.064e-3;
    r.tier1_write = r.tier1_read;
    r.tier1_read_io = [](std::uint64_t bytes) { return 1 / (1e-3 + 1e-6 * (bytes >> 10)); };
    r.tier1_write_io = r.tier1_read_io;
    Trace t = requests(1000, 4, false);
    WritebackModelConfig config;
    config.line_size = 64 << 10;
    EXPECT_NEAR(predict_tier_time(t, 0, r, config).queueing.hit[0], 1.004, 1e-9);
    // A request across a line boundary is an IO in each line: 2 KiB + 2 KiB.
    t.requests = {Request{(64 << 10) - 2048, 4096, false}};
    EXPECT_NEAR(predict_tier_time(t, 0, r, config).queueing.hit[0], 2 * 1.002e-3, 1e-12);
    // Without per-IO rates, every line touched costs a whole line (Eq. 1 as the paper has it).
    r.tier1_read_io = {};
    r.tier1_write_io = {};
    EXPECT_NEAR(predict_tier_time(t, 0, r, config).queueing.hit[0], 2 * 1.064e-3, 1e-12);
}

TEST(TierPrediction, WhatCloseLeavesTheFlusherComesAfterTheForeground) {
    // 1,000 writes to four lines at 100/s: 10 s of foreground. The home device keeps up, so Eqs.
    // 1-4 say 10 s; the replay knows that close still writes the last dirty periods home after
    // that.
    const TierPrediction p = predict_tier_time(requests(1000, 4, true), 0, rates(true), {});
    EXPECT_DOUBLE_EQ(p.foreground_seconds, 10.0);
    EXPECT_DOUBLE_EQ(p.queueing.seconds, 10.0);
    EXPECT_GT(p.writeback.seconds, 10.0);
    EXPECT_DOUBLE_EQ(p.seconds, p.writeback.seconds);
    // Each line goes home once per dirty period: at least the 0.5 s delay, at most that plus the
    // flusher's 0.25 s between looks, plus the period close ends. A line written again during its
    // write-back is not ripe again at once (it would be written home back to back, ~800 times).
    EXPECT_GE(p.writeback.writebacks, 4u * 10 / 0.75);
    EXPECT_LE(p.writeback.writebacks, 4u * (10 / 0.5 + 1));
    EXPECT_EQ(p.writeback_share, 1.0);
}

TEST(TierPrediction, WriteBacksJoinTheMissTermWithTheirSyncs) {
    // 100 distinct lines written at once, four dirty lines allowed: the writers wait for 19 batches
    // of five lines and a sync, close writes the last five: 100 write-backs and 20 syncs at 100/s.
    WritebackModelConfig flusher;
    flusher.max_dirty_lines = 4;
    TierRates fast = rates(true);
    fast.tier1_write = 1e9;
    const TierPrediction p = predict_tier_time(requests(100, 100, true), 0, fast, flusher);
    EXPECT_EQ(p.writeback.writebacks, 100u);
    EXPECT_EQ(p.writeback.syncs, 20u);
    EXPECT_NEAR(p.queueing.miss[0], 1.2, 1e-9);
    EXPECT_NEAR(p.writeback.writer_wait, 19 * 0.06, 1e-9);
    EXPECT_NEAR(p.seconds, 1.2, 1e-6);
}

TEST(TierPrediction, OneBudgetForBothDirectionsLeavesTheFlusherWhatTheFillsDoNotTake) {
    // Reads that miss and writes, interleaved: 2,000 requests over 400 lines, 200 fills.
    Trace mixed = requests(2000, 400, false);
    for (std::size_t i = 0; i < mixed.requests.size(); i += 2)
        mixed.requests[i].write = true;
    const TierPrediction separate = predict_tier_time(mixed, 200, rates(true), {});
    const TierPrediction shared = predict_tier_time(mixed, 200, rates(false), {});
    EXPECT_EQ(separate.writeback_share, 1.0);
    EXPECT_LT(shared.writeback_share, 1.0);
    // The share is the fixed point: the time the fills leave the home device.
    const double fill_seconds = 200.0 / 50;
    EXPECT_NEAR(shared.writeback_share, 1 - fill_seconds / shared.queueing.seconds, 2e-3);
    // Eq. 2 adds the two directions on one budget and takes the larger with two.
    const double writes = double(shared.writeback.writebacks + shared.writeback.syncs) / 100;
    EXPECT_NEAR(shared.queueing.miss[0], fill_seconds + writes, 1e-9);
    EXPECT_GT(shared.seconds, separate.seconds);
}

TEST(TierPrediction, RequestsArePacedByTheirOwnFillsWhenTheCountsAreGiven) {
    // 100 reads that miss, then 1,000 writes round a ten lines that are already cached.
    Trace t = requests(100, 100, false);
    for (std::size_t i = 0; i < 1000; ++i)
        t.requests.push_back(Request{(1000 + i % 10) * 4096, 4096, true});
    std::vector<std::uint32_t> fills(t.requests.size(), 0);
    std::fill(fills.begin(), fills.begin() + 100, 1u);
    TierRates r = rates(true);
    r.tier1_read = r.tier1_write = 1e9;
    r.tier2_read = 10; // 10 s of fills
    const TierPrediction paced = predict_tier_time(t, 100, r, {}, &fills);
    const TierPrediction even = predict_tier_time(t, 100, r, {});
    // Paced: the program waits 10 s for its fills, then writes the ten lines a hundred times in a
    // moment: one dirty period each, written home at close (ten lines and a sync at 100/s).
    EXPECT_NEAR(paced.foreground_seconds, 10.0, 1e-5);
    EXPECT_EQ(paced.writeback.writebacks, 10u);
    EXPECT_NEAR(paced.seconds, 10.0 + 11.0 / 100, 1e-5);
    // Spread evenly over the same 10 s, the writes span 9 s and each line goes home again and
    // again.
    EXPECT_GT(even.writeback.writebacks, 100u);
    const std::vector<std::uint32_t> short_counts(10, 0);
    EXPECT_THROW(predict_tier_time(t, 100, r, {}, &short_counts), std::invalid_argument);
}

TEST(TierPrediction, PrefetchedLinesCostTheReadsTheyCameIn) {
    // 10 reads that each fill a line, and 80 prefetched lines: one read each (80 + 10 reads at
    // 50/s, 1.8 s), or in 20 reads of 4 lines when the device reads 4 lines as fast as one.
    Trace t = requests(10, 10, false);
    const std::vector<std::uint32_t> fills(10, 1), reads(10, 1);
    TierRates r = rates(true);
    r.tier1_read = r.tier1_write = 1e9;
    r.tier2_read_io = [](std::uint64_t) { return 50.0; };
    EXPECT_NEAR(predict_tier_time(t, 90, r, {}, &fills, &reads).seconds, 1.8, 1e-9);
    EXPECT_NEAR(predict_tier_time(t, 90, r, {}, &fills, &reads, 20).seconds, 0.6, 1e-9);
}

// On a throttle's budgets, single-line fills and large prefetch runs together take the scarcer
// budget's time: 10 fills of a line and 80 lines prefetched in 2 reads are 12 reads at 20/s (0.6 s)
// or 90 lines at 100 lines/s (0.9 s), not 10 / 20 + 2 x 40 / 100 s (1.3 s).
TEST(TierPrediction, ReadsOfMixedSizesOnAThrottleTakeTheScarcerBudgetsTime) {
    Trace t = requests(10, 10, false);
    const std::vector<std::uint32_t> fills(10, 1), reads(10, 1);
    TierRates r = rates(true);
    r.tier1_read = r.tier1_write = 1e9;
    r.tier2_read = 20; // a line a read
    r.tier2_read_io = [](std::uint64_t bytes) { return std::min(20.0, 100.0 * 4096 / bytes); };
    EXPECT_NEAR(predict_tier_time(t, 90, r, {}, &fills, &reads, 2).seconds, 1.3, 1e-9);
    r.tier2_read_iops_budget = 20;
    r.tier2_read_bytes_budget = 100 * 4096;
    EXPECT_NEAR(predict_tier_time(t, 90, r, {}, &fills, &reads, 2).seconds, 0.9, 1e-9);
}

// The sequential bypass's reads through the page cache are tier 2's work, after the fills as a
// phase of their own on a throttle's budgets: 10 single-line fills at 20 IOs/s (0.5 s), then 4
// reads of 100 lines at 100 lines/s (4 s), not the two budgets over both (14 reads: 0.7 s; 410
// lines: 4.1 s).
TEST(TierPrediction, TheBypassReadsAfterTheFillsInAPhaseOfTheirOwn) {
    Trace t = requests(20, 20, false);
    std::vector<std::uint32_t> fills(20, 0), reads(20, 0), bypass_ios(20, 0);
    std::vector<std::uint64_t> bypass_bytes(20, 0);
    std::fill(fills.begin(), fills.begin() + 10, 1u);
    std::fill(reads.begin(), reads.begin() + 10, 1u);
    for (int i = 10; i < 14; ++i) {
        bypass_ios[i] = 1;
        bypass_bytes[i] = 100 * 4096;
    }
    TierRates r = rates(true);
    r.tier1_read = r.tier1_write = 1e9;
    r.tier2_read = 20;
    r.tier2_read_iops_budget = 20;
    r.tier2_read_bytes_budget = 100 * 4096;
    const TierPrediction p =
        predict_tier_time(t, 10, r, {}, &fills, &reads, 0, BypassReads{&bypass_ios, &bypass_bytes});
    EXPECT_NEAR(p.bypass_seconds, 4.0, 1e-9);
    EXPECT_NEAR(p.seconds, 4.5, 1e-9);
    EXPECT_NEAR(p.foreground_seconds, 4.5, 1e-6) << "the requests wait for their bypass reads";
    // Without budgets, each read at the rate of one of its size.
    r.tier2_read_iops_budget = r.tier2_read_bytes_budget = 0;
    r.tier2_read_io = [](std::uint64_t bytes) { return 400.0 * 4096 / double(bytes); };
    EXPECT_NEAR(
        predict_tier_time(t, 10, r, {}, &fills, &reads, 0, BypassReads{&bypass_ios, &bypass_bytes})
            .bypass_seconds,
        1.0, 1e-9);
    const std::vector<std::uint64_t> short_bytes(3, 0);
    EXPECT_THROW(
        predict_tier_time(t, 10, r, {}, &fills, &reads, 0, BypassReads{&bypass_ios, &short_bytes}),
        std::invalid_argument);
}

TEST(TierPrediction, NeedsABlockTraceAndALineSize) {
    Trace objects = requests(10, 10, false);
    objects.kind = TraceKind::objects;
    EXPECT_THROW(predict_tier_time(objects, 0, rates(true), {}), std::invalid_argument);
    WritebackModelConfig no_lines;
    no_lines.line_size = 0;
    EXPECT_THROW(predict_tier_time(requests(10, 10, false), 0, rates(true), no_lines),
                 std::invalid_argument);
}

} // namespace
} // namespace iosig::tier
