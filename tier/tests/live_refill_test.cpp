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

// Adds at the newest epoch and removes at random older ones (lines leave the outside set out of
// order); every prefix sum equals a brute-force count in which epochs older than the window count
// at its first epoch.
void check_against_brute_force(std::uint64_t window, std::uint64_t epochs) {
    EpochCounts counts(window);
    std::vector<std::int64_t> reference; // per absolute epoch
    std::mt19937_64 rng(7);
    for (std::uint64_t epoch = 0; epoch < epochs; ++epoch) {
        reference.push_back(0);
        const auto added = static_cast<std::int64_t>(rng() % 5);
        counts.add(epoch, added);
        reference[epoch] += added;
        const std::uint64_t older = rng() % (epoch + 1);
        if (reference[older] > 0) {
            counts.add(older, -1);
            --reference[older];
        }
        const std::uint64_t base = counts.first_kept_epoch();
        ASSERT_LT(epoch - base, 2 * window) << "the window must slide";
        if (epoch % 37 != 0) continue;
        std::int64_t merged = 0; // epochs up to base, all counted at base
        for (std::uint64_t e = 0; e <= base; ++e)
            merged += reference[e];
        ASSERT_EQ(counts.before(base), 0);
        std::int64_t sum = merged;
        for (std::uint64_t e = base + 1; e <= epoch + 1; ++e) {
            ASSERT_EQ(counts.before(e), sum) << "before " << e << " at epoch " << epoch;
            if (e <= epoch) sum += reference[e];
        }
        ASSERT_EQ(counts.between(0, epoch), counts.before(epoch + 1));
    }
}

TEST(EpochCounts, PrefixSumsMatchABruteForceCountAcrossGrowth) {
    check_against_brute_force(std::uint64_t{1} << 16, 5000); // never slides
}

TEST(EpochCounts, OlderEpochsMergeIntoTheWindowSoMemoryStaysBounded) {
    check_against_brute_force(64, 5000); // slides every 64 epochs
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
