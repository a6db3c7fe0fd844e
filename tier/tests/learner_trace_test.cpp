// The learner against the better of LRU and LFU on the shared cloudPhysics trace at more sizes than
// the golden eight (docs/tier.md, "The learner"): object mode every 32 MiB, and block mode (4 KiB
// lines) at sizes that cover each kind of behaviour seen in the full sweep: no switch, one switch
// that pays (1008 MiB), a late decisive lead for LRU that must not be followed (96-512 MiB), Random
// leading right after the cache fills (object mode, 592 MiB). Block
// mode still has sizes above the target (docs/tier.md lists them); those are held to their
// measured bound so that they cannot silently get worse.
#include "iosig/tier/simulator.hpp"
#include "learner_compare.hpp"
#include "trace_fixture.hpp"

#include <algorithm>
#include <gtest/gtest.h>
#include <initializer_list>

namespace iosig::tier {
namespace {

using test_support::Misses;
using test_support::within;

Misses compare(const Trace& trace, std::uint64_t cache_size) {
    return test_support::compare_learner(trace, cache_size); // block mode: 4 KiB lines
}

TEST(LearnerOnSharedTrace, ObjectModeWithinOnePercentEvery32MiB) {
    const Trace* trace = test_support::cloud_physics_oracle();
    IOSIG_REQUIRE_TRACE(trace, "cloudPhysicsIO.oracleGeneral.bin");
    for (std::uint64_t mib = 32; mib <= 1024; mib += 32) {
        const Misses m = compare(*trace, mib << 20);
        EXPECT_TRUE(within(m, 1)) << mib << " MiB: lru " << m.lru << " lfu " << m.lfu << " ws "
                                  << m.ws;
    }
    // Random led the weights right after the cache filled; a decisive switch to it cost 6.4 %.
    const Misses m = compare(*trace, 592ull << 20);
    EXPECT_TRUE(within(m, 1)) << "592 MiB: lru " << m.lru << " lfu " << m.lfu << " ws " << m.ws;
}

TEST(LearnerOnSharedTrace, BlockModeWithinOnePercent) {
    const Trace* trace = test_support::cloud_physics_csv();
    IOSIG_REQUIRE_TRACE(trace, "cloudPhysicsIO.csv");
    // 16 MiB: LRU better; 208-592 MiB: LFU better, the learner must not switch away; 1008 MiB: LRU
    // better by 11 %, found only after the cache fills near the end of the trace. 96, 128, 384 and
    // 512 MiB: the weights turn decisive for LRU late in the trace (after epoch 971), and a switch
    // then cost 4-22 % before decisive switches were kept to the first 128 epochs. 528 and
    // 576 MiB: a switch to LRU that had barely saved its refill (3,859 misses against 3,849 lines)
    // cost 19.5 / 15.9 % before the refill margin (PolicyConfig::refill_margin).
    for (const std::uint64_t mib : {16, 96, 128, 208, 320, 384, 512, 528, 576, 592, 640, 1008}) {
        const Misses m = compare(*trace, mib << 20);
        EXPECT_TRUE(within(m, 1)) << mib << " MiB: lru " << m.lru << " lfu " << m.lfu << " ws "
                                  << m.ws;
    }
}

// Known shortfall (docs/tier.md): at 288 MiB LRU is better by 6 %, but LFU never crosses THRESHOLD
// and the learner reaches LRU only late (3 switches); at 544 MiB LFU is better, but a decisive
// switch to LRU at epoch 695 (inside the decisive window) comes first. Held to the measured bound
// (+3.6 % and +7.0 %) plus a little, so that the tests notice if it gets worse.
TEST(LearnerOnSharedTrace, BlockModeKnownShortfallDoesNotGrow) {
    const Trace* trace = test_support::cloud_physics_csv();
    IOSIG_REQUIRE_TRACE(trace, "cloudPhysicsIO.csv");
    const Misses at288 = compare(*trace, 288ull << 20);
    EXPECT_TRUE(within(at288, 4)) << "lru " << at288.lru << " lfu " << at288.lfu << " ws "
                                  << at288.ws;
    const Misses at544 = compare(*trace, 544ull << 20);
    EXPECT_TRUE(within(at544, 8)) << "lru " << at544.lru << " lfu " << at544.lfu << " ws "
                                  << at544.ws;
}

} // namespace
} // namespace iosig::tier
