// The learner on traces that pollute LFU (docs/tier-learner-evidence.md, "LFU pollution"): copies
// of the shared trace one after the other, each with fresh object ids, so that LFU keeps the old
// copies' frequent objects, which are never asked for again, and evicts the new copy's objects as
// they arrive. LFU's victims are not asked for again within an epoch, so the weights never move;
// the shadow switch must take the learner to LRU. Before it, the learner stayed with LFU: +9.6 % (8
// copies, 512 MiB) and +10.7 % (4 copies, 1 GiB) over LRU.
#include "iosig/tier/simulator.hpp"
#include "learner_compare.hpp"
#include "trace_fixture.hpp"

#include <algorithm>
#include <gtest/gtest.h>

namespace iosig::tier {
namespace {

// `copies` copies of `trace`; the ids of copy k are offset by k x 2^40 (as in
// docs/tier-learner-evidence.md).
Trace copies_with_fresh_ids(const Trace& trace, unsigned copies) {
    Trace out;
    out.source = trace.source + " x" + std::to_string(copies);
    out.kind = trace.kind;
    out.requests.reserve(trace.requests.size() * copies);
    for (std::uint64_t k = 0; k < copies; ++k)
        for (Request r : trace.requests) {
            r.id += k << 40;
            out.requests.push_back(r);
        }
    return out;
}

using test_support::Misses;
using test_support::show;
using test_support::within;

Misses compare(const Trace& trace, std::uint64_t cache_size, const PolicyConfig& learner = {}) {
    return test_support::compare_learner(trace, cache_size, 4096, learner); // object mode
}

TEST(LearnerUnderLfuPollution, FollowsLruOnceOldCopiesPolluteLfu) {
    const Trace* trace = test_support::cloud_physics_oracle();
    IOSIG_REQUIRE_TRACE(trace, "cloudPhysicsIO.oracleGeneral.bin");
    const Trace four = copies_with_fresh_ids(*trace, 4);
    const Misses at1g = compare(four, 1ull << 30);
    ASSERT_GT(at1g.lfu * 100, at1g.lru * 105) << "LFU must be polluted here: " << show(at1g);
    EXPECT_TRUE(within(at1g, 1)) << "4 copies, 1 GiB: " << show(at1g);

    const Trace eight = copies_with_fresh_ids(*trace, 8);
    const Misses at512m = compare(eight, 512ull << 20);
    ASSERT_GT(at512m.lfu * 100, at512m.lru * 105) << "LFU must be polluted here: " << show(at512m);
    EXPECT_TRUE(within(at512m, 1)) << "8 copies, 512 MiB: " << show(at512m);
}

// The same trace without the shadow switch is the failure it fixes: this proves the test above
// measures the shadow switch and not something else that changed.
TEST(LearnerUnderLfuPollution, WithoutTheShadowSwitchTheLearnerStaysWithPollutedLfu) {
    const Trace* trace = test_support::cloud_physics_oracle();
    IOSIG_REQUIRE_TRACE(trace, "cloudPhysicsIO.oracleGeneral.bin");
    PolicyConfig no_shadow_switch;
    no_shadow_switch.shadow_switch_refills = 0;
    const Misses m = compare(copies_with_fresh_ids(*trace, 4), 1ull << 30, no_shadow_switch);
    EXPECT_EQ(m.ws, m.lfu) << show(m);
}

// Known shortfall: at 2 GiB a copy's savings are small against the cache, and the switch comes only
// in the third copy (8 copies: +12.0 %, was +67.2 %; 4 copies: +23.9 %, was +45.1 %). Held to
// the measured bound plus a little so that the tests notice if it gets worse.
TEST(LearnerUnderLfuPollution, KnownShortfallAtTwoGiBDoesNotGrow) {
    const Trace* trace = test_support::cloud_physics_oracle();
    IOSIG_REQUIRE_TRACE(trace, "cloudPhysicsIO.oracleGeneral.bin");
    const Misses m = compare(copies_with_fresh_ids(*trace, 8), 2ull << 30);
    EXPECT_TRUE(within(m, 13)) << "8 copies, 2 GiB: " << show(m);
}

} // namespace
} // namespace iosig::tier
