// Choosing a mount: constraints filter, Eq. 3 ranks, the path breaks ties, every mount is
// explained.
#include "iosig/reliability.hpp"
#include "iosig/selection.hpp"
#include "iosig/throughput.hpp"
#include "iosig/units.hpp"

#include <algorithm>
#include <gtest/gtest.h>

namespace iosig {
namespace {

constexpr double MiB = 1 << 20;
constexpr std::uint64_t GiB = std::uint64_t{1} << 30;
constexpr double year = seconds_per_year;

Device simple(std::string name, MediaKind media, double wbw, double latency, double seek = 0) {
    Device d;
    d.name = std::move(name);
    d.media = media;
    d.rotational = media == MediaKind::hdd;
    d.capacity = 1000 * GiB;
    d.performance.seq_write_bw = wbw;
    d.performance.seq_read_bw = wbw;
    d.performance.op_latency = latency;
    d.performance.seek_latency = seek;
    d.reliability = {10 * year, 1e-6, 86400.0};
    return d;
}

Mount mount(std::string path, std::string device) {
    Mount m;
    m.path = std::move(path);
    m.device = std::move(device);
    m.fs_type = "ext4";
    m.ecc = Ecc{2, 512};
    return m;
}

// A fast volatile ramdisk, a local SSD, a local HDD (fast when sequential, slow when random), a
// RAID1 of two SSDs and a global NFS with a stated MTTDL.
Node test_node() {
    Node node;
    node.name = "test";
    node.devices.push_back(simple("ram", MediaKind::ram, 4000 * MiB, 5e-6));
    node.devices.push_back(simple("ssd", MediaKind::ssd, 500 * MiB, 100e-6));
    node.devices.push_back(simple("hdd", MediaKind::hdd, 250 * MiB, 1e-3, 10e-3));
    node.devices.push_back(simple("m0", MediaKind::ssd, 400 * MiB, 200e-6));
    node.devices.push_back(simple("m1", MediaKind::ssd, 400 * MiB, 200e-6));
    Device raid = simple("md0", MediaKind::ssd, 350 * MiB, 250e-6);
    raid.structure = DeviceStructure::complex;
    raid.scheme = RedundancyScheme::raid1;
    raid.members = {"m0", "m1"};
    raid.reliability = {};
    node.devices.push_back(raid);
    Device nfs = simple("nfs", MediaKind::network, 100 * MiB, 2e-3);
    nfs.structure = DeviceStructure::complex;
    nfs.scheme = RedundancyScheme::opaque;
    nfs.mttdl = 500 * year;
    node.devices.push_back(nfs);

    Mount ram = mount("/mnt/ram", "ram");
    ram.fs_type = "tmpfs";
    ram.is_volatile = true;
    ram.free_space = GiB;
    node.mounts.push_back(ram);
    node.mounts.push_back(mount("/mnt/ssd", "ssd"));
    node.mounts.push_back(mount("/mnt/hdd", "hdd"));
    node.mounts.push_back(mount("/mnt/raid1", "md0"));
    Mount shared = mount("/mnt/nfs", "nfs");
    shared.fs_type = "nfs";
    shared.global = true;
    node.mounts.push_back(shared);
    return node;
}

// For tests that do not change the node: candidates point into it, so it must outlive the
// selection.
const Node& shared_node() {
    static const Node node = test_node();
    return node;
}

Signature sig(AccessPattern pattern = AccessPattern::random) {
    Signature s;
    s.pattern = pattern;
    return s;
}

const Candidate& candidate(const Selection& s, std::string_view path) {
    const auto it = std::find_if(s.candidates.begin(), s.candidates.end(),
                                 [&](const Candidate& c) { return c.mount->path == path; });
    if (it == s.candidates.end()) throw std::runtime_error("no candidate " + std::string(path));
    return *it;
}

bool excluded_for(const Selection& s, std::string_view path, ExclusionReason reason) {
    const Candidate& c = candidate(s, path);
    return std::any_of(c.exclusions.begin(), c.exclusions.end(),
                       [&](const Exclusion& e) { return e.reason == reason; });
}

std::string reasons(const Selection& s, std::string_view path) {
    std::string out;
    for (const Exclusion& e : candidate(s, path).exclusions)
        out += e.text + "\n";
    return out;
}

const SelectionContext context{};

TEST(Selection, WithoutDemandsTheFastestMountWins) {
    const Node node = test_node();
    const Selection s = select_mount(node, sig(), context);
    ASSERT_TRUE(s.chosen());
    EXPECT_EQ(s.chosen()->path, "/mnt/ram");
    EXPECT_TRUE(s.tie_break.empty());
    ASSERT_EQ(s.candidates.size(), node.mounts.size()); // every mount, in the node's order
    for (std::size_t i = 0; i < node.mounts.size(); ++i) {
        EXPECT_EQ(s.candidates[i].mount, &node.mounts[i]);
        EXPECT_TRUE(s.candidates[i].eligible);
        EXPECT_TRUE(s.candidates[i].exclusions.empty());
    }
}

TEST(Selection, EveryCandidateCarriesItsEq3Throughput) {
    const Node node = test_node();
    Signature s = sig(AccessPattern::random);
    s.size_per_io = 64 * 1024;
    const Selection selection = select_mount(node, s, context);
    EXPECT_EQ(selection.size_per_io, 64u * 1024);
    for (const Candidate& c : selection.candidates)
        EXPECT_DOUBLE_EQ(
            c.throughput,
            eq3_throughput(eq3_parameters(node, *c.mount, AccessPattern::random), 64 * 1024))
            << c.mount->path;
}

TEST(Selection, DefaultSizePerIoIsUsedAndReported) {
    const Selection s = select_mount(shared_node(), sig(), context);
    EXPECT_EQ(s.size_per_io, default_size_per_io);
}

TEST(Selection, RandomIoPenalisesTheRotationalDisk) {
    Node node = test_node();
    node.mounts.erase(node.mounts.begin()); // no ramdisk
    Signature s = sig(AccessPattern::sequential);
    s.persistence = Persistence::persist;
    s.size_per_io = 64 * 1024;
    Selection seq = select_mount(node, s, context);
    s.pattern = AccessPattern::random;
    Selection rnd = select_mount(node, s, context);
    EXPECT_GT(candidate(seq, "/mnt/hdd").throughput, 3 * candidate(rnd, "/mnt/hdd").throughput);
    EXPECT_DOUBLE_EQ(candidate(seq, "/mnt/ssd").throughput, candidate(rnd, "/mnt/ssd").throughput);
}

TEST(Selection, GlobalAndLocal) {
    Signature s = sig();
    s.visibility = Visibility::global;
    Selection g = select_mount(shared_node(), s, context);
    EXPECT_EQ(g.chosen()->path, "/mnt/nfs");
    EXPECT_TRUE(excluded_for(g, "/mnt/ram", ExclusionReason::not_global));
    EXPECT_NE(reasons(g, "/mnt/ram").find("needs global"), std::string::npos);
    s.visibility = Visibility::local;
    Selection l = select_mount(shared_node(), s, context);
    EXPECT_TRUE(excluded_for(l, "/mnt/nfs", ExclusionReason::not_local));
    EXPECT_EQ(l.chosen()->path, "/mnt/ram");
}

TEST(Selection, PersistExcludesVolatileMounts) {
    Signature s = sig();
    s.persistence = Persistence::persist;
    const Selection p = select_mount(shared_node(), s, context);
    EXPECT_TRUE(excluded_for(p, "/mnt/ram", ExclusionReason::is_volatile));
    EXPECT_NE(reasons(p, "/mnt/ram").find("tmpfs mount is volatile"), std::string::npos);
    EXPECT_EQ(p.chosen()->path, "/mnt/ssd");
    s.persistence = Persistence::temp; // temp demands nothing
    EXPECT_EQ(select_mount(shared_node(), s, context).chosen()->path, "/mnt/ram");
}

TEST(Selection, MttdlDemandExcludesUnprotectedDevicesWithNumbers) {
    Signature s = sig();
    s.mttdl_seconds = 20 * year;
    s.total_size = GiB;
    const Selection m = select_mount(shared_node(), s, context);
    EXPECT_EQ(m.chosen()->path, "/mnt/raid1");
    for (const char* path : {"/mnt/ram", "/mnt/ssd", "/mnt/hdd"}) {
        EXPECT_TRUE(excluded_for(m, path, ExclusionReason::mttdl_too_low)) << path;
        EXPECT_EQ(candidate(m, path).mttdl, 0) << path;
        EXPECT_NE(reasons(m, path).find("needs MTTDL >= 20 y for 1 GiB, has none"),
                  std::string::npos)
            << reasons(m, path);
    }
    EXPECT_FALSE(excluded_for(m, "/mnt/nfs", ExclusionReason::mttdl_too_low));
    const Candidate& raid = candidate(m, "/mnt/raid1");
    EXPECT_GT(raid.mttdl, 1000 * year);
    EXPECT_NE(raid.mttdl_basis.find("Eq. 2 with n=1 m=1"), std::string::npos) << raid.mttdl_basis;

    s.mttdl_seconds = 10000 * year; // too much for the RAID1 at this size; the NFS states 500 y
    const Selection none = select_mount(shared_node(), s, context);
    EXPECT_FALSE(none.choice);
    EXPECT_NE(reasons(none, "/mnt/nfs").find("has 500 y"), std::string::npos)
        << reasons(none, "/mnt/nfs");
}

TEST(Selection, MttdlIsEvaluatedForTotalsizeOrOneGibibyte) {
    const Node node = test_node();
    const Mount& raid = node.mounts[3];
    Signature s = sig();
    const Selection unset = select_mount(node, s, context);
    EXPECT_DOUBLE_EQ(candidate(unset, "/mnt/raid1").mttdl, mount_mttdl(node, raid, GiB).seconds);
    s.total_size = 100 * GiB;
    const Selection big = select_mount(node, s, context);
    EXPECT_DOUBLE_EQ(candidate(big, "/mnt/raid1").mttdl,
                     mount_mttdl(node, raid, 100 * GiB).seconds);
    EXPECT_LT(candidate(big, "/mnt/raid1").mttdl, candidate(unset, "/mnt/raid1").mttdl);
}

TEST(Selection, AvailabilityIsTheLossProbabilityOverTheJobLifetime) {
    Signature s = sig();
    s.availability = 1e-6; // at most one in a million to lose the data during the job
    SelectionContext hour;
    hour.job_lifetime = 3600;
    hour.job_lifetime_source = "test";
    const Selection a = select_mount(shared_node(), s, hour);
    EXPECT_EQ(a.chosen()->path, "/mnt/raid1"); // loss ~ 1h / 7700 y = 1.5e-8
    EXPECT_TRUE(excluded_for(a, "/mnt/ssd", ExclusionReason::loss_too_likely));
    // the NFS: 1 h / 500 y = 2.3e-7 <= 1e-6
    EXPECT_FALSE(excluded_for(a, "/mnt/nfs", ExclusionReason::loss_too_likely));

    SelectionContext decade;
    decade.job_lifetime = 10 * year;
    decade.job_lifetime_source = "a long job";
    const Selection b = select_mount(shared_node(), s, decade);
    EXPECT_FALSE(b.choice);
    const std::string why = reasons(b, "/mnt/nfs");
    EXPECT_NE(why.find("over the job lifetime of 10 y (a long job)"), std::string::npos) << why;
    EXPECT_NE(why.find("has 0.0198"), std::string::npos) << why; // 1 - exp(-10/500)
}

TEST(Selection, CapacityAndMaximumFileSize) {
    Node node = test_node();
    node.mounts[1].free_space = 2 * GiB;
    node.mounts[2].max_file_size = 4 * GiB;
    Signature s = sig();
    s.total_size = 6 * GiB;
    const Selection c = select_mount(node, s, context);
    EXPECT_TRUE(excluded_for(c, "/mnt/ram", ExclusionReason::too_small));
    EXPECT_NE(reasons(c, "/mnt/ram").find("needs 6 GiB (totalsize), has 1 GiB free"),
              std::string::npos);
    EXPECT_TRUE(excluded_for(c, "/mnt/ssd", ExclusionReason::too_small));
    EXPECT_TRUE(excluded_for(c, "/mnt/hdd", ExclusionReason::file_too_large));
    EXPECT_NE(reasons(c, "/mnt/hdd").find("ext4 allows at most 4 GiB"), std::string::npos);
    // Without a free or capacity figure the device's capacity is the limit (1000 GiB here).
    EXPECT_FALSE(excluded_for(c, "/mnt/raid1", ExclusionReason::too_small));
    s.total_size = 2000 * GiB;
    EXPECT_TRUE(
        excluded_for(select_mount(node, s, context), "/mnt/raid1", ExclusionReason::too_small));
    // Totalsize exactly the free space fits.
    s.total_size = GiB;
    EXPECT_FALSE(
        excluded_for(select_mount(node, s, context), "/mnt/ram", ExclusionReason::too_small));
}

TEST(Selection, ArchiveAndTamperproofByFlagOrLabel) {
    Node node = test_node();
    node.mounts[4].archive = true;
    node.mounts[2].labels = {"tamperproof"};
    Signature s = sig();
    s.archive = true;
    const Selection a = select_mount(node, s, context);
    EXPECT_EQ(a.chosen()->path, "/mnt/nfs");
    EXPECT_TRUE(excluded_for(a, "/mnt/ram", ExclusionReason::not_archive));
    s.archive = false;
    s.tamperproof = true;
    const Selection t = select_mount(node, s, context);
    EXPECT_EQ(t.chosen()->path, "/mnt/hdd");
    EXPECT_TRUE(excluded_for(t, "/mnt/nfs", ExclusionReason::not_tamperproof));
}

TEST(Selection, EveryReasonIsListedNotJustTheFirst) {
    Signature s = sig();
    s.visibility = Visibility::global;
    s.persistence = Persistence::persist;
    s.total_size = 2 * GiB;
    const Selection x = select_mount(shared_node(), s, context);
    EXPECT_EQ(candidate(x, "/mnt/ram").exclusions.size(), 3u) << reasons(x, "/mnt/ram");
}

TEST(Selection, TiesAreBrokenByPathWhateverTheMountOrder) {
    Node node = test_node();
    node.mounts.erase(node.mounts.begin());                  // drop the ramdisk
    node.mounts.push_back(mount("/mnt/another-ssd", "ssd")); // the same device twice
    node.mounts.push_back(mount("/mnt/ssd-too", "ssd"));
    Signature s = sig();
    s.persistence = Persistence::persist;
    const Selection first = select_mount(node, s, context);
    ASSERT_TRUE(first.chosen());
    EXPECT_EQ(first.chosen()->path, "/mnt/another-ssd");
    EXPECT_NE(first.tie_break.find("3 mounts"), std::string::npos) << first.tie_break;
    EXPECT_NE(first.tie_break.find("chose /mnt/another-ssd"), std::string::npos) << first.tie_break;
    for (int round = 0; round < 5; ++round) {
        std::rotate(node.mounts.begin(), node.mounts.begin() + 1, node.mounts.end());
        EXPECT_EQ(select_mount(node, s, context).chosen()->path, "/mnt/another-ssd") << round;
    }
}

TEST(Selection, NoQualifyingMountLeavesNoChoiceButEveryReason) {
    Signature s = sig();
    s.visibility = Visibility::global;
    s.total_size = 1000 * 1000 * GiB;
    const Selection none = select_mount(shared_node(), s, context);
    EXPECT_FALSE(none.choice);
    EXPECT_EQ(none.chosen(), nullptr);
    for (const Candidate& c : none.candidates) {
        EXPECT_FALSE(c.eligible);
        EXPECT_FALSE(c.exclusions.empty());
        EXPECT_GT(c.throughput, 0); // computed even for excluded mounts
    }
}

TEST(Selection, EmptyNodeHasNoChoice) {
    EXPECT_FALSE(select_mount(Node{}, sig(), context).choice);
}

// The signatures the equivalence tests below run through.
std::vector<Signature> assorted_signatures() {
    std::vector<Signature> all;
    for (auto pattern :
         {AccessPattern::unspecified, AccessPattern::random, AccessPattern::sequential})
        for (auto visibility : {Visibility::unspecified, Visibility::global, Visibility::local})
            for (auto persistence : {Persistence::unspecified, Persistence::persist}) {
                Signature s;
                s.pattern = pattern;
                s.visibility = visibility;
                s.persistence = persistence;
                all.push_back(s);
                s.mttdl_seconds = 20 * year;
                s.total_size = 2 * GiB;
                s.size_per_io = 4000;
                all.push_back(s);
                s.availability = 1e-7;
                s.archive = true;
                all.push_back(s);
            }
    return all;
}

TEST(MountSelector, GivesExactlyWhatSelectMountGives) {
    const Node& node = shared_node();
    const MountSelector selector(node);
    for (const Signature& s : assorted_signatures()) {
        const Selection a = select_mount(node, s, context), b = selector.select(s, context);
        ASSERT_EQ(a.choice, b.choice);
        ASSERT_EQ(a.tie_break, b.tie_break);
        ASSERT_EQ(a.candidates.size(), b.candidates.size());
        for (std::size_t i = 0; i < a.candidates.size(); ++i) {
            EXPECT_EQ(a.candidates[i].throughput, b.candidates[i].throughput);
            EXPECT_EQ(a.candidates[i].mttdl, b.candidates[i].mttdl);
            EXPECT_EQ(a.candidates[i].mttdl_basis, b.candidates[i].mttdl_basis);
            ASSERT_EQ(a.candidates[i].exclusions.size(), b.candidates[i].exclusions.size());
            for (std::size_t j = 0; j < a.candidates[i].exclusions.size(); ++j)
                EXPECT_EQ(a.candidates[i].exclusions[j].text, b.candidates[i].exclusions[j].text);
        }
    }
}

TEST(MountSelector, DecidingWithoutExplainingChoosesTheSame) {
    const MountSelector selector(shared_node());
    SelectionContext quiet;
    quiet.explain = false;
    for (const Signature& s : assorted_signatures()) {
        const Selection loud = selector.select(s, context), silent = selector.select(s, quiet);
        ASSERT_EQ(loud.choice, silent.choice);
        for (std::size_t i = 0; i < loud.candidates.size(); ++i) {
            const Candidate &l = loud.candidates[i], &q = silent.candidates[i];
            EXPECT_EQ(l.eligible, q.eligible);
            EXPECT_EQ(l.throughput, q.throughput);
            EXPECT_EQ(l.mttdl, q.mttdl);
            EXPECT_TRUE(q.mttdl_basis.empty());
            ASSERT_EQ(l.exclusions.size(), q.exclusions.size());
            for (std::size_t j = 0; j < l.exclusions.size(); ++j) {
                EXPECT_EQ(l.exclusions[j].reason, q.exclusions[j].reason);
                EXPECT_FALSE(l.exclusions[j].text.empty());
                EXPECT_TRUE(q.exclusions[j].text.empty());
            }
        }
    }
}

} // namespace
} // namespace iosig
