// The measured cost curve on the real root disk: the calibration yields one point per size of its
// doubling grid, and the curve predicts a stream of one size measured right after it.
#include "calibrate.hpp"
#include "iosig/cachesim/cost_curve.hpp"
#include "iosig/cachesim/workload.hpp"
#include "real_run.hpp"
#include "regression.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

namespace iosig::cachesim {
namespace {

constexpr std::uint64_t KiB = 1024;

TEST(MeasuredCostCurve, PredictsAStreamOfOneSizeOnTheRootDisk) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (O_DIRECT on /var/tmp, the root disk)";
    const auto dir =
        std::filesystem::path("/var/tmp") / ("iosig-cachesim-curve-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    struct RemoveOnExit {
        std::filesystem::path path;
        ~RemoveOnExit() { std::filesystem::remove_all(path); }
    } cleanup{dir};
    validate::CalibrationSetup setup;
    setup.dir = dir;
    setup.repetitions = 3;
    CostCurve curve;
    validate::measure_direct(setup, nullptr, &curve);
    ASSERT_EQ(curve.points().size(), 13u); // 4 KiB .. 16 MiB, doubling
    EXPECT_EQ(curve.points().front().first, 4.0 * KiB);
    for (std::size_t i = 1; i < curve.points().size(); ++i)
        EXPECT_EQ(curve.points()[i].first, 2 * curve.points()[i - 1].first);
    // Real times of a real disk: a 16 MiB write takes longer than a 4 KiB one, and neither takes
    // a second.
    EXPECT_GT(curve.points().back().second, 4 * curve.points().front().second);
    EXPECT_LT(curve.points().back().second, 1.0);

    // 96 KiB lies between two measured sizes. The disk's speed wanders by 10-30 % between
    // moments (docs/performance.md), so the bound is loose; a wrong unit or size would be off by
    // orders of magnitude.
    const auto w = sequential_workload(32 * 96 * KiB, 96 * KiB, 0);
    std::vector<double> costs;
    for (int round = 0; round < 3; ++round) {
        const validate::RunTimings t =
            validate::run_workload(dir / "stream.dat", Method::direct, w);
        ASSERT_TRUE(t.ok()) << t.error;
        for (std::size_t i = 2; i < w.size(); ++i)
            costs.push_back(t.cost(i));
    }
    const double measured = validate::median(costs);
    const double model = curve.cost(96.0 * KiB);
    RecordProperty("model_s", std::to_string(model));
    RecordProperty("measured_s", std::to_string(measured));
    EXPECT_NEAR(model, measured, 0.5 * measured)
        << "curve at 96 KiB " << model << " s, stream of 96 KiB writes " << measured << " s";
}

} // namespace
} // namespace iosig::cachesim
