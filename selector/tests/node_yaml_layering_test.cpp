// Several node files are layered in order: a later file overrides key by key, devices merge by
// name, mounts by path, lists and calibration maps are replaced; diagnostics still name the file
// each value came from (docs/config.md, "Layering").
#include "iosig/units.hpp"
#include "node_yaml_test_support.hpp"

#include <yaml-cpp/yaml.h>

using namespace iosig;
using namespace iosig::testing_support;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

namespace {

// What iosig-calibrate writes: measured figures, no reliability, no site knowledge.
constexpr std::string_view calibrated = R"(
node: {name: n1, page_size: 4K}
system: {memory_bw: !measured 8G/s, dirty_ratio: !detected 0.2}
devices:
  nvme0: {media: ssd, capacity: !detected 900G}
  nvme1: {media: ssd, capacity: !detected 900G}
  md0:
    structure: complex
    scheme: raid1
    members: [nvme0, nvme1]
    performance: {seq_read_bw: !measured 2G/s, seq_write_bw: !measured 1G/s, op_latency: 50us}
    calibration: {points: [1, 2, 3]}
  hdd0:
    media: hdd
    rotational: true
    capacity: 8T
    performance: {seq_read_bw: 200M/s, seq_write_bw: 180M/s, seek_latency: 8ms}
mounts:
  - {path: /scratch, device: md0, fs_type: ext4, labels: [fast], free: !detected 500G}
  - {path: /data, device: hdd0, fs_type: xfs}
)";

} // namespace

class NodeYamlLayering : public ::testing::Test {
protected:
    TempDir dir;
};

TEST_F(NodeYamlLayering, ALaterFileAddsAndOverridesKeyByKey) {
    const std::string site_text = yaml(R"(
devices:
  nvme0: {reliability: {mttf: !user 5y, ber: 1e-15, mttr: 12h}}
  hdd0: {reliability: {mttf: 3y}, performance: {seq_write_bw: 150M/s}}
  nfs:
    structure: complex
    scheme: opaque
    media: network
    capacity: 100T
    performance: {seq_read_bw: 100M/s, seq_write_bw: 100M/s}
mounts:
  - path: /data/
    labels: [bulk, archive-tier]
    archive: true
  - {path: /home, device: nfs, global: true}
)");
    const auto result = load_node_files(
        {dir.write("calibrated.yaml", calibrated), dir.write("site.yaml", site_text)});
    ASSERT_TRUE(result.ok()) << all_diagnostics(result);
    EXPECT_THAT(result.diagnostics, IsEmpty()) << all_diagnostics(result);
    const Node& node = *result.node;

    // A device named in both files keeps the first file's keys and gains/overrides the second's.
    const Device& nvme0 = *node.find_device("nvme0");
    EXPECT_EQ(nvme0.capacity, 900ull << 30);
    EXPECT_EQ(nvme0.media, MediaKind::ssd);
    EXPECT_DOUBLE_EQ(*nvme0.reliability.mttf, 5 * seconds_per_year);
    EXPECT_DOUBLE_EQ(*nvme0.reliability.ber, 1e-15);
    EXPECT_FALSE(node.find_device("nvme1")->reliability.mttf.has_value());
    const Device& hdd0 = *node.find_device("hdd0");
    EXPECT_DOUBLE_EQ(hdd0.performance.seq_write_bw, 150.0 * (1 << 20)); // overridden
    EXPECT_DOUBLE_EQ(hdd0.performance.seq_read_bw, 200.0 * (1 << 20));  // kept
    EXPECT_DOUBLE_EQ(hdd0.performance.seek_latency, 8e-3);              // kept
    EXPECT_TRUE(hdd0.rotational);

    // A new device and a new mount are appended after the first file's.
    EXPECT_EQ(node.devices.back().name, "nfs");
    ASSERT_EQ(node.mounts.size(), 3u);
    EXPECT_EQ(node.mounts[0].path, "/scratch");
    EXPECT_EQ(node.mounts[1].path, "/data");
    EXPECT_EQ(node.mounts[2].path, "/home");
    EXPECT_TRUE(node.mounts[2].global);

    // Mounts merge by normalized path: "/data/" in site.yaml is "/data" of calibrated.yaml.
    const Mount& data = *node.find_mount("/data");
    EXPECT_EQ(data.device, "hdd0");
    EXPECT_EQ(data.fs_type, "xfs");
    EXPECT_TRUE(data.archive);
    EXPECT_THAT(data.labels, ElementsAre("bulk", "archive-tier"));
    EXPECT_THAT(node.find_mount("/scratch")->labels, ElementsAre("fast"));

    // Values keep their provenance tags from whichever file they came from.
    EXPECT_EQ(node.provenance.at("devices.nvme0.reliability.mttf"), Provenance::user);
    EXPECT_EQ(node.provenance.at("devices.md0.performance.seq_read_bw"), Provenance::measured);
    EXPECT_EQ(node.provenance.at("mounts[/scratch].free"), Provenance::detected);

    // The first file introduced the device and the mount: their locations say so.
    EXPECT_EQ(nvme0.where.file, (dir.path() / "calibrated.yaml").string());
    EXPECT_EQ(node.find_device("nfs")->where.file, (dir.path() / "site.yaml").string());
    EXPECT_EQ(data.where.file, (dir.path() / "calibrated.yaml").string());
}

