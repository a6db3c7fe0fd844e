// Eq. 1 (UBER), Eq. 2 (MTTDL of MDS codes), the paper's figures, and the mapping of mounts onto
// them.
#include "iosig/reliability.hpp"
#include "iosig/units.hpp"

#include <cmath>
#include <gtest/gtest.h>
#include <random>

namespace iosig {
namespace {

constexpr double year = seconds_per_year;
constexpr double day = 86400;
constexpr double TiB_bits = 8.0 * 1099511627776.0;

// Eq. 1 summed term by term over n = E+1..N in long double: slow and straightforward.
long double uber_by_brute_force(long double p, unsigned N, unsigned E) {
    long double sum = 0;
    for (unsigned n = E + 1; n <= N; ++n)
        sum += std::exp(std::lgamma(N + 1.0L) - std::lgamma(n + 1.0L) - std::lgamma(N - n + 1.0L) +
                        n * std::log(p) + (N - n) * std::log1p(-p));
    return sum / (N - E);
}

class UberAcrossRates : public ::testing::TestWithParam<std::tuple<double, unsigned>> {};

TEST_P(UberAcrossRates, WithoutEccEqualsTheClosedForm) {
    const auto [ber, N] = GetParam();
    // E = 0: P(at least one error) = 1 - (1-p)^N.
    const double expected = -std::expm1(N * std::log1p(-ber)) / N;
    EXPECT_NEAR(uber(ber, N, 0) / expected, 1.0, 1e-12) << ber << " " << N;
}

TEST_P(UberAcrossRates, WithEccEqualsTheTermByTermSum) {
    const auto [ber, N] = GetParam();
    for (unsigned E : {1u, 2u, 3u, 8u}) {
        const double expected = static_cast<double>(uber_by_brute_force(ber, N, E));
        ASSERT_GT(expected, 0) << "the reference itself underflowed";
        EXPECT_NEAR(uber(ber, N, E) / expected, 1.0, 1e-9) << ber << " N=" << N << " E=" << E;
    }
}

INSTANTIATE_TEST_SUITE_P(Eq1, UberAcrossRates,
                         ::testing::Combine(::testing::Values(1e-6, 1e-8, 1e-10, 1e-12, 1e-14,
                                                              1e-15),
                                            ::testing::Values(512u, 4096u)));

TEST(Eq1, PaperFigureOneUncorrectableBitPerTenTerabyte) {
    // BER 1e-6 with 2 correctable bits per 512-bit sector: "a UBER value of ~1e-14".
    const double u = uber(1e-6, 512, 2);
    const double leading = 512.0 * 511 * 510 / 6 * 1e-18 / 510; // C(512,3) p^3 / (N-E)
    EXPECT_NEAR(u / leading, 1.0, 1e-3);
    EXPECT_GT(u, 1e-14);
    EXPECT_LT(u, 1e-13);
}

TEST(Eq1, StaysFiniteAndPositiveAtTheExtremes) {
    EXPECT_GT(uber(1e-15, 4096, 8), 0); // ~2e-112, the terms p^n alone reach 1e-135
    EXPECT_TRUE(std::isfinite(std::log(uber(1e-15, 4096, 8))));
    // Mode of the binomial far above E: the tail is almost 1, so UBER ~ 1/(N-E).
    EXPECT_NEAR(uber(0.01, 4096, 2) * (4096 - 2), 1.0, 1e-12);
    EXPECT_NEAR(uber(0.01, 4096, 40) / static_cast<double>(uber_by_brute_force(0.01L, 4096, 40)),
                1.0, 1e-9);
    EXPECT_EQ(uber(0, 512, 2), 0);
    EXPECT_EQ(uber(1e-6, 512, 512), 0); // everything correctable
    EXPECT_DOUBLE_EQ(uber(1, 512, 2), 1.0 / 510);
}

TEST(Eq1, GrowsWithBerAndShrinksWithEcc) {
    double previous = 0;
    for (double ber = 1e-15; ber < 1e-2; ber *= 10) {
        EXPECT_GT(uber(ber, 512, 2), previous) << ber;
        previous = uber(ber, 512, 2);
    }
    for (unsigned E = 0; E < 6; ++E)
        EXPECT_GT(uber(1e-6, 512, E), uber(1e-6, 512, E + 1)) << E;
}

TEST(Eq1, AgreesWithSectorsSimulatedBitByBit) {
    // A high BER so that uncorrectable sectors are common enough to count: flip bits with
    // geometric gaps between errors, count sectors with more than E errors.
    const double ber = 0.01;
    const unsigned N = 512, E = 8;
    const int sectors = 200000;
    std::mt19937_64 rng(42);
    std::geometric_distribution<long> gap(ber);
    long position = gap(rng);
    int uncorrectable = 0;
    for (int s = 0; s < sectors; ++s) {
        const long end = static_cast<long>(s + 1) * N;
        unsigned errors = 0;
        while (position < end) {
            ++errors;
            position += 1 + gap(rng);
        }
        uncorrectable += errors > E;
    }
    const double expected = uber(ber, N, E) * (N - E); // P(sector uncorrectable)
    const double sigma = std::sqrt(expected * (1 - expected) / sectors);
    EXPECT_NEAR(static_cast<double>(uncorrectable) / sectors, expected, 4 * sigma);
}

TEST(Eq2, MirrorAndReplicationAreTheSpecialCaseNOne) {
    const double mttf = 10 * year, mttr = day, bits = 8e9, u = 4e-14;
    const double lambda = 1 / mttf, mu = 1 / mttr, h = bits * u;
    EXPECT_NEAR(mttdl_mds(1, 1, mttf, mttr, bits, u) / (mu / (2 * lambda * (lambda + h * mu))), 1,
                1e-12);
    EXPECT_NEAR(mttdl_mds(1, 2, mttf, mttr, bits, u) /
                    (mu * mu / (3 * 2 * 1 * lambda * lambda * (lambda + h * mu))),
                1, 1e-12);
    // n+m: d(d-1)...(d-m)
    EXPECT_NEAR(mttdl_mds(4, 2, mttf, mttr, bits, u) /
                    (mu * mu / (6 * 5 * 4 * lambda * lambda * (lambda + h * mu))),
                1, 1e-12);
    // m = 0: 1/(d (lambda + h mu)), Eq. 2 without redundancy
    EXPECT_NEAR(mttdl_mds(3, 0, mttf, mttr, bits, u) / (1 / (3 * (lambda + h * mu))), 1, 1e-12);
}

TEST(Eq2, ManyParityUnitsNeitherOverflowNorGiveNan) {
    const double v = mttdl_mds(10, 100, 10 * year, day, 8e9, 4e-14);
    EXPECT_FALSE(std::isnan(v));
    EXPECT_GT(v, 1e100);
    EXPECT_TRUE(std::isnan(mttdl_mds(0, 1, 10 * year, day, 1, 1)));
    EXPECT_TRUE(std::isnan(mttdl_mds(1, 1, 0, day, 1, 1)));
}

TEST(Eq2, LargerFilesLoseDataSooner) {
    const double u = uber(1e-6, 512, 2);
    double previous = INFINITY;
    for (double bytes = 1e9; bytes <= 1e13; bytes *= 10) {
        const double v = mttdl_mds(1, 1, 10 * year, day, 8 * bytes, u);
        EXPECT_LT(v, previous);
        previous = v;
    }
}

// Sect. 7.4: MTTF 10 y, BER 1e-6, 2 correctable bits per 512-bit sector, MTTR 1 day, 1 TB of data.
// The paper reads "15 months on RAID5 and 12 years on RAID1" off its Fig. 12.
TEST(Eq2, ReproducesThePapersOneTerabyteFigures) {
    const double u = uber(1e-6, 512, 2);
    const double raid1 = mttdl_mds(1, 1, 10 * year, day, TiB_bits, u);
    EXPECT_NEAR(raid1 / year, 12, 1.2); // 13.0 y
    // RAID1 and RAID5 differ only in d(d-1)/2, so the paper's 15 months pins its RAID5 to 5 disks.
    const double raid5_of_5 = mttdl_mds(4, 1, 10 * year, day, TiB_bits, u);
    EXPECT_NEAR(raid5_of_5 / (year / 12), 15, 1.5);                            // 15.6 months
    EXPECT_GT(mttdl_mds(3, 1, 10 * year, day, TiB_bits, u) / (year / 12), 20); // 4 disks: 26 months
    EXPECT_LT(mttdl_mds(5, 1, 10 * year, day, TiB_bits, u) / (year / 12), 11); // 6 disks: 10 months
}

TEST(LossProbability, IsTheExponentialCdf) {
    EXPECT_NEAR(loss_probability(10 * year, 10 * year), 1 - std::exp(-1.0), 1e-15);
    EXPECT_NEAR(loss_probability(1000 * year, 3600) / (3600 / (1000 * year)), 1, 1e-6);
    EXPECT_EQ(loss_probability(0, 3600), 1); // not reliable: loss is certain
    EXPECT_EQ(loss_probability(INFINITY, 3600), 0);
    EXPECT_EQ(loss_probability(10 * year, 0), 0);
}

// --- mount_mttdl: the device structures mapped onto Eq. 2 ---

Device disk(std::string name, MediaKind media = MediaKind::ssd) {
    Device d;
    d.name = std::move(name);
    d.media = media;
    d.reliability.mttf = 10 * year;
    d.reliability.mttr = day;
    d.reliability.ber = 1e-6;
    return d;
}

Device array(std::string name, RedundancyScheme scheme, std::vector<std::string> members) {
    Device d;
    d.name = std::move(name);
    d.structure = DeviceStructure::complex;
    d.scheme = scheme;
    d.members = std::move(members);
    return d;
}

struct MttdlFixture : ::testing::Test {
    Node node;
    Mount mount;
    const double u = uber(1e-6, 512, 2);
    static constexpr std::uint64_t GiB = std::uint64_t{1} << 30;

