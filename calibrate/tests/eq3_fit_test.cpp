// Fitting Eq. 3 to a chunk sweep: parameters recovered from model data with noise, block sizes
// (including a non-power-of-two one like the paper's 22 KB NFS) detected, IOPS limits honoured,
// disturbed points ignored, and the fitted curve is exactly the core's Eq. 3.
#include "eq3_fit.hpp"
#include "io_buffer.hpp"
#include "iosig/throughput.hpp"
#include "measure.hpp"

#include <cmath>
#include <gtest/gtest.h>

namespace iosig::calibrate {
namespace {

std::vector<SweepSample> synthesize(const Eq3Parameters& p,
                                    const std::vector<std::uint64_t>& chunks, double noise,
                                    std::uint64_t seed = 1) {
    Random r(seed);
    std::vector<SweepSample> out;
    for (std::uint64_t c : chunks) {
        const double jitter = 1 + noise * ((static_cast<double>(r.below(2001)) - 1000) / 1000.0);
        out.push_back({c, eq3_seconds_per_io(p, c) * jitter});
    }
    return out;
}

TEST(Eq3Fit, ModelTimeIsTheInverseOfTheCoresEq3) {
    Random r(7);
    for (int i = 0; i < 200; ++i) {
        Eq3Parameters p;
        p.latency = 1e-6 * static_cast<double>(1 + r.below(5000));
        p.write_bw = 1e6 * static_cast<double>(1 + r.below(5000));
        p.read_bw = 1e6 * static_cast<double>(1 + r.below(5000));
        p.max_iops = r.below(2) ? 0 : static_cast<double>(100 + r.below(100000));
        p.chunk = 512 * (1 + r.below(64));
        const std::uint64_t ds = 1 + r.below(std::uint64_t(64) << 20);
        const double core = eq3_throughput(p, ds);
        const double ours = static_cast<double>(ds) / eq3_seconds_per_io(p, ds);
        EXPECT_NEAR(ours / core, 1.0, 1e-9) << "ds=" << ds << " cs=" << p.chunk;
    }
}

TEST(Eq3Fit, RecoversParametersFromNoisyModelData) {
    Eq3Parameters truth;
    truth.latency = 100e-6;
    truth.write_bw = 500e6;
    truth.read_bw = 1e9;
    truth.chunk = 4096;
    const auto samples = synthesize(truth, sweep_chunks(true, 64 << 20, 512), 0.03);
    Eq3FitOptions o;
    o.reference_chunk = 4096;
    const Eq3Fit fit = fit_eq3(samples, o);
    EXPECT_EQ(fit.parameters.chunk, 4096u);
    EXPECT_FALSE(fit.chunk_detected);
    EXPECT_NEAR(fit.parameters.latency, truth.latency, 0.1 * truth.latency);
    EXPECT_NEAR(fit.parameters.write_bw, truth.write_bw, 0.05 * truth.write_bw);
    EXPECT_NEAR(fit.parameters.read_bw, truth.read_bw, 0.3 * truth.read_bw);
    EXPECT_LT(fit.median_relative_error, 0.03);
    EXPECT_EQ(fit.predicted_throughput.size(), samples.size());
}

TEST(Eq3Fit, DetectsANonPowerOfTwoBlockSize) {
    // The IOSIG paper's NFS mount behaved as if its block were 22 KB.
    Eq3Parameters truth;
    truth.latency = 300e-6;
    truth.write_bw = 100e6;
    truth.read_bw = 120e6;
    truth.chunk = 22 * 1024;
    const auto samples = synthesize(truth, sweep_chunks(true, 64 << 20, 512), 0.02);
    Eq3FitOptions o;
    o.reference_chunk = 4096; // what statvfs would claim
    const Eq3Fit fit = fit_eq3(samples, o);
    EXPECT_TRUE(fit.chunk_detected);
    EXPECT_EQ(fit.parameters.chunk, 22u * 1024);
    EXPECT_LT(fit.small_chunk_error, 0.03);
    // The fs block size explains the small chunks badly (large chunks fit any block size).
    EXPECT_GT(fit.reference_small_chunk_error, 2 * fit.small_chunk_error);
}

TEST(Eq3Fit, KeepsTheReferenceBlockSizeWhenNothingFitsClearlyBetter) {
    Eq3Parameters truth;
    truth.latency = 20e-6;
    truth.write_bw = 2e9;
    truth.read_bw = 0; // no read-modify-write penalty: every chunk explains the data equally
    truth.chunk = 4096;
    const Eq3Fit fit =
        fit_eq3(synthesize(truth, sweep_chunks(false, 64 << 20, 512), 0.05), Eq3FitOptions{});
    EXPECT_FALSE(fit.chunk_detected);
    EXPECT_EQ(fit.parameters.chunk, 4096u);
}

TEST(Eq3Fit, UsesTheMeasuredIopsLimit) {
    // A throttled disk: 20 MiB/s and 200 IOPS, nothing else.
    Eq3Parameters truth;
    truth.latency = 0;
    truth.write_bw = 20 * 1048576.0;
    truth.max_iops = 200;
    truth.chunk = 512;
    const auto samples = synthesize(truth, sweep_chunks(false, 16 << 20, 512), 0.02);
    Eq3FitOptions o;
    o.reference_chunk = 4096;
    o.max_iops = 200;
    const Eq3Fit fit = fit_eq3(samples, o);
    EXPECT_EQ(fit.parameters.max_iops, 200);
    EXPECT_NEAR(fit.parameters.write_bw, truth.write_bw, 0.05 * truth.write_bw);
    EXPECT_LT(fit.median_relative_error, 0.03);
}

TEST(Eq3Fit, IgnoresDisturbedPoints) {
    Eq3Parameters truth;
    truth.latency = 80e-6;
    truth.write_bw = 1e9;
    truth.chunk = 4096;
    auto samples = synthesize(truth, sweep_chunks(false, 64 << 20, 512), 0.01);
    samples[3].seconds_per_io *= 6; // a journal commit during this point
    samples[9].seconds_per_io *= 4;
    const Eq3Fit fit = fit_eq3(samples, Eq3FitOptions{});
    EXPECT_NEAR(fit.parameters.latency, truth.latency, 0.1 * truth.latency);
    EXPECT_NEAR(fit.parameters.write_bw, truth.write_bw, 0.05 * truth.write_bw);
    EXPECT_LT(fit.median_relative_error, 0.02);
    EXPECT_GT(fit.max_relative_error, 0.7); // the disturbed points are still reported
}

TEST(Eq3Fit, RefusesTooFewPoints) {
    EXPECT_THROW(fit_eq3({{4096, 1e-4}, {8192, 2e-4}}, Eq3FitOptions{}), std::invalid_argument);
}

TEST(SweepChunks, CoversHalfAKibibyteToSixtyFourMebibytes) {
    const auto quick = sweep_chunks(false, 64 << 20, 512);
    EXPECT_EQ(quick.front(), 512u);
    EXPECT_EQ(quick.back(), 64u << 20);
    EXPECT_LE(quick.size(), 16u);
    const auto full = sweep_chunks(true, 64 << 20, 512);
    EXPECT_GT(full.size(), 50u);
    EXPECT_NE(std::find(full.begin(), full.end(), 22528u), full.end()); // 22 KiB is a sweep point
    for (std::uint64_t c : sweep_chunks(true, 64 << 20, 4096))
        EXPECT_EQ(c % 4096, 0u);
}

} // namespace
} // namespace iosig::calibrate
