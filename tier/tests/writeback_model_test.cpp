// The write-back model replays the engine's flusher rules (writeback_model.hpp): one write-back per
// dirty period of a line, periods ended by the delay, by pressure on the dirty bound, or by close.
#include "iosig/tier/writeback_model.hpp"

#include <gtest/gtest.h>
#include <stdexcept>

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
    EXPECT_EQ(expected_writebacks(hundred, 1.0, config), 2u);
    // Over 10 s: a write-back every 0.5 s.
    EXPECT_EQ(expected_writebacks(hundred, 10.0, config), 20u);
    // All at once: one dirty period, written at close.
    EXPECT_EQ(expected_writebacks(hundred, 0.0, config), 1u);
}

TEST(WritebackModel, PressureOnTheDirtyBoundWritesLinesBackEarly) {
    WritebackModelConfig config;
    config.max_dirty_lines = 4;
    // Ten lines dirtied at once: the writer that finds five dirty wakes the flusher, which writes
    // all five back (more than half the bound); then the next five; nothing is left for close.
    EXPECT_EQ(expected_writebacks(writes_to({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}), 0.0, config), 10u);
    // Rewriting the same four lines never crosses the bound: four write-backs at close.
    EXPECT_EQ(expected_writebacks(writes_to({1, 2, 3, 4}, 25), 0.0, config), 4u);
}

TEST(WritebackModel, ReadsCostNothingAndARequestDirtiesEveryLineItTouches) {
    Trace t = writes_to({0}, 1, 3 * 4096); // lines 0, 1, 2
    t.requests.push_back(Request{100 * 4096, 4096, false});
    EXPECT_EQ(expected_writebacks(t, 1.0, WritebackModelConfig{}), 3u);
    Trace objects = t;
    objects.kind = TraceKind::objects;
    EXPECT_THROW(expected_writebacks(objects, 1.0, WritebackModelConfig{}), std::invalid_argument);
}

} // namespace
} // namespace iosig::tier