TEST_F(NodeYamlLayering, ListsAndCalibrationMapsAreReplacedNotMerged) {
    const auto result =
        load_node_files({dir.write("calibrated.yaml", calibrated), dir.write("site.yaml", R"(
devices:
  md0: {calibration: {version: 2}, members: [nvme1, nvme0]}
mounts:
  - {path: /scratch, labels: [scratch]}
)")});
    ASSERT_TRUE(result.ok()) << all_diagnostics(result);
    const Node& node = *result.node;
    EXPECT_THAT(node.find_device("md0")->members, ElementsAre("nvme1", "nvme0"));
    const YAML::Node calibration = YAML::Load(node.find_device("md0")->calibration_yaml);
    EXPECT_EQ(calibration["version"].as<int>(), 2);
    EXPECT_FALSE(calibration["points"]); // the earlier map is gone, not merged
    EXPECT_THAT(node.find_mount("/scratch")->labels, ElementsAre("scratch"));
}

TEST_F(NodeYamlLayering, NullInALaterFileRemovesAValue) {
    const auto result =
        load_node_files({dir.write("calibrated.yaml", calibrated), dir.write("site.yaml", R"(
system: {memory_bw: ~}
mounts:
  - {path: /scratch, free: null, labels: }
)")});
    ASSERT_TRUE(result.ok()) << all_diagnostics(result);
    const Node& node = *result.node;
    EXPECT_FALSE(node.system.memory_bw.has_value());
    EXPECT_FALSE(node.provenance.contains("system.memory_bw"));
    const Mount& scratch = *node.find_mount("/scratch");
    EXPECT_TRUE(scratch.labels.empty());
    EXPECT_EQ(scratch.free_space, scratch.capacity); // back to the default
}

TEST_F(NodeYamlLayering, ThreeFilesApplyInOrder) {
    const auto result = load_node_files(
        {dir.write("a.yaml", minimal_node),
         dir.write("b.yaml",
                   "node: {name: from-b, page_size: 8K}\ndevices:\n  ssd0: {capacity: 200G}\n"),
         dir.write("c.yaml",
                   "node: {name: from-c}\nmounts:\n  - {path: /mnt/ssd, global: true}\n")});
    ASSERT_TRUE(result.ok()) << all_diagnostics(result);
    const Node& node = *result.node;
    EXPECT_EQ(node.name, "from-c");
    EXPECT_EQ(node.page_size, 8192u);                  // b's, untouched by c
    EXPECT_EQ(node.devices[0].capacity, 200ull << 30); // b overrides a
    EXPECT_EQ(node.mounts[0].capacity, 200ull << 30);  // inferred from the layered device
    EXPECT_TRUE(node.mounts[0].global);                // c
    EXPECT_EQ(node.mounts[0].device, "ssd0");          // a
}

TEST_F(NodeYamlLayering, TheOrderOfFilesDecides) {
    const auto x = dir.write("x.yaml", yaml(minimal_node) + "node: {name: x}\n");
    const auto y = dir.write("y.yaml", "node: {name: y}\n");
    EXPECT_EQ(load_node_files({x, y}).node->name, "y");
    EXPECT_EQ(load_node_files({y, x}).node->name, "x");
}

TEST_F(NodeYamlLayering, ValidationRunsOnTheResultOnly) {
    // Neither file alone is valid: one lacks media, the other bandwidths.
    const auto a = dir.write(
        "a.yaml", "devices:\n  ssd0: {capacity: 1G}\nmounts:\n  - {path: /m, device: ssd0}\n");
    const auto b = dir.write(
        "b.yaml",
        "devices:\n  ssd0: {media: ssd, performance: {seq_read_bw: 1G/s, seq_write_bw: 1G/s}}\n");
    EXPECT_FALSE(load_node_files({a}).ok());
    const auto only_b = load_node_files({b});
    ASSERT_TRUE(only_b.ok());
    EXPECT_TRUE(only_b.node->mounts.empty());
    const auto both = load_node_files({a, b});
    EXPECT_TRUE(both.ok()) << all_diagnostics(both);
}

TEST_F(NodeYamlLayering, ErrorsNameTheFileAndLineTheValueCameFrom) {
    const auto base = dir.write("calibrated.yaml", calibrated);
    const auto overrides = dir.write("site.yaml", R"(
devices:
  md0: {members: [nvme0, nvme2]}
  hdd0:
    performance: {seq_write_bw: 0}
mounts:
  - {path: /data, capacity: 1Q}
)");
    const auto result = load_node_files({base, overrides});
    EXPECT_FALSE(result.ok());
    const std::string site_file = overrides.string();
    EXPECT_THAT(errors(result),
                ElementsAre(site_file + ":4:33: error: 'seq_write_bw' of 'performance' of device "
                                        "'hdd0' must be greater than 0 (leave it out when unknown)",
                            site_file +
                                ":6:30: error: 'capacity' of mount '/data' must be a size "
                                "such as 4K or 256G: unknown size unit 'Q' (use B, K, M, G, "
                                "T or P; all base 1024) (did you mean '1M'?)"));

    // A structural error about a value from the second file points into the second file ...
    const auto members = dir.write("members.yaml", "devices:\n  md0: {members: [nvme0, nvme2]}\n");
    EXPECT_THAT(errors(load_node_files({base, members})),
                ElementsAre(members.string() + ":2:26: error: device 'md0' has unknown member "
                                               "'nvme2' (did you mean 'nvme0'?)"));
    // ... and one about a value the second file did not touch, into the first.
    const auto unrelated = dir.write("unrelated.yaml", "devices:\n  md0: {scheme: raid5}\n");
    EXPECT_THAT(errors(load_node_files({base, unrelated})),
                ElementsAre(base.string() + ":9:14: error: raid5 device 'md0' needs at least 3 "
                                            "members, has 2"));
}

TEST_F(NodeYamlLayering, SyntaxErrorsInAnyFileAreAllReported) {
    const auto a = dir.write("a.yaml", "devices: {ssd0: \n");
    const auto b = dir.write("b.yaml", minimal_node);
    const auto c = dir.write("c.yaml", "mounts: [}\n");
    const auto result = load_node_files({a, b, c});
    EXPECT_FALSE(result.ok());
    const std::vector<std::string> list = errors(result);
    ASSERT_EQ(list.size(), 2u) << all_diagnostics(result);
    EXPECT_EQ(list[0].rfind(a.string() + ":", 0), 0u) << list[0];
    EXPECT_EQ(list[1].rfind(c.string() + ":1:", 0), 0u) << list[1];
}

TEST_F(NodeYamlLayering, AMountPathTwiceInOneFileIsAnErrorEvenWhenLayering) {
    const auto a = dir.write("a.yaml", minimal_node);
    const auto b = dir.write(
        "b.yaml",
        "mounts:\n  - {path: /mnt/ssd, global: true}\n  - {path: /mnt/ssd, global: false}\n");
    EXPECT_THAT(errors(load_node_files({a, b})),
                ElementsAre(b.string() + ":3:12: error: mount path '/mnt/ssd' is listed twice in "
                                         "this file (first at line 2); a later file may override "
                                         "it, one file may not"));
}

TEST(NodeYamlShippedConfigs, TheSiteOverridesExampleLayersOverThePaperNode) {
    const auto result = load_node_files({IOSIG_SOURCE_DIR "/configs/paper-node.yaml",
                                         IOSIG_SOURCE_DIR "/configs/site-overrides.example.yaml"});
    ASSERT_TRUE(result.ok()) << all_diagnostics(result);
    EXPECT_THAT(result.diagnostics, IsEmpty()) << all_diagnostics(result);
    const Node& node = *result.node;
    EXPECT_DOUBLE_EQ(*node.find_device("ssd0")->reliability.mttf, 2e6 * 3600);
    EXPECT_EQ(node.provenance.at("devices.ssd0.reliability.mttf"), Provenance::user);
    EXPECT_DOUBLE_EQ(*node.find_device("hdd0")->reliability.ber, 1e-14);
    EXPECT_DOUBLE_EQ(*node.find_device("nfs0")->mttdl, 500 * seconds_per_year);
    const Mount& hdd = *node.find_mount("/mnt/hdd");
    EXPECT_TRUE(hdd.archive);
    EXPECT_THAT(hdd.labels, ElementsAre("bulk", "archive-tier"));
    EXPECT_EQ(hdd.device, "hdd0"); // untouched keys stay
    EXPECT_TRUE(node.find_mount("/mnt/nfs")->tamperproof);
    EXPECT_FALSE(node.find_mount("/mnt/nfs")->archive);
    EXPECT_TRUE(node.find_mount("/mnt/nfs")->global);
    EXPECT_EQ(node.find_mount("/mnt/raid1")->free_space, 3ull << 30);
    EXPECT_EQ(node.mounts.size(), 5u); // overrides add no mount
}
