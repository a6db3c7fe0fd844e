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

// Quick sweeps of the lab's hdd behind its blk-throttle limit (20 MiB/s, 197 IOPS, 100 ms
// slices), as three runs measured them: each point lasts about one slice, so the slice's burst
// makes some points beat the limit (48 IOs of 2 KiB in 0.1 s) and others take two slices. Told the
// device is throttled, the fit keeps the limit and the 4 KiB reference chunk: every IO up to
// 64 KiB costs about 1/197 s. Not told, the first run's fit took 128 KiB for the block size (a
// 4 KiB IO then costs a 128 KiB read-modify-write: 316 KiB/s where the limit passes 788 KiB/s),
// the others' a 3-3.8 ms latency without the limit (3.1 ms per 4 KiB IO where it takes 5.1 ms).
// Each point: chunk bytes, IOs, seconds (the `sweep` of the hdd's calibration map).
struct MeasuredPoint {
    std::uint64_t chunk;
    int ios;
    double seconds;
};
const std::vector<std::vector<MeasuredPoint>> throttled_sweeps = {
    {
        {512, 31, 0.10512},
        {1024, 20, 0.0999203},
        {2048, 48, 0.0996238},
        {4096, 28, 0.104074},
        {6144, 22, 0.0996708},
        {8192, 33, 0.106289},
        {12288, 25, 0.102676},
        {32768, 33, 0.196499},
        {131072, 30, 0.104601},
        {524288, 8, 0.200098},
        {2097152, 3, 0.200352},
    },
    {
        {512, 35, 0.105038},
        {1024, 20, 0.100014},
        {2048, 50, 0.0990513},
        {4096, 40, 0.200022},
        {6144, 26, 0.0990779},
        {8192, 28, 0.10731},
        {12288, 24, 0.102402},
        {32768, 20, 0.100072},
        {131072, 17, 0.102967},
        {524288, 8, 0.200082},
        {2097152, 3, 0.200778},
    },
    {
        {512, 21, 0.100211},
        {1024, 20, 0.0999416},
        {2048, 48, 0.0999481},
        {4096, 29, 0.102966},
        {6144, 20, 0.100001},
        {8192, 41, 0.203715},
        {12288, 21, 0.099993},
        {32768, 21, 0.100193},
        {131072, 17, 0.102986},
        {524288, 4, 0.100085},
        {2097152, 3, 0.200667},
    },
};

TEST(Eq3Fit, KeepsTheLimitAndTheReferenceChunkOnAThrottledDevice) {
    for (const std::vector<MeasuredPoint>& points : throttled_sweeps) {
        std::vector<SweepSample> samples;
        for (const MeasuredPoint& point : points)
            samples.push_back({point.chunk, point.seconds / point.ios});
        Eq3FitOptions o;
        o.reference_chunk = 4096;
        o.max_iops = 197;
        const Eq3Fit unaware = fit_eq3(samples, o);
        EXPECT_TRUE(unaware.chunk_detected ||
                    std::abs(eq3_seconds_per_io(unaware.parameters, 4096) - 1.0 / 197) > 0.2 / 197)
            << "unaware of the limit, the fit misreads the slices";
        o.throttled = true;
        const Eq3Fit fit = fit_eq3(samples, o);
        EXPECT_FALSE(fit.chunk_detected);
        EXPECT_EQ(fit.parameters.chunk, 4096u);
        EXPECT_EQ(fit.parameters.max_iops, 197);
        for (const std::uint64_t bytes : {4096u, 65536u})
            EXPECT_NEAR(eq3_seconds_per_io(fit.parameters, bytes), 1.0 / 197, 0.2 / 197)
                << bytes << " B: the limit's interval";
    }
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
