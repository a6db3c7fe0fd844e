// The IOSIG paper's device choices (Sect. 7.3, Figs. 6a, 9, 10, 11) on configs/paper-node.yaml.
#include "iosig/node_yaml.hpp"
#include "iosig/selection.hpp"
#include "iosig/throughput.hpp"
#include "iosig/units.hpp"

#include <gtest/gtest.h>

namespace iosig {
namespace {

constexpr std::uint64_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024;

class PaperNode : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        NodeLoadResult loaded = load_node_files({IOSIG_SOURCE_DIR "/configs/paper-node.yaml"});
        std::string diagnostics;
        for (const ConfigDiagnostic& d : loaded.diagnostics)
            diagnostics += d.format() + "\n";
        ASSERT_TRUE(loaded.ok()) << diagnostics;
        EXPECT_TRUE(loaded.diagnostics.empty()) << diagnostics; // not even a warning
        node_ = new Node(std::move(*loaded.node));
    }
    static void TearDownTestSuite() {
        delete node_;
        node_ = nullptr;
    }
    void SetUp() override { ASSERT_NE(node_, nullptr) << "configs/paper-node.yaml did not load"; }

    static Selection choose(const Signature& s) {
        return select_mount(*node_, s, SelectionContext{});
    }
    static std::string chosen(const Signature& s) {
        const Selection selection = choose(s);
        return selection.chosen() ? selection.chosen()->path : "(none)";
    }
    static const Candidate& candidate(const Selection& s, std::string_view path) {
        for (const Candidate& c : s.candidates)
            if (c.mount->path == path) return c;
        throw std::runtime_error("no mount " + std::string(path));
    }
    static inline Node* node_ = nullptr;
};

// Fig. 10's parameter sets for the strided/shuffled 1 GB image: all random, totalsize 1 GB.
Signature strided(std::uint64_t chunk) {
    Signature s;
    s.pattern = AccessPattern::random;
    s.total_size = GiB;
    s.size_per_io = chunk;
    return s;
}

TEST_F(PaperNode, HasTheFiveDevicesOfTheEvaluation) {
    ASSERT_EQ(node_->mounts.size(), 5u);
    int global = 0;
    for (const Mount& m : node_->mounts)
        global += m.global;
    EXPECT_EQ(global, 1);
    EXPECT_TRUE(node_->find_mount("/mnt/nfs")->global);
    EXPECT_TRUE(node_->find_mount("/mnt/ramdisk")->is_volatile);
    EXPECT_EQ(node_->find_mount("/mnt/ramdisk")->capacity, GiB);
}

TEST_F(PaperNode, Ps1GlobalGoesToTheSharedNfs) {
    for (std::uint64_t chunk = 32 * KiB; chunk <= 32 * MiB; chunk *= 2) {
        Signature s = strided(chunk);
        s.visibility = Visibility::global;
        const Selection selection = choose(s);
        ASSERT_TRUE(selection.chosen()) << chunk;
        EXPECT_EQ(selection.chosen()->path, "/mnt/nfs") << chunk;
        for (const Candidate& c : selection.candidates)
            EXPECT_EQ(c.eligible, c.mount->path == "/mnt/nfs") << c.mount->path;
    }
}

TEST_F(PaperNode, Ps2TwentyYearMttdlGoesToTheRaid1) {
    for (std::uint64_t chunk = 32 * KiB; chunk <= 32 * MiB; chunk *= 2) {
        Signature s = strided(chunk);
        s.mttdl_seconds = 20 * seconds_per_year;
        const Selection selection = choose(s);
        EXPECT_EQ(selection.chosen() ? selection.chosen()->path : "", "/mnt/raid1") << chunk;
        // Single devices are not considered reliable; the NFS qualifies but is slower.
        for (const char* single : {"/mnt/ramdisk", "/mnt/nvram", "/mnt/hdd"}) {
            const Candidate& c = candidate(selection, single);
            ASSERT_EQ(c.exclusions.size(), 1u) << single;
            EXPECT_EQ(c.exclusions[0].reason, ExclusionReason::mttdl_too_low) << single;
        }
        EXPECT_TRUE(candidate(selection, "/mnt/nfs").eligible);
        EXPECT_GT(candidate(selection, "/mnt/raid1").mttdl,
                  100 * seconds_per_year); // "more than 100 years"
    }
}

