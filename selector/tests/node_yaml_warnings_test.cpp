// Problems that do not make a node unusable are warnings: the node loads, the warning says where
// and what to do (docs/config.md, "Validation").
#include "node_yaml_test_support.hpp"

using namespace iosig;
using namespace iosig::testing_support;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

namespace {
NodeLoadResult load_warned(const std::string& text) {
    NodeLoadResult result = load_node_text(text, "node.yaml");
    EXPECT_TRUE(result.ok()) << all_diagnostics(result);
    return result;
}
} // namespace

TEST(NodeYamlWarnings, AValidFileLoadsWithoutAny) {
    EXPECT_THAT(load_warned(yaml(minimal_node)).diagnostics, IsEmpty());
}

TEST(NodeYamlWarnings, UnknownKeysSuggestTheClosestKnownKey) {
    const NodeLoadResult result = load_warned(yaml(R"(
nodes: {name: x}
devices:
  ssd0:
    media: ssd
    capcity: 100G
    performance: {seq_read_bw: 500M/s, seq_write_bw: 400M/s, seq_wrte_bw: 1G/s}
    reliabilty: {mttf: 5y}
    colour: blue
mounts:
  - path: /mnt/ssd
    device: ssd0
    volatle: true
    ecc: {sector_bit: 512}
)"));
    EXPECT_THAT(
        warnings(result),
        ElementsAre(
            "node.yaml:1:1: warning: unknown key 'nodes' in the node file (did you mean 'node'?); "
            "ignored",
            "node.yaml:5:5: warning: unknown key 'capcity' in device 'ssd0' (did you mean "
            "'capacity'?); ignored",
            "node.yaml:7:5: warning: unknown key 'reliabilty' in device 'ssd0' (did you mean "
            "'reliability'?); ignored",
            "node.yaml:8:5: warning: unknown key 'colour' in device 'ssd0'; ignored",
            "node.yaml:6:62: warning: unknown key 'seq_wrte_bw' in 'performance' of device 'ssd0' "
            "(did you mean 'seq_write_bw'?); ignored",
            "node.yaml:12:5: warning: unknown key 'volatle' in mount '/mnt/ssd' (did you mean "
            "'volatile'?); ignored",
            "node.yaml:13:11: warning: unknown key 'sector_bit' in 'ecc' of mount '/mnt/ssd' (did "
            "you mean 'sector_bits'?); ignored",
            // ... and therefore the device's capacity is unknown:
            "node.yaml:10:5: warning: capacity of mount '/mnt/ssd' is unknown: give 'capacity' for "
            "the mount or its device"));
    // Ignored means ignored: the misspelled values did not land anywhere.
    EXPECT_FALSE(result.node->mounts[0].is_volatile);
    EXPECT_EQ(result.node->mounts[0].ecc.sector_bits, 4096u);
    EXPECT_FALSE(result.node->devices[0].reliability.mttf.has_value());
}

TEST(NodeYamlWarnings, UnknownProvenanceTags) {
    const NodeLoadResult result =
        load_warned(yaml(minimal_node) + "    capacity: !measurd 10G\n    free: !foo 1G\n");
    EXPECT_THAT(warnings(result),
                ElementsAre("node.yaml:9:24: warning: unknown tag '!measurd' on 'capacity' (did "
                            "you mean '!measured'?); provenance tags are !measured, !derived, "
                            "!detected, !default and !user",
                            "node.yaml:10:16: warning: unknown tag '!foo' on 'free'; provenance "
                            "tags are !measured, !derived, !detected, !default and !user"));
    EXPECT_EQ(result.node->mounts[0].capacity, 10ull << 30); // the value itself is used
    EXPECT_FALSE(result.node->provenance.contains("mounts[/mnt/ssd].capacity"));
}

TEST(NodeYamlWarnings, StandardYamlTagsAreNotProvenance) {
    const NodeLoadResult result = load_warned(yaml(minimal_node) + "    fs_type: !!str ext4\n");
    EXPECT_THAT(result.diagnostics, IsEmpty());
    EXPECT_EQ(result.node->mounts[0].fs_type, "ext4");
}

TEST(NodeYamlWarnings, SchemeKeysTheSchemeDoesNotUse) {
    const NodeLoadResult result = load_warned(yaml(R"(
devices:
  a: {media: ssd}
  b: {media: ssd}
  md: {scheme: raid1, members: [a, b], replicas: 2, data_units: 1, parity_units: 1, mttdl: 5y}
)"));
    EXPECT_THAT(
        warnings(result),
        ElementsAre("node.yaml:4:50: warning: 'replicas' is only used by scheme replication; "
                    "ignored for 'md' (raid1)",
                    "node.yaml:4:65: warning: 'data_units' is only used by scheme erasure; "
                    "ignored for 'md' (raid1)",
                    "node.yaml:4:82: warning: 'parity_units' is only used by scheme erasure; "
                    "ignored for 'md' (raid1)",
                    "node.yaml:4:92: warning: 'mttdl' is only used by scheme opaque; ignored for "
                    "'md' (raid1)",
                    "node.yaml: warning: the node defines no mounts, so no IO can be placed"));
}

TEST(NodeYamlWarnings, AMountLargerThanItsDevice) {
    const NodeLoadResult result = load_warned(yaml(minimal_node) + "    capacity: 200G\n");
    EXPECT_THAT(warnings(result),
                ElementsAre("node.yaml:9:15: warning: mount '/mnt/ssd' is larger (214748364800 "
                            "bytes) than its device 'ssd0' (107374182400 bytes)"));
}

TEST(NodeYamlWarnings, AMountWhoseCapacityStaysUnknown) {
    const NodeLoadResult result = load_warned(yaml(R"(
devices:
  ssd0: {media: ssd, performance: {seq_read_bw: 1G/s, seq_write_bw: 1G/s}}
mounts:
  - {path: /mnt/ssd, device: ssd0}
)"));
    EXPECT_THAT(warnings(result),
                ElementsAre("node.yaml:4:5: warning: capacity of mount '/mnt/ssd' is unknown: "
                            "give 'capacity' for the mount or its device"));
}

TEST(NodeYamlWarnings, BackgroundRatioAboveDirtyRatio) {
    const NodeLoadResult result = load_warned(
        yaml(minimal_node) + "system: {dirty_ratio: 0.1, dirty_background_ratio: 0.3}\n");
    EXPECT_THAT(warnings(result),
                ElementsAre("node.yaml:9:52: warning: dirty_background_ratio exceeds dirty_ratio; "
                            "Linux then uses half of dirty_ratio as the background threshold"));
}