    void SetUp() override {
        for (int i = 0; i < 6; ++i)
            node.devices.push_back(disk("d" + std::to_string(i)));
        mount.path = "/mnt/x";
        mount.ecc = Ecc{2, 512};
    }
    MttdlEstimate on(const Device& device, std::uint64_t bytes = GiB) {
        node.devices.push_back(device);
        mount.device = device.name;
        return mount_mttdl(node, mount, bytes);
    }
    double eq2(unsigned n, unsigned m, double bits) {
        return mttdl_mds(n, m, 10 * year, day, bits, u);
    }
};

TEST_F(MttdlFixture, SingleDeviceIsNotConsideredReliable) {
    mount.device = "d0";
    const MttdlEstimate e = mount_mttdl(node, mount, GiB);
    EXPECT_EQ(e.seconds, 0);
    EXPECT_NE(e.basis.find("single ssd 'd0' without redundancy"), std::string::npos) << e.basis;
    EXPECT_NE(e.basis.find("not considered reliable"), std::string::npos) << e.basis;
}

TEST_F(MttdlFixture, Raid0IsNotConsideredReliable) {
    EXPECT_EQ(on(array("r0", RedundancyScheme::raid0, {"d0", "d1"})).seconds, 0);
}

TEST_F(MttdlFixture, Raid1MirrorsOverAllMembers) {
    const auto two = on(array("r1", RedundancyScheme::raid1, {"d0", "d1"}));
    EXPECT_DOUBLE_EQ(two.seconds, eq2(1, 1, 8.0 * GiB));
    EXPECT_NE(two.basis.find("n=1 m=1"), std::string::npos) << two.basis;
    EXPECT_GT(two.seconds, 100 * year); // "more than 100 years" for 1 GB (Sect. 7.3)
    EXPECT_DOUBLE_EQ(on(array("r1x3", RedundancyScheme::raid1, {"d0", "d1", "d2"})).seconds,
                     eq2(1, 2, 8.0 * GiB));
}

TEST_F(MttdlFixture, Raid5AndRaid6ToleratesOneAndTwoFailures) {
    EXPECT_DOUBLE_EQ(
        on(array("r5", RedundancyScheme::raid5, {"d0", "d1", "d2", "d3", "d4"})).seconds,
        eq2(4, 1, 8.0 * GiB));
    EXPECT_DOUBLE_EQ(
        on(array("r6", RedundancyScheme::raid6, {"d0", "d1", "d2", "d3", "d4", "d5"})).seconds,
        eq2(4, 2, 8.0 * GiB));
}

TEST_F(MttdlFixture, Raid10IsASeriesOfMirroredPairs) {
    // 4 disks = 2 pairs, each holding half of the file; data is lost when either pair is lost.
    const auto e = on(array("r10", RedundancyScheme::raid10, {"d0", "d1", "d2", "d3"}));
    EXPECT_DOUBLE_EQ(e.seconds, eq2(1, 1, 4.0 * GiB) / 2);
    EXPECT_NE(e.basis.find("2 pairs"), std::string::npos) << e.basis;
    // Odd member count: any second failure is fatal, as in RAID5 over all members.
    EXPECT_DOUBLE_EQ(on(array("r10odd", RedundancyScheme::raid10, {"d0", "d1", "d2"})).seconds,
                     eq2(2, 1, 8.0 * GiB));
}

TEST_F(MttdlFixture, ReplicationAndErasureCodes) {
    Device rep = array("rep", RedundancyScheme::replication, {"d0", "d1", "d2", "d3", "d4", "d5"});
    rep.replicas = 3;
    EXPECT_DOUBLE_EQ(on(rep).seconds, eq2(1, 2, 8.0 * GiB));
    Device ec = array("ec", RedundancyScheme::erasure, {"d0", "d1", "d2", "d3", "d4", "d5"});
    ec.data_units = 4;
    ec.parity_units = 2;
    EXPECT_DOUBLE_EQ(on(ec).seconds, eq2(4, 2, 8.0 * GiB));
}

TEST_F(MttdlFixture, OpaqueDeviceUsesItsStatedMttdl) {
    Device nfs = array("nfs", RedundancyScheme::opaque, {});
    nfs.mttdl = 1000 * year;
    EXPECT_DOUBLE_EQ(on(nfs).seconds, 1000 * year);
    EXPECT_DOUBLE_EQ(on(nfs, 1000 * GiB).seconds, 1000 * year);
    Device unknown = array("unknown", RedundancyScheme::opaque, {});
    const auto e = on(unknown);
    EXPECT_EQ(e.seconds, 0);
    EXPECT_NE(e.basis.find("without a stated mttdl"), std::string::npos) << e.basis;
}

TEST_F(MttdlFixture, PartitionInheritsFromItsOwner) {
    node.devices.push_back(array("md0", RedundancyScheme::raid1, {"d0", "d1"}));
    Device part;
    part.name = "md0p1";
    part.structure = DeviceStructure::partition;
    part.owner = "md0";
    const auto e = on(part);
    EXPECT_DOUBLE_EQ(e.seconds, eq2(1, 1, 8.0 * GiB));
    EXPECT_NE(e.basis.find("partition 'md0p1' of raid1"), std::string::npos) << e.basis;
    Device single_part = part;
    single_part.name = "d0p1";
    single_part.owner = "d0";
    EXPECT_EQ(on(single_part).seconds, 0);
}

TEST_F(MttdlFixture, WeakestMemberAndArrayFiguresDecide) {
    node.devices[1].reliability.mttf = 5 * year; // d1 is weaker
    node.devices[0].reliability.mttr = 2 * day;
    const auto mixed = on(array("r1", RedundancyScheme::raid1, {"d0", "d1"}));
    EXPECT_DOUBLE_EQ(mixed.seconds, mttdl_mds(1, 1, 5 * year, 2 * day, 8.0 * GiB, u));
    Device own = array("r1own", RedundancyScheme::raid1, {"d0", "d1"});
    own.reliability.mttr = 6 * 3600.0; // the array's own rebuild time
    EXPECT_DOUBLE_EQ(on(own).seconds, mttdl_mds(1, 1, 5 * year, 6 * 3600.0, 8.0 * GiB, u));
}

TEST_F(MttdlFixture, MissingFiguresFallBackToDocumentedDefaults) {
    Node bare;
    Device a, b;
    a.name = "a";
    b.name = "b";
    bare.devices = {a, b, array("r1", RedundancyScheme::raid1, {"a", "b"})};
    Mount m;
    m.device = "r1"; // default ECC: none, 4096-bit sectors
    const auto e = mount_mttdl(bare, m, GiB);
    EXPECT_DOUBLE_EQ(e.seconds, mttdl_mds(1, 1, default_mttf, default_mttr, 8.0 * GiB,
                                          uber(default_ber, 4096, 0)));
    EXPECT_NE(e.basis.find("MTTF, MTTR, BER defaulted"), std::string::npos) << e.basis;
    EXPECT_EQ(default_mttf, 10 * year);
    EXPECT_EQ(default_mttr, day);
}

TEST_F(MttdlFixture, UnknownDeviceIsNotReliable) {
    mount.device = "nope";
    EXPECT_EQ(mount_mttdl(node, mount, GiB).seconds, 0);
}

} // namespace
} // namespace iosig
