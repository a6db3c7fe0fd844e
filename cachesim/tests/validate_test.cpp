// The harness's arithmetic: fits, the completion-tick detection, errors and trajectories.
#include "calibrate.hpp"
#include "experiment.hpp"
#include "iosig/cachesim/sync_cost.hpp"
#include "regression.hpp"
#include "scenarios.hpp"

#include <cmath>
#include <gtest/gtest.h>

namespace iosig::cachesim::validate {
namespace {

TEST(Regression, LineThroughExactPoints) {
    const std::vector<double> x = {1, 2, 3, 4}, y = {3, 5, 7, 9};
    const LinearFit f = fit_line(x, y);
    EXPECT_NEAR(f.intercept, 1, 1e-12);
    EXPECT_NEAR(f.slope, 2, 1e-12);
    EXPECT_NEAR(f.r2, 1, 1e-12);
}

TEST(Regression, MediansIgnoreOutliers) {
    // Per size the median: one wild sample per size does not move the line.
    const std::vector<double> x = {1, 1, 1, 2, 2, 2, 3, 3, 3};
    const std::vector<double> y = {3, 3, 300, 5, 5, 500, 7, 7, 700};
    const LinearFit f = fit_line_relative(x, y);
    EXPECT_NEAR(f.intercept, 1, 1e-9);
    EXPECT_NEAR(f.slope, 2, 1e-9);
}

TEST(Regression, SeveralRegressors) {
    // y = 2 + 3 a - 1 b
    const std::vector<std::vector<double>> rows = {{1, 0, 0}, {1, 1, 0}, {1, 0, 1}, {1, 2, 3}};
    const std::vector<double> y = {2, 5, 1, 5};
    const std::vector<double> b = fit_linear(rows, y);
    ASSERT_EQ(b.size(), 3u);
    EXPECT_NEAR(b[0], 2, 1e-9);
    EXPECT_NEAR(b[1], 3, 1e-9);
    EXPECT_NEAR(b[2], -1, 1e-9);
    EXPECT_TRUE(fit_linear({{1, 1}, {1, 1}}, std::vector<double>{1, 2}).empty()); // singular
}

TEST(CompletionTicks, QuantizeRoundsUpToTheNextTick) {
    EXPECT_DOUBLE_EQ(quantize_completion(0.0001, 0.004), 0.004);
    EXPECT_DOUBLE_EQ(quantize_completion(0.0041, 0.004), 0.004); // within the jitter allowance
    EXPECT_DOUBLE_EQ(quantize_completion(0.005, 0.004), 0.008);
    EXPECT_DOUBLE_EQ(quantize_completion(0.005, 0), 0.005);
}

TEST(CompletionTicks, DetectedFromStaircaseMedians) {
    // Medians as this VM produces them: 4, 4, 4.7 (off the staircase), 8, 12 ms.
    const std::vector<double> sizes = {1, 2, 4, 8, 16};
    const std::vector<double> costs = {0.0040, 0.00399, 0.0047, 0.00799, 0.01201};
    const auto medians = per_size_medians(sizes, costs);
    EXPECT_NEAR(detect_quantum(medians), 0.004, 0.0001);
    // A straight line is no staircase.
    const std::vector<double> line = {0.0011, 0.0013, 0.0017, 0.0025, 0.0041};
    EXPECT_EQ(detect_quantum(per_size_medians(sizes, line)), 0);
}

TEST(CompletionTicks, StaircaseFitReproducesTheMedians) {
    // Truth: L = 1 ms, 1 ns/B on 4 ms ticks.
    std::vector<double> sizes, costs;
    for (double s : {1e5, 1e6, 3e6, 6e6, 1.2e7}) {
        sizes.push_back(s);
        costs.push_back(quantize_completion(1e-3 + s * 1e-9, 0.004));
    }
    const auto medians = per_size_medians(sizes, costs);
    const auto [l, b] =
        fit_quantized(medians, 0.004, 1e-9, [](double l, double b, double s) { return l + s * b; });
    for (const SizeMedian& m : medians)
        EXPECT_DOUBLE_EQ(quantize_completion(l + m.size * b, 0.004), m.median);
}

TEST(ThrottleSleep, LengthIsTheExtraOverTheUnpausedMedianPerSleep) {
    // Five 8 MiB writes and one 2 MiB write: unpaused 8 MiB writes cost 2, 3 and 4 ms (median
    // 3 ms); one paused write costs 15 ms with one sleep, one 27 ms with two. The 2 MiB write was
    // paused but has no unpaused writes of its size to compare with, so it is left out.
    const std::uint64_t M = 1 << 20;
    const std::vector<WriteRequest> w = {{0, 8 * M, 0, 0},      {8 * M, 8 * M, 0, 0},
                                         {16 * M, 8 * M, 0, 0}, {24 * M, 8 * M, 0, 0},
                                         {32 * M, 8 * M, 0, 0}, {40 * M, 2 * M, 0, 0}};
    RunTimings run;
    const double costs[] = {0.002, 0.015, 0.003, 0.027, 0.004, 0.020};
    double t = 0;
    for (double c : costs) {
        run.start.push_back(t);
        run.end.push_back(t + c);
        t += c;
    }
    std::vector<double> lengths;
    collect_sleep_lengths({0, 1, 0, 2, 0, 1}, w, run, lengths);
    ASSERT_EQ(lengths.size(), 2u);
    EXPECT_NEAR(lengths[0], 0.012, 1e-12);
    EXPECT_NEAR(lengths[1], 0.012, 1e-12);
}

TEST(Cooling, RecoversHotColdAndTheCoolingTime) {
    const double hot = 1 / 4e10, cold = 1 / 1e10, tau = 0.005;
    std::vector<std::pair<double, double>> points;
    for (double age : {0.1e-3, 0.6e-3, 1.1e-3, 2.2e-3, 4.2e-3, 8.4e-3, 100e-3})
        points.emplace_back(age, cold - (cold - hot) * std::exp(-age / tau));
    const CoolingFit fit = fit_cooling(points);
    EXPECT_NEAR(fit.hot, hot, hot * 1e-6);
    EXPECT_NEAR(fit.cold, cold, cold * 1e-6);
    EXPECT_NEAR(fit.cooling_time, tau, tau * 1e-6);
}

TEST(Cooling, FitsAMeasurementWhoseLastPointsAlmostMeet) {
    // Rewrite rates measured on this VM (session 8): the 8.6 ms point lies 2 % from the 30 ms one.
    // A line through ln(cold - cost) made hot negative here.
    std::vector<std::pair<double, double>> points;
    for (auto [ms, rate] : {std::pair{0.15, 3.534e10},
                            {0.66, 2.849e10},
                            {1.20, 2.3e10},
                            {2.26, 1.802e10},
                            {4.36, 1.193e10},
                            {8.56, 7.53e9},
                            {30.57, 7.364e9}})
        points.emplace_back(ms * 1e-3, 1 / rate);
    const CoolingFit fit = fit_cooling(points);
    EXPECT_DOUBLE_EQ(fit.cold, 1 / 7.364e9);
    EXPECT_GT(1 / fit.hot, 3.5e10); // at age 0, faster than at 0.15 ms
    EXPECT_LT(1 / fit.hot, 6e10);
    EXPECT_GT(fit.cooling_time, 1e-3);
    EXPECT_LT(fit.cooling_time, 10e-3);
}

TEST(Cooling, WithoutADecayOnlyTheYoungestCost) {
    const CoolingFit fit = fit_cooling({{30e-3, 3.03e-6}, {0.1e-3, 3e-6}, {2e-3, 2.98e-6}});
    EXPECT_DOUBLE_EQ(fit.hot, 3e-6);
    EXPECT_EQ(fit.cold, 0);
    EXPECT_EQ(fit.cooling_time, 0);
}

TEST(Errors, MeanRelativeErrorSkipsEmptyMeasurements) {
    EXPECT_DOUBLE_EQ(mean_relative_error({1.1, 0.9, 5}, {1, 1, 0}), 0.1);
}

TEST(Errors, TrajectoryComparedAtTheKernelsSampleTimes) {
    const std::vector<DirtyPoint> model = {{0, 0}, {1, 100}, {2, 100}};
    EXPECT_DOUBLE_EQ(dirty_at(model, 0.5), 50);
    EXPECT_DOUBLE_EQ(dirty_at(model, 5), 100);
    const std::vector<DirtyPoint> kernel = {{0.5, 40}, {1.5, 110}, {9, 0}};
    // |50-40| + |100-110| over 40 + 110 (the sample at 9 s is outside [0, 2])
    EXPECT_DOUBLE_EQ(trajectory_error(model, kernel, 0, 2), 20.0 / 150.0);
    EXPECT_EQ(trajectory_error(model, {}, 0, 2), -1);
}

TEST(Scenarios, CoverThePapersFigures) {
    const auto all = paper_scenarios(1.0);
    for (const char* group : {"direct", "sync", "buffered", "rewrite", "stdio"})
        EXPECT_FALSE(select_scenarios(all, group).empty()) << group;
    EXPECT_EQ(select_scenarios(all, "rewrite").size(), 4u); // cases A-D
    EXPECT_EQ(select_scenarios(all, "buffered-seq,rewrite-A").size(), 2u);
    EXPECT_TRUE(select_scenarios(all, "none").empty()); // only --workload, or only calibrating
    try {
        select_scenarios(all, "direct,rewrite-E");
        ADD_FAILURE() << "an unknown scenario was silently skipped";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("'rewrite-E'"), std::string::npos) << e.what();
    }
    for (const Scenario& s : all) {
        std::uint64_t bytes = 0;
        for (const WriteRequest& w : s.workload)
            bytes += w.size;
        EXPECT_LE(bytes, 512ull << 20) << s.name << ": keep runs modest on a shared machine";
        if (s.method == Method::direct)
            for (const WriteRequest& w : s.workload)
                ASSERT_EQ(w.size % 4096, 0u) << s.name;
    }
}

} // namespace
} // namespace iosig::cachesim::validate
