// Measured cost curves of synchronous writes: interpolation, extrapolation, and the clean-ups a
// noisy calibration needs.
#include "iosig/cachesim/cost_curve.hpp"

#include <gtest/gtest.h>

namespace iosig::cachesim {
namespace {

// 4 KiB: 100 us, 64 KiB: 160 us, 1 MiB: 700 us (the shape of this machine's virtio disk: a steep
// start, then the streaming rate).
CostCurve disk() {
    return CostCurve({{65536, 160e-6}, {4096, 100e-6}, {1048576, 700e-6}});
}

TEST(CostCurve, IsExactAtTheMeasuredSizes) {
    const CostCurve c = disk();
    EXPECT_DOUBLE_EQ(c.cost(4096), 100e-6);
    EXPECT_DOUBLE_EQ(c.cost(65536), 160e-6);
    EXPECT_DOUBLE_EQ(c.cost(1048576), 700e-6);
}

TEST(CostCurve, InterpolatesLinearlyBetweenNeighbours) {
    const CostCurve c = disk();
    // halfway between 4 KiB and 64 KiB
    EXPECT_DOUBLE_EQ(c.cost(34816), 130e-6);
    // a quarter of the way from 64 KiB to 1 MiB: 160 + 540 / 4 us
    EXPECT_NEAR(c.cost(65536 + 245760), 295e-6, 1e-12);
}

TEST(CostCurve, ContinuesTheLastSlopeBeyondTheLargestSize) {
    const CostCurve c = disk();
    const double slope = (700e-6 - 160e-6) / (1048576 - 65536);
    EXPECT_NEAR(c.cost(4 * 1048576.0), 700e-6 + 3 * 1048576.0 * slope, 1e-12);
}

TEST(CostCurve, BelowTheSmallestSizeKeepsAtLeastHalfItsCost) {
    const CostCurve c = disk();
    const double slope = (160e-6 - 100e-6) / (65536 - 4096);
    EXPECT_NEAR(c.cost(2048), 100e-6 - 2048 * slope, 1e-12); // the first segment's line
    const CostCurve steep({{4096, 100e-6}, {8192, 400e-6}});
    EXPECT_DOUBLE_EQ(steep.cost(512), 50e-6); // the line would go below zero
}

TEST(CostCurve, ALargerWriteNeverCostsLess) {
    // a noisy median at 64 KiB below the 4 KiB one is lifted to it
    const CostCurve c({{4096, 100e-6}, {65536, 90e-6}, {1048576, 700e-6}});
    EXPECT_DOUBLE_EQ(c.cost(65536), 100e-6);
    EXPECT_DOUBLE_EQ(c.cost(20000), 100e-6);
}

TEST(CostCurve, DropsUnusablePointsAndKeepsTheLastOfEqualSizes) {
    const CostCurve c({{0, 1e-3}, {4096, -1}, {4096, 100e-6}, {8192, 0}, {4096, 120e-6}});
    ASSERT_EQ(c.points().size(), 1u);
    EXPECT_DOUBLE_EQ(c.cost(1 << 20), 120e-6); // one point: flat
    EXPECT_TRUE(CostCurve().empty());
    EXPECT_DOUBLE_EQ(CostCurve().cost(4096), 0);
}

} // namespace
} // namespace iosig::cachesim
