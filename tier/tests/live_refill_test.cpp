// The live-refill estimate behind the learner's shadow switch (tier/src/policy/live_refill.hpp):
// lines that have sat outside an expert's shadow for ages at which nothing ever came back count as
// dead, lines of ages not yet observed count as alive, and revivals seen at an age make lines of
// that age and younger count again.
#include "policy/live_refill.hpp"

#include <gtest/gtest.h>
#include <random>
#include <vector>

namespace iosig::tier::detail {
namespace {

TEST(EpochCounts, PrefixSumsMatchABruteForceCountAcrossGrowth) {
    EpochCounts counts;
    std::vector<std::int64_t> reference;
    std::mt19937_64 rng(7);
    for (std::uint64_t epoch = 0; epoch < 5000; ++epoch) {
        reference.push_back(0);
        const std::int64_t added = static_cast<std::int64_t>(rng() % 5);
        counts.add(epoch, added);
        reference[epoch] += added;
        // Remove from an older epoch, as lines leave the outside set out of order.
        const std::uint64_t older = rng() % (epoch + 1);
        if (reference[older] > 0) {
            counts.add(older, -1);
            --reference[older];
        }
        if (epoch % 97 == 0) {
            std::int64_t sum = 0;
            for (std::uint64_t e = 0; e <= epoch; ++e) {
                ASSERT_EQ(counts.before(e), sum) << "before " << e << " at epoch " << epoch;
                sum += reference[e];
            }
            ASSERT_EQ(counts.before(epoch + 1), sum);
            ASSERT_EQ(counts.between(epoch / 3, epoch),
                      counts.before(epoch + 1) - counts.before(epoch / 3));
        }
    }
}

TEST(LiveRefillEstimate, LinesOfUnobservedAgesCountAsAlive) {
    LiveRefillEstimate estimate;
    for (Slot s = 0; s < 1000; ++s)
        estimate.left_shadow(s, 0);
    // Nothing has been outside long enough to say anything. The prior (one revival per line-epoch
    // where nothing was exposed) makes each line cost 1 - exp(-1/2), 0.39 of a miss, in the one
    // age bucket that exists so far.
    EXPECT_GT(estimate.expected_live(0), 390.0);
    EXPECT_LE(estimate.expected_live(0), 1000.0);
}

TEST(LiveRefillEstimate, LinesOutsideForAgesNothingCameBackFromCountAsDead) {
    LiveRefillEstimate estimate;
    for (Slot s = 0; s < 1000; ++s)
        estimate.left_shadow(s, 0);
    for (std::uint64_t epoch = 0; epoch < 2000; ++epoch)
        estimate.close_epoch(epoch);
    // 1000 lines, 2000 epochs, not one asked for again: they are the polluting dead lines.
    EXPECT_LT(estimate.expected_live(2000), 10.0);
}

TEST(LiveRefillEstimate, RevivalsAtAnAgeMakeLinesOfThatAgeCountAgain) {
    // Two populations that both left 2000 epochs ago; in one, a line is asked for again every few
    // epochs, so the lines of that age still outside are alive.
    LiveRefillEstimate dead, revived;
    for (Slot s = 0; s < 2000; ++s) {
        dead.left_shadow(s, 0);
        revived.left_shadow(s, 0);
    }
    Slot next_revival = 0;
    for (std::uint64_t epoch = 0; epoch < 2000; ++epoch) {
        if (epoch % 2 == 1) revived.ended(next_revival++, epoch, true);
        dead.close_epoch(epoch);
        revived.close_epoch(epoch);
    }
    const double live = revived.expected_live(2000);
    EXPECT_GT(live, 100.0) << "1000 lines left, revived at one per two epochs";
    EXPECT_GT(live, 10 * dead.expected_live(2000));
}

TEST(LiveRefillEstimate, LinesThatEndWithoutRevivalLeaveTheEstimate) {
    LiveRefillEstimate estimate;
    for (Slot s = 0; s < 100; ++s)
        estimate.left_shadow(s, 5);
    const double before = estimate.expected_live(5);
    for (Slot s = 0; s < 50; ++s)
        estimate.ended(s, 5, false); // evicted from the real cache: nothing left to refill
    EXPECT_NEAR(estimate.expected_live(5), before / 2, before * 0.01);
}

} // namespace
} // namespace iosig::tier::detail
