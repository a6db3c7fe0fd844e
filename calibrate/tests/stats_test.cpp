// Percentiles, least squares and non-negative least squares used by every regression.
#include "stats.hpp"

#include <cmath>
#include <gtest/gtest.h>

namespace iosig::calibrate {
namespace {

TEST(Stats, PercentilesInterpolateBetweenRanks) {
    const std::vector<double> v = {5, 1, 4, 2, 3};
    EXPECT_DOUBLE_EQ(percentile(v, 0.0), 1);
    EXPECT_DOUBLE_EQ(percentile(v, 0.5), 3);
    EXPECT_DOUBLE_EQ(percentile(v, 1.0), 5);
    EXPECT_DOUBLE_EQ(percentile(v, 0.25), 2);
    EXPECT_DOUBLE_EQ(percentile({1, 2}, 0.5), 1.5);
    EXPECT_DOUBLE_EQ(median({}), 0);
}

TEST(Stats, LineFitRecoversInterceptAndSlope) {
    std::vector<double> x, y;
    for (int i = 1; i <= 20; ++i) {
        x.push_back(i * 1000.0);
        y.push_back(2e-6 + 3e-10 * i * 1000.0);
    }
    const auto fit = fit_line(x, y);
    ASSERT_TRUE(fit);
    EXPECT_NEAR(fit->intercept, 2e-6, 1e-12);
    EXPECT_NEAR(fit->slope, 3e-10, 1e-16);
    EXPECT_NEAR(fit->r_squared, 1.0, 1e-9);
    EXPECT_FALSE(fit_line({1, 1, 1}, {1, 2, 3})); // no spread in x: no slope
    EXPECT_FALSE(fit_line({1}, {1}));
}

TEST(Stats, RobustLineIgnoresADisturbedPoint) {
    std::vector<double> x, y;
    for (int i = 0; i < 12; ++i) {
        x.push_back(std::pow(2.0, i) * 512);
        y.push_back(1e-5 + 1e-9 * x.back());
    }
    y[5] *= 8; // one size timed while another process ran
    const auto robust = fit_line_robust(x, y);
    ASSERT_TRUE(robust);
    EXPECT_NEAR(robust->slope, 1e-9, 1e-12);
    EXPECT_NEAR(robust->intercept, 1e-5, 1e-7);
    EXPECT_FALSE(fit_line_robust({1, 1}, {1, 2}));
}

TEST(Stats, NonNegativeLeastSquaresClampsAtZero) {
    // y = 2*a - 0.5*b has a negative coefficient; the best non-negative fit drops b.
    std::vector<std::vector<double>> rows;
    std::vector<double> y;
    for (int i = 0; i < 10; ++i) {
        const double a = 1 + i, b = 0.5 * i;
        rows.push_back({a, b});
        y.push_back(2 * a - 0.5 * b);
    }
    const auto b = nonnegative_least_squares(rows, y);
    ASSERT_TRUE(b);
    EXPECT_GE((*b)[0], 0);
    EXPECT_EQ((*b)[1], 0);
    // Exact non-negative data is recovered exactly.
    for (std::size_t i = 0; i < rows.size(); ++i)
        y[i] = 2 * rows[i][0] + 0.5 * rows[i][1];
    const auto exact = nonnegative_least_squares(rows, y);
    ASSERT_TRUE(exact);
    EXPECT_NEAR((*exact)[0], 2, 1e-9);
    EXPECT_NEAR((*exact)[1], 0.5, 1e-9);
}

} // namespace
} // namespace iosig::calibrate
