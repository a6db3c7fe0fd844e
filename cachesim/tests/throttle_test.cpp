// The kernel's position control and dirty-ratelimit estimation (NOTES.md names), hand-computed.
#include "iosig/cachesim/throttle.hpp"

#include <gtest/gtest.h>

namespace iosig::cachesim {
namespace {

constexpr double MiB = 1024.0 * 1024.0;

DirtyThresholds thresholds() {
    DirtyThresholds t;
    t.background = 10 * MiB;
    t.hard = 20 * MiB;
    t.limit = 20 * MiB;
    return t; // freerun 15 MiB, setpoint 17.5 MiB
}

TEST(Thresholds, FreerunAndSetpoint) {
    const DirtyThresholds t = thresholds();
    EXPECT_DOUBLE_EQ(t.freerun(), 15 * MiB);
    EXPECT_DOUBLE_EQ(t.setpoint(), 17.5 * MiB);
    DirtyThresholds smoothed = t;
    smoothed.limit = 30 * MiB; // the kernel's limit still following a lowered threshold down
    EXPECT_DOUBLE_EQ(smoothed.setpoint(), 22.5 * MiB);
}

TEST(PosRatio, IsTwoAtFreerunOneAtSetpointZeroAtLimit) {
    const DirtyThresholds t = thresholds();
    EXPECT_DOUBLE_EQ(pos_ratio(t, 15 * MiB), 2.0);
    EXPECT_DOUBLE_EQ(pos_ratio(t, 17.5 * MiB), 1.0);
    EXPECT_DOUBLE_EQ(pos_ratio(t, 20 * MiB), 0.0);
    EXPECT_DOUBLE_EQ(pos_ratio(t, 25 * MiB), 0.0);
    EXPECT_DOUBLE_EQ(pos_ratio(t, 1 * MiB), 2.0); // clamped
}

TEST(PosRatio, FollowsTheCubic) {
    const DirtyThresholds t = thresholds();
    // x = (17.5 - 16) / 2.5 = 0.6 -> 1 + 0.216
    EXPECT_NEAR(pos_ratio(t, 16 * MiB), 1.216, 1e-12);
    // x = (17.5 - 18.75) / 2.5 = -0.5 -> 1 - 0.125
    EXPECT_NEAR(pos_ratio(t, 18.75 * MiB), 0.875, 1e-12);
}

TEST(Classify, ThreeStates) {
    const DirtyThresholds t = thresholds();
    EXPECT_EQ(classify(t, 10 * MiB, false), CacheState::no_flush); // at the threshold: not above
    EXPECT_EQ(classify(t, 5 * MiB, true), CacheState::background_flush); // expired data
    EXPECT_EQ(classify(t, 10 * MiB + 1, false), CacheState::background_flush);
    EXPECT_EQ(classify(t, 15 * MiB, false), CacheState::background_flush);
    EXPECT_EQ(classify(t, 15 * MiB + 1, false), CacheState::throttled);
}

TEST(MedianSleepTime, RoundsThePacedPauseToWholeSleeps) {
    // 12 ms sleeps: a write owing 4 ms sleeps in a third of the runs, so a typical run does not.
    EXPECT_DOUBLE_EQ(median_sleep_time(0.004, 0.012), 0);
    // Owing 7 ms it sleeps in 7/12 of the runs: typically once.
    EXPECT_DOUBLE_EQ(median_sleep_time(0.007, 0.012), 0.012);
    // Owing 30 ms: twice or three times, twice more often (frac 0.5 rounds away from zero).
    EXPECT_DOUBLE_EQ(median_sleep_time(0.029, 0.012), 0.024);
    EXPECT_DOUBLE_EQ(median_sleep_time(0.031, 0.012), 0.036);
}

TEST(MedianSleepTime, WithoutAMeasuredSleepThePauseStaysContinuous) {
    EXPECT_DOUBLE_EQ(median_sleep_time(0.004, 0), 0.004);
    EXPECT_DOUBLE_EQ(median_sleep_time(0, 0.012), 0);
}

TEST(DirtyRatelimit, WaitsUntilPreviousAndNewEstimatesAgree) {
    const DirtyThresholds t = thresholds();
    DirtyRatelimit r(100 * MiB, 4096);
    // Above the setpoint (pos_ratio 0.875): task rate 87.5 MiB/s, the device writes 50 MiB/s, the
    // task dirtied at its limit -> balanced = 87.5 * 50 / 87.5 = 50 MiB/s. The previous balanced
    // estimate (the initial 100 MiB/s) is the largest of the three: no step yet.
    r.update(t, 18.75 * MiB, 87.5 * MiB * 0.2, 0.2, 50 * MiB);
    EXPECT_DOUBLE_EQ(r.rate(), 100 * MiB);
    EXPECT_DOUBLE_EQ(r.balanced(), 50 * MiB);
    // Now max(50, 50, 87.5) = 87.5: step 12.5 MiB/s = 3200 pages/s, rate 25600 pages/s,
    // shift = 25600 / 6401 = 3, step = ((3200 >> 3) + 7) / 8 = 50 pages/s.
    r.update(t, 18.75 * MiB, 87.5 * MiB * 0.2, 0.2, 50 * MiB);
    EXPECT_DOUBLE_EQ(r.rate(), 100 * MiB - 50 * 4096.0);
}

TEST(DirtyRatelimit, NeverExceedsTheWriteBandwidthEstimateWhenRising) {
    const DirtyThresholds t = thresholds();
    DirtyRatelimit r(10 * MiB, 4096);
    for (int i = 0; i < 1000; ++i)
        r.update(t, 16 * MiB, 10 * MiB * 1.216 * 0.2, 0.2, 50 * MiB);
    EXPECT_GT(r.rate(), 10 * MiB);
    EXPECT_LE(r.rate(), 50 * MiB);
}

} // namespace
} // namespace iosig::cachesim
