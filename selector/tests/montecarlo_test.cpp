// The Monte Carlo simulation of data loss (failures at MTTF, rebuilds at MTTR, bit errors at BER
// with ECC) against Eq. 2, as the paper's Fig. 12 does, with the paper's Sect. 7.4 figures.
#include "iosig/montecarlo.hpp"
#include "iosig/reliability.hpp"
#include "iosig/units.hpp"

#include <cmath>
#include <gtest/gtest.h>

namespace iosig {
namespace {

constexpr double year = seconds_per_year;
constexpr double day = 86400;

MonteCarloSetup paper_setup(unsigned n, unsigned m, double bytes) {
    MonteCarloSetup s;
    s.data_units = n;
    s.parity_units = m;
    s.mttf = 10 * year;
    s.mttr = day;
    s.ber = 1e-6;
    s.sector_bits = 512;
    s.correctable_bits = 2;
    s.file_bits = 8 * bytes;
    s.trials = 100000;
    s.seed = 2024;
    return s;
}

double eq2(const MonteCarloSetup& s) {
    return mttdl_mds(s.data_units, s.parity_units, s.mttf, s.mttr, s.file_bits,
                     uber(s.ber, s.sector_bits, s.correctable_bits));
}

struct Scheme {
    const char* name;
    unsigned n, m;
};

class SimulationMatchesEq2 : public ::testing::TestWithParam<std::tuple<Scheme, double>> {};

TEST_P(SimulationMatchesEq2, WithinFivePercent) {
    const auto [scheme, bytes] = GetParam();
    const MonteCarloSetup setup = paper_setup(scheme.n, scheme.m, bytes);
    const MonteCarloResult mc = simulate_mttdl(setup);
    const double model = eq2(setup);
    ASSERT_EQ(mc.trials, setup.trials);
    // Precise enough for the comparison to mean something.
    EXPECT_LT(mc.standard_error / mc.mean_seconds, 0.015) << scheme.name << " " << bytes;
    EXPECT_NEAR(mc.mean_seconds / model, 1.0, 0.05)
        << scheme.name << " " << bytes << " B: simulated " << mc.mean_seconds / year << " y +- "
        << mc.standard_error / year << ", Eq. 2 " << model / year << " y";
}

INSTANTIATE_TEST_SUITE_P(
    Fig12, SimulationMatchesEq2,
    ::testing::Combine(::testing::Values(Scheme{"raid1", 1, 1}, Scheme{"raid5x5", 4, 1},
                                         Scheme{"replication3", 1, 2}),
                       ::testing::Values(1e9, 1e10, 1e11, 1e12, 1e13)),
    [](const auto& info) {
        return std::string(std::get<0>(info.param).name) + "_" +
               std::to_string(static_cast<long long>(std::get<1>(info.param) / 1e9)) + "GB";
    });

TEST(MonteCarlo, ReproducesThePapersOneTerabyteFigures) {
    const double TiB = 1099511627776.0;
    EXPECT_NEAR(simulate_mttdl(paper_setup(1, 1, TiB)).mean_seconds / year, 12, 1.2);
    EXPECT_NEAR(simulate_mttdl(paper_setup(4, 1, TiB)).mean_seconds / (year / 12), 15, 1.5);
}

TEST(MonteCarlo, FailureBiasingDoesNotBiasTheEstimate) {
    // Losses frequent enough for plain simulation: a weak disk, slow repairs, 3 replicas.
    MonteCarloSetup s = paper_setup(1, 2, 1e9);
    s.mttf = year;
    s.mttr = 20 * day;
    s.trials = 200000;
    MonteCarloResult biased = simulate_mttdl(s);
    s.failure_biasing = false;
    s.seed = 7;
    MonteCarloResult plain = simulate_mttdl(s);
    const double sigma = std::hypot(biased.standard_error, plain.standard_error);
    EXPECT_NEAR(biased.mean_seconds, plain.mean_seconds, 4 * sigma);
    EXPECT_LT(biased.standard_error,
              plain.standard_error); // and it is what makes rare losses cheap
}

TEST(MonteCarlo, IsDeterministicPerSeed) {
    MonteCarloSetup s = paper_setup(1, 2, 1e11);
    s.trials = 5000;
    const MonteCarloResult a = simulate_mttdl(s);
    const MonteCarloResult b = simulate_mttdl(s);
    EXPECT_EQ(a.mean_seconds, b.mean_seconds);
    EXPECT_EQ(a.standard_error, b.standard_error);
    s.seed = 99;
    EXPECT_NE(simulate_mttdl(s).mean_seconds, a.mean_seconds);
}

TEST(MonteCarlo, UnprotectedDataIsLostAtTheFirstFailureOrBadSector) {
    // m = 0: every failure and every uncorrectable sector read loses data: 1/(d (lambda + h mu)).
    const MonteCarloSetup s = paper_setup(2, 0, 1e10);
    EXPECT_NEAR(simulate_mttdl(s).mean_seconds / eq2(s), 1.0, 0.03);
}

TEST(MonteCarlo, BitErrorsBeyondEccShortenTheMttdl) {
    MonteCarloSetup clean = paper_setup(1, 1, 1e12);
    clean.ber = 0;
    MonteCarloSetup noisy = paper_setup(1, 1, 1e12);
    const double clean_years = simulate_mttdl(clean).mean_seconds / year;
    EXPECT_NEAR(clean_years / (eq2(clean) / year), 1.0, 0.05); // mu / (2 lambda^2) = 18 000 y
    EXPECT_LT(simulate_mttdl(noisy).mean_seconds / year, clean_years / 100);
    noisy.correctable_bits = 4; // stronger ECC: bit errors stop mattering at this size
    EXPECT_NEAR(simulate_mttdl(noisy).mean_seconds / year / clean_years, 1.0, 0.05);
}

TEST(MonteCarlo, RejectsImpossibleSetups) {
    MonteCarloSetup s = paper_setup(1, 1, 1e9);
    s.mttr = 0;
    EXPECT_TRUE(std::isnan(simulate_mttdl(s).mean_seconds));
    s = paper_setup(0, 1, 1e9);
    EXPECT_TRUE(std::isnan(simulate_mttdl(s).mean_seconds));
}

} // namespace
} // namespace iosig