TEST_F(PaperNode, Ps3PersistGoesToTheNvram) {
    for (std::uint64_t chunk = 32 * KiB; chunk <= 32 * MiB; chunk *= 2) {
        Signature s = strided(chunk);
        s.persistence = Persistence::persist;
        const Selection selection = choose(s);
        EXPECT_EQ(selection.chosen() ? selection.chosen()->path : "", "/mnt/nvram") << chunk;
        EXPECT_EQ(candidate(selection, "/mnt/ramdisk").exclusions.at(0).reason,
                  ExclusionReason::is_volatile);
    }
}

TEST_F(PaperNode, Ps4WithoutDemandsGoesToTheRamdisk) {
    for (std::uint64_t chunk = 32 * KiB; chunk <= 32 * MiB; chunk *= 2)
        EXPECT_EQ(chosen(strided(chunk)), "/mnt/ramdisk") << chunk;
}

TEST_F(PaperNode, StridedRuntimesFollowTheOrderOfFig11b) {
    // At 512 KB chunks the paper measured HDD > 5 min, NFS 14.4 s, RAID1 2.5 s, NVRAM 1.4 s,
    // ramdisk 0.8 s.
    const Selection s = choose(strided(512 * KiB));
    const double hdd = candidate(s, "/mnt/hdd").throughput,
                 nfs = candidate(s, "/mnt/nfs").throughput,
                 raid = candidate(s, "/mnt/raid1").throughput,
                 nvram = candidate(s, "/mnt/nvram").throughput,
                 ram = candidate(s, "/mnt/ramdisk").throughput;
    EXPECT_LT(hdd, nfs);
    EXPECT_LT(nfs, raid);
    EXPECT_LT(raid, nvram);
    EXPECT_LT(nvram, ram);
    EXPECT_GT(GiB / hdd, 60.0); // minutes on the HDD
}

// Fig. 9: the posterized 6 GB image, written in sequential chunks of 16 MB .. 2 GB, persist.
Signature posterize(std::uint64_t chunk) {
    Signature s;
    s.pattern = AccessPattern::sequential;
    s.persistence = Persistence::persist;
    s.total_size = 6 * GiB;
    s.size_per_io = chunk;
    return s;
}

TEST_F(PaperNode, SixGibibytesFitOnlyTheHddAndTheNfs) {
    const Selection s = choose(posterize(16 * MiB));
    for (const char* small : {"/mnt/ramdisk", "/mnt/nvram", "/mnt/raid1"}) {
        const Candidate& c = candidate(s, small);
        EXPECT_FALSE(c.eligible) << small;
        bool too_small = false;
        for (const Exclusion& e : c.exclusions)
            too_small |= e.reason == ExclusionReason::too_small;
        EXPECT_TRUE(too_small) << small;
    }
    EXPECT_TRUE(candidate(s, "/mnt/hdd").eligible);
    EXPECT_TRUE(candidate(s, "/mnt/nfs").eligible);
}

TEST_F(PaperNode, SmallChunksGoToTheNfsLargeChunksToTheHdd) {
    EXPECT_EQ(chosen(posterize(16 * MiB)), "/mnt/nfs");
    EXPECT_EQ(chosen(posterize(32 * MiB)), "/mnt/nfs");
    EXPECT_EQ(chosen(posterize(GiB)), "/mnt/hdd");
    EXPECT_EQ(chosen(posterize(2 * GiB)), "/mnt/hdd");
}

TEST_F(PaperNode, HddNfsCrossoverLiesNearOneHundredMegabytes) {
    // Bisection on page-aligned chunk sizes: the NFS below, the HDD above.
    std::uint64_t low = 16 * MiB, high = GiB;
    ASSERT_EQ(chosen(posterize(low)), "/mnt/nfs");
    ASSERT_EQ(chosen(posterize(high)), "/mnt/hdd");
    while (high - low > 4096) {
        const std::uint64_t mid = (low + high) / 2 / 4096 * 4096;
        (chosen(posterize(mid)) == "/mnt/nfs" ? low : high) = mid;
    }
    EXPECT_GT(low, 64 * MiB);
    EXPECT_LT(high, 160 * MiB);
    // and a single crossover: every chunk below it goes to the NFS, every one above to the HDD
    for (std::uint64_t chunk = 16 * MiB; chunk <= 2 * GiB; chunk *= 2)
        EXPECT_EQ(chosen(posterize(chunk)), chunk < low ? "/mnt/nfs" : "/mnt/hdd") << chunk;
}

} // namespace
} // namespace iosig
