// The best LRU/LFU switching schedule in hindsight (iosig/tier/hindsight.hpp): a hand-computed
// trace whose character changes, the bounds it must respect, and its agreement with the simulator.
#include "iosig/tier/hindsight.hpp"
#include "iosig/tier/synthetic.hpp"

#include <gtest/gtest.h>
#include <stdexcept>
#include <string>

namespace {

using namespace iosig::tier;

// Object mode, unit-size objects, a cache of two. Phase 1: A four times, then B C ten times: LRU
// keeps B and C (3 misses in all), LFU keeps A and misses every B and C (21). Phase 2: A D E ten
// times, a cycle of three: LRU misses all 30, LFU keeps A and misses only D and E (20).
Trace two_phases() {
    Trace t;
    t.source = "two phases";
    t.kind = TraceKind::objects;
    auto add = [&](char c) {
        t.requests.push_back(Request{static_cast<std::uint64_t>(c), 1, false});
    };
    for (int i = 0; i < 4; ++i)
        add('A');
    for (int i = 0; i < 10; ++i)
        add('B'), add('C');
    for (int i = 0; i < 10; ++i)
        add('A'), add('D'), add('E');
    return t;
}

SimConfig cache_of(std::uint64_t size) {
    SimConfig c;
    c.cache_size = size;
    return c;
}

TEST(Hindsight, SwitchingOnceAtThePhaseChangeIsTheBestChargedSchedule) {
    // Windows of 6 references; phase 2 starts with window 5. Free switching takes per window the
    // fewer misses: 3 (first window, both experts) + 0 + 0 + 0 (LRU) + 5 x 4 (LFU) = 23. Charged:
    // LRU for four windows (3), then LFU, whose cache then holds A, which LRU's does not (refill
    // 1), and 20 misses: 24, one switch.
    const SwitchingHindsight h = switching_hindsight(two_phases(), cache_of(2), 6);
    EXPECT_EQ(h.references, 54u);
    EXPECT_EQ(h.windows, 9u);
    EXPECT_EQ(h.lru_misses, 33u);
    EXPECT_EQ(h.lfu_misses, 41u);
    EXPECT_EQ(h.free_switching_misses, 23u);
    EXPECT_EQ(h.charged_switching_misses, 24u);
    EXPECT_EQ(h.charged_switches, 1u);
}

TEST(Hindsight, OneWindowLeavesNothingToSwitch) {
    const SwitchingHindsight h = switching_hindsight(two_phases(), cache_of(2), 1000);
    EXPECT_EQ(h.windows, 1u);
    EXPECT_EQ(h.free_switching_misses, h.best_single());
    EXPECT_EQ(h.charged_switching_misses, h.best_single());
    EXPECT_EQ(h.charged_switches, 0u);
}

TEST(Hindsight, ExpertsMissAsTheSimulatorSaysAndTheSchedulesAreBounded) {
    for (const char* kind : {"poisson", "irm", "switching"}) {
        const Trace trace = generate_named(kind, 40000, 3, 4096);
        for (const std::uint64_t lines : {64u, 512u}) {
            SimConfig config = cache_of(lines * 4096);
            const SwitchingHindsight h = switching_hindsight(trace, config, 500);
            config.policy = "lru";
            EXPECT_EQ(h.lru_misses, simulate(trace, config).misses) << kind << " " << lines;
            config.policy = "lfu";
            EXPECT_EQ(h.lfu_misses, simulate(trace, config).misses) << kind << " " << lines;
            EXPECT_EQ(h.mode, SimMode::block);
            EXPECT_EQ(h.capacity, lines);
            EXPECT_LE(h.free_switching_misses, h.charged_switching_misses) << kind << " " << lines;
            EXPECT_LE(h.charged_switching_misses, h.best_single()) << kind << " " << lines;
        }
    }
}

TEST(Hindsight, TrafficThatSwitchesRegimeRewardsSwitchingEvenWithRefills) {
    const Trace trace = generate_named("switching", 0, 1, 4096);
    const SwitchingHindsight h = switching_hindsight(trace, cache_of(64 * 4096), 1000);
    EXPECT_GE(h.charged_switches, 1u);
    EXPECT_LT(h.charged_switching_misses, h.best_single());
}

TEST(Hindsight, BadArgumentsAreRefusedAsBySimulate) {
    EXPECT_THROW(switching_hindsight(two_phases(), cache_of(2), 0), std::invalid_argument);
    EXPECT_THROW(switching_hindsight(two_phases(), cache_of(0), 10), std::invalid_argument);
    SimConfig block = cache_of(1 << 20);
    block.mode = SimMode::block;
    try {
        switching_hindsight(two_phases(), block, 10);
        FAIL() << "block mode on an object trace was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("block mode needs a block trace"), std::string::npos)
            << e.what();
    }
}

} // namespace
