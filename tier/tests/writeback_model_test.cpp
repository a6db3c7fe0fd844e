// The write-back model replays the engine's flusher rules (writeback_model.hpp): one write-back per
// dirty period of a line, periods ended by the delay, by pressure on the dirty bound, or by close.
#include "iosig/tier/writeback_model.hpp"

#include <gtest/gtest.h>
#include <numeric>
#include <stdexcept>
#include <utility>
#include <vector>

namespace iosig::tier {
namespace {

Trace writes_to(std::initializer_list<std::uint64_t> lines, std::size_t repeat = 1,
                std::uint32_t size = 4096) {
    Trace t;
    t.kind = TraceKind::blocks;
    for (std::size_t i = 0; i < repeat; ++i)
        for (const std::uint64_t line : lines)
            t.requests.push_back(Request{line * 4096, size, true});
    return t;
}

TEST(WritebackModel, ALineWrittenAgainAndAgainCostsOneWriteBackPerDelay) {
    const Trace hundred = writes_to({0}, 100);
    const WritebackModelConfig config; // 4 KiB lines, 0.5 s delay, flusher every 0.25 s
    // Over 1 s: dirty at 0, written home at the 0.5 s wake-up, dirty again, written at close.
    EXPECT_EQ(estimate_writebacks(hundred, 1.0, config).writebacks, 2u);
    // Over 10 s: a write-back every 0.5 s.
    EXPECT_EQ(estimate_writebacks(hundred, 10.0, config).writebacks, 20u);
    // All at once: one dirty period, written at close.
    EXPECT_EQ(estimate_writebacks(hundred, 0.0, config).writebacks, 1u);
}

TEST(WritebackModel, PressureOnTheDirtyBoundWritesLinesBackEarly) {
    WritebackModelConfig config;
    config.max_dirty_lines = 4;
    // Ten lines dirtied at once: the writer that finds five dirty wakes the flusher, which writes
    // all five back (more than half the bound); then the next five; nothing is left for close.
    EXPECT_EQ(
        estimate_writebacks(writes_to({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}), 0.0, config).writebacks,
        10u);
    // Rewriting the same four lines never crosses the bound: four write-backs at close.
    EXPECT_EQ(estimate_writebacks(writes_to({1, 2, 3, 4}, 25), 0.0, config).writebacks, 4u);
}

TEST(WritebackModel, WritersWaitForASlowFlusherUnderTheDirtyBound) {
    WritebackModelConfig config;
    config.max_dirty_lines = 4;
    config.writeback_rate = 10; // write IOs per second
    std::vector<std::uint64_t> lines(100);
    for (std::size_t i = 0; i < lines.size(); ++i)
        lines[i] = i;
    Trace t;
    t.kind = TraceKind::blocks;
    for (const std::uint64_t line : lines)
        t.requests.push_back(Request{line * 4096, 4096, true});
    // All 100 writes at once: the writer that finds five dirty wakes the flusher and waits for its
    // batch, five write-backs and a sync, 0.6 s; 19 times, then close writes the last five.
    const WritebackEstimate e = estimate_writebacks(t, 0.0, config);
    EXPECT_EQ(e.writebacks, 100u);
    EXPECT_EQ(e.syncs, 20u);
    EXPECT_NEAR(e.writer_wait, 19 * 0.6, 1e-9);
    EXPECT_NEAR(e.seconds, 20 * 0.6, 1e-9);
}

TEST(WritebackModel, ASlowHomeDeviceLetsLinesAbsorbMoreRewrites) {
    // Eight lines written round and round for 10 s, each every 0.1 s.
    const Trace t = writes_to({0, 1, 2, 3, 4, 5, 6, 7}, 100);
    WritebackModelConfig fast;
    WritebackModelConfig slow = fast;
    slow.writeback_rate = 4; // a batch of eight lines and its sync take 2.25 s
    const WritebackEstimate unlimited = estimate_writebacks(t, 10.0, fast);
    const WritebackEstimate limited = estimate_writebacks(t, 10.0, slow);
    // Without a limit every line goes home at the first wake-up after it ripens: at least one
    // write-back per line and 0.75 s.
    EXPECT_GE(unlimited.writebacks, 8u * 10 / 0.75);
    // With one, lines stay dirty while the flusher works and are rewritten meanwhile: fewer
    // write-backs (40 against 124), in fewer and fuller batches (9 syncs against 39).
    EXPECT_LT(limited.writebacks, unlimited.writebacks / 2);
    EXPECT_LT(limited.syncs * 3, unlimited.syncs);
    EXPECT_GT(limited.seconds, 10.0) << "close waits for the flusher";
    EXPECT_EQ(limited.writer_wait, 0.0) << "eight dirty lines never reach the bound of 64";
}

TEST(WritebackModel, ReadsCostNothingAndARequestDirtiesEveryLineItTouches) {
    Trace t = writes_to({0}, 1, 3 * 4096); // lines 0, 1, 2
    t.requests.push_back(Request{100 * 4096, 4096, false});
    EXPECT_EQ(estimate_writebacks(t, 1.0, WritebackModelConfig{}).writebacks, 3u);
    Trace objects = t;
    objects.kind = TraceKind::objects;
    EXPECT_THROW(estimate_writebacks(objects, 1.0, WritebackModelConfig{}), std::invalid_argument);
}

// The sequential bypass's writes (WritebackModelConfig::bypassed_write_lines) dirty the home
// file's page cache, not cache lines: no write-back of their own, but every batch ends with an
// fdatasync of the home file, which writes them.
using BypassedLines = std::vector<std::pair<std::uint32_t, std::uint64_t>>;

// Request 0 writes line 0 into the cache; requests 1.. write the lines `bypassed` past it.
Trace cached_then_bypassed(const std::vector<std::uint64_t>& bypassed, BypassedLines& list) {
    Trace t = writes_to({0});
    for (const std::uint64_t line : bypassed) {
        list.emplace_back(static_cast<std::uint32_t>(t.requests.size()), line);
        t.requests.push_back(Request{line * 4096, 4096, true});
    }
    return t;
}

WritebackModelConfig one_unit_per_io(const BypassedLines& list) {
    WritebackModelConfig config;
    config.bypassed_write_lines = &list;
    config.home_max_io_bytes = 1280 << 10; // the lab's hdd
    config.writeback_rate = 100;           // units a second
    config.write_cost = [](std::uint64_t) { return 1.0; };
    return config;
}

TEST(WritebackModel, TheNextBatchsSyncWritesTheBypassedPagesInLargeIos) {
    BypassedLines list;
    std::vector<std::uint64_t> lines(1000);
    std::iota(lines.begin(), lines.end(), 1000); // 4,000 KiB in one run
    const Trace t = cached_then_bypassed(lines, list);
    const WritebackEstimate e = estimate_writebacks(t, 0.0, one_unit_per_io(list));
    EXPECT_EQ(e.writebacks, 1u) << "only the cached line is written back";
    EXPECT_EQ(e.writes, 1u);
    EXPECT_EQ(e.syncs, 1u) << "close's batch";
    EXPECT_EQ(e.bypass_synced_bytes, 1000u * 4096) << "its sync writes every bypassed page";
    EXPECT_EQ(e.bypass_writes, 4u) << "4,000 KiB in IOs of 1,280 KiB";
    EXPECT_EQ(e.bypass_deferred_bytes, 0u);
    EXPECT_DOUBLE_EQ(e.write_units, 1 + 4);
    EXPECT_DOUBLE_EQ(e.seconds, (1 + 4 + 1) / 100.0) << "the line, the bypass, the sync";
}

TEST(WritebackModel, ScatteredBypassedPagesAreAWriteEach) {
    BypassedLines list;
    std::vector<std::uint64_t> lines;
    for (std::uint64_t i = 0; i < 50; ++i)
        lines.push_back(1000 + 2 * i); // every other page
    lines.push_back(1001);             // joins the first two: 1000-1002 is one run
    const Trace t = cached_then_bypassed(lines, list);
    const WritebackEstimate e = estimate_writebacks(t, 0.0, one_unit_per_io(list));
    EXPECT_EQ(e.bypass_writes, 49u);
    EXPECT_EQ(e.bypass_synced_bytes, 51u * 4096);
    EXPECT_DOUBLE_EQ(e.write_units, 1 + 49);
}

TEST(WritebackModel, BypassedPagesNoBatchSyncsStayInThePageCache) {
    BypassedLines list;
    Trace t;
    t.kind = TraceKind::blocks;
    for (std::uint64_t line = 0; line < 16; ++line) {
        list.emplace_back(static_cast<std::uint32_t>(line), line);
        t.requests.push_back(Request{line * 4096, 4096, true});
    }
    t.requests.push_back(Request{100 * 4096, 100, true}); // a cached line, written 1 s later
    const WritebackEstimate later = estimate_writebacks(t, 1.0, one_unit_per_io(list));
    EXPECT_EQ(later.bypass_synced_bytes, 16u * 4096) << "the cached line's sync at close";
    t.requests.pop_back();
    const WritebackEstimate never = estimate_writebacks(t, 1.0, one_unit_per_io(list));
    EXPECT_EQ(never.writebacks, 0u);
    EXPECT_EQ(never.syncs, 0u);
    EXPECT_EQ(never.bypass_synced_bytes, 0u);
    EXPECT_EQ(never.bypass_deferred_bytes, 16u * 4096) << "the kernel writes them after close";
    EXPECT_DOUBLE_EQ(never.seconds, 1.0 - 1.0 / 16);
}

TEST(WritebackModel, BypassedLinesMustBeWriteLinesInTraceOrder) {
    BypassedLines list;
    const Trace t = cached_then_bypassed({5, 6}, list);
    std::swap(list[0], list[1]);
    EXPECT_THROW(estimate_writebacks(t, 0.0, one_unit_per_io(list)), std::invalid_argument);
    BypassedLines read_line{{0, 7}};
    EXPECT_THROW(estimate_writebacks(t, 0.0, one_unit_per_io(read_line)), std::invalid_argument);
}

} // namespace
} // namespace iosig::tier
