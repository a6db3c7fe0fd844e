// Bad values are rejected with file:line:col of the value (or of the offending character inside it)
// and a message that says what was expected (docs/config.md, "Errors").
#include "node_yaml_test_support.hpp"

using namespace iosig;
using namespace iosig::testing_support;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(NodeYamlSyntax, YamlSyntaxErrorsAreLocatedDiagnostics) {
    EXPECT_EQ(only_error(R"(
devices:
  ssd0: {media: ssd
mounts: []
)"),
              "node.yaml:3:7: error: YAML syntax: end of map flow not found");
}

TEST(NodeYamlSyntax, TabIndentationIsExplained) {
    EXPECT_EQ(only_error("devices:\n  ssd0:\n\tmedia: ssd\n"),
              "node.yaml:3:2: error: YAML syntax: end of map not found (indentation must use "
              "spaces, not tabs)");
}

TEST(NodeYamlSyntax, DuplicateKeysAreErrorsNotSilentlyDropped) {
    EXPECT_EQ(only_error(R"(
devices:
  ssd0: {media: ssd}
  ssd0: {media: hdd}
)"),
              "node.yaml:3:3: error: duplicate key 'ssd0' (first given at line 2)");
}

TEST(NodeYamlSyntax, OneDocumentPerFile) {
    EXPECT_EQ(only_error("node: {name: a}\n---\nnode: {name: b}\n"),
              "node.yaml:2:1: error: a node file holds one YAML document; give several files to "
              "layer them");
}

// yaml-cpp 0.7 reports "," as an endless series of empty documents (its issue #1040).
TEST(NodeYamlSyntax, AStrayFlowIndicatorIsASyntaxErrorNotAHang) {
    EXPECT_EQ(only_error(","), "node.yaml:1:1: error: YAML syntax: unexpected ','");
    EXPECT_EQ(only_error("# comment\n\n  ,\n"),
              "node.yaml:3:3: error: YAML syntax: unexpected ','");
}

TEST(NodeYamlSyntax, TextMustBeUtf8) {
    EXPECT_EQ(only_error(std::string(minimal_node) + "    labels: [ok, \"caf\xe9\"]\n"),
              "node.yaml:9:19: error: text that is not valid UTF-8 (YAML files are UTF-8)");
    const Node node = load_ok(std::string(minimal_node) + "    labels: [caf\xc3\xa9]\n");
    EXPECT_EQ(node.mounts[0].labels.at(0), "caf\xc3\xa9");
}

TEST(NodeYamlSyntax, KeysMustBeNames) {
    EXPECT_EQ(only_error("devices:\n  ? [a, b]\n  : {media: ssd}\n"),
              "node.yaml:2:5: error: a key must be a plain name, not a list or map");
}

TEST(NodeYamlSyntax, AliasCyclesAndAliasBombsAreRefused) {
    EXPECT_EQ(only_error("devices: &a [*a]\n"),
              "node.yaml:1:14: error: an alias inside the value it refers to (a cycle)");
    std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
    for (int i = 1; i < 9; ++i)
        bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + std::string("*a") +
                std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" +
                std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" +
                std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + "]\n";
    EXPECT_THAT(only_error(bomb), HasSubstr("more than 200000 values (alias expansion?)"));
}

TEST(NodeYamlSyntax, AliasChainsMayNotNestWithoutBound) {
    std::string chain = "a0: &a0 [x]\n";
    for (int i = 1; i < 100; ++i)
        chain += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [*a" +
                 std::to_string(i - 1) + "]\n";
    EXPECT_EQ(only_error(chain), "node.yaml:63:12: error: nesting deeper than 64 levels");
}

TEST(NodeYamlSyntax, AnchorsAndAliasesShareValues) {
    const Node node = load_ok(R"(
devices:
  ssd0: &ssd {media: ssd, capacity: 240G, performance: &perf {seq_read_bw: 500M/s, seq_write_bw: 400M/s}}
  ssd1: *ssd
  md: {scheme: raid1, members: [ssd0, ssd1], performance: *perf}
mounts:
  - {path: /md, device: md}
)");
    EXPECT_EQ(node.find_device("ssd1")->capacity, 240ull << 30);
    EXPECT_DOUBLE_EQ(node.find_device("md")->performance.seq_write_bw, 400.0 * (1 << 20));
}

TEST(NodeYamlSyntax, TheTopLevelIsAMapOfTheFourSections) {
    EXPECT_EQ(only_error("- ssd0\n- hdd0\n"),
              "node.yaml:1:1: error: a node file is a map with the keys node, system, devices and "
              "mounts");
    EXPECT_EQ(only_error("devices: [ssd0]\n"),
              "node.yaml:1:10: error: 'devices' must be a map from device name to device (ssd0: "
              "{media: ssd, ...}), not a list or value");
    EXPECT_EQ(only_error("mounts: {path: /mnt}\n"),
              "node.yaml:1:9: error: 'mounts' must be a list of mounts (- path: /mnt/x ...)");
    EXPECT_EQ(only_error("mounts: [/mnt/x]\n"),
              "node.yaml:1:10: error: mount #1 must be a map with at least 'path' and 'device'");
    EXPECT_EQ(only_error("node: fast\n"),
              "node.yaml:1:7: error: 'node' of the node file must be a map of keys, not a single "
              "value");
    EXPECT_EQ(only_error("devices:\n  ssd0: [media, ssd]\n"),
              "node.yaml:2:9: error: device 'ssd0' must be a map of keys, not a list");
}

TEST(NodeYamlUnitErrors, PointAtTheOffendingCharacter) {
    // "    capacity: 16Q": the value starts in column 15, the unit in column 17.
    EXPECT_EQ(only_error(R"(
devices:
  ssd0:
    media: ssd
    capacity: 16Q
)"),
              "node.yaml:4:17: error: 'capacity' of device 'ssd0' must be a size such as 4K or "
              "256G: unknown size unit 'Q' (use B, K, M, G, T or P; all base 1024) (did you mean "
              "'16M'?)");
}

TEST(NodeYamlUnitErrors, ColumnsSkipTagsAndQuotes) {
    EXPECT_THAT(only_error("devices:\n  ssd0:\n    media: ssd\n    capacity: !measured 16Q\n"),
                HasSubstr("node.yaml:4:27: error: 'capacity'"));
    EXPECT_THAT(only_error("devices:\n  ssd0:\n    media: ssd\n    capacity: \"16Q\"\n"),
                HasSubstr("node.yaml:4:18: error: 'capacity'"));
    EXPECT_THAT(only_error("devices:\n  ssd0: {media: ssd, capacity: '16Q'}\n"),
                HasSubstr("node.yaml:2:35: error: 'capacity'"));
}

TEST(NodeYamlUnitErrors, EachKindOfQuantity) {
    EXPECT_EQ(only_error("devices:\n  d: {media: ssd, performance: {seq_read_bw: 5X/s}}\n"),
              "node.yaml:2:47: error: 'seq_read_bw' of 'performance' of device 'd' must be a "
              "bandwidth such as 500M/s: unknown bandwidth unit 'X' (use e.g. 500M/s; base 1024)");
    EXPECT_EQ(only_error("devices:\n  d: {media: ssd, performance: {op_latency: 5q}}\n"),
              "node.yaml:2:46: error: 'op_latency' of 'performance' of device 'd' must be a "
              "duration such as 5ms, 1d or 10y: unknown duration unit 'q' (use s, min, h, d, w or "
              "y; ms, us, ns for latencies)");
    EXPECT_EQ(only_error("devices:\n  d: {media: ssd, reliability: {ber: 1.5}}\n"),
              "node.yaml:2:38: error: 'ber' of 'reliability' of device 'd' must be a probability "
              "such as 1e-6: probability must lie strictly between 0 and 1, got 1.5");
    EXPECT_EQ(only_error("devices:\n  d: {media: ssd, reliability: {ber: 0}}\n"),
              "node.yaml:2:38: error: 'ber' of 'reliability' of device 'd' must be a probability "
              "such as 1e-6: probability must lie strictly between 0 and 1, got 0");
    EXPECT_EQ(only_error("system:\n  dirty_ratio: 20%\n"),
              "node.yaml:2:16: error: 'dirty_ratio' of 'system' of the node file must be a "
              "fraction between 0 and 1 (e.g. 0.2 for 20 %), got '20%'");
    EXPECT_EQ(only_error("system:\n  dirty_background_ratio: 1.2\n"),
              "node.yaml:2:27: error: 'dirty_background_ratio' of 'system' of the node file must "
              "be a fraction between 0 and 1 (e.g. 0.2 for 20 %), got '1.2'");
    EXPECT_EQ(only_error("system:\n  write_syscall_per_byte: 1ns\n"),
              "node.yaml:2:27: error: 'write_syscall_per_byte' of 'system' of the node file must "
              "be a plain non-negative number such as 1e-9, got '1ns'");
    EXPECT_EQ(only_error("devices:\n  d: {media: ssd, performance: {max_iops: lots}}\n"),
              "node.yaml:2:43: error: 'max_iops' of 'performance' of device 'd' must be a plain "
              "non-negative number such as 1e-9, got 'lots'");
    EXPECT_EQ(
        only_error("devices:\n  d: {media: ssd, performance: {independent_read_write: maybe}}\n"),
        "node.yaml:2:57: error: 'independent_read_write' of 'performance' of device 'd' must be "
        "true or false, got 'maybe'");
}

TEST(NodeYamlUnitErrors, NegativeValues) {
    EXPECT_EQ(only_error("devices:\n  d: {media: ssd, capacity: -5G}\n"),
              "node.yaml:2:29: error: 'capacity' of device 'd' must not be negative, got '-5G'");
    EXPECT_EQ(only_error("devices:\n  d: {media: ssd, performance: {max_iops: -1}}\n"),
              "node.yaml:2:43: error: 'max_iops' of 'performance' of device 'd' must be a plain "
              "non-negative number such as 1e-9, got '-1'");
    EXPECT_EQ(only_error("devices:\n  d: {media: hdd, performance: {throttle_slice: -100ms}}\n"),
              "node.yaml:2:49: error: 'throttle_slice' of 'performance' of device 'd' must not be "
              "negative, got '-100ms'");
    EXPECT_EQ(only_error("devices:\n  d: {media: hdd, performance: {max_io: 0}}\n"),
              "node.yaml:2:41: error: 'max_io' of 'performance' of device 'd' must be greater "
              "than 0");
    EXPECT_EQ(only_error("devices:\n  d: {media: hdd, performance: {read_ahead: lots}}\n"),
              "node.yaml:2:45: error: 'read_ahead' of 'performance' of device 'd' must be a size "
              "such as 4K or 256G: expected a size starting with a number, got 'lots'");
}

TEST(NodeYamlTypeErrors, ListsAndMapsWhereAValueBelongs) {
    EXPECT_EQ(only_error("devices:\n  d: {media: ssd, capacity: [1G]}\n"),
              "node.yaml:2:29: error: 'capacity' of device 'd' must be a size such as 4K or 256G, "
              "not a list");
    EXPECT_EQ(only_error("devices:\n  d: {media: {kind: ssd}}\n"),
              "node.yaml:2:14: error: 'media' of device 'd' must be a name, not a map");
    EXPECT_EQ(only_error("devices:\n  d: {media: ssd, performance: fast}\n"),
              "node.yaml:2:32: error: 'performance' of device 'd' must be a map of keys, not a "
              "single value");
    EXPECT_EQ(only_error("devices:\n  d: {media: ssd, calibration: [1, 2]}\n"),
              "node.yaml:2:32: error: 'calibration' of device 'd' must be a map (free-form), not "
              "a list");
    EXPECT_EQ(only_error("devices:\n  a: {media: ssd}\n  d: {members: {a: 1}, scheme: raid1}\n"),
              "node.yaml:3:16: error: 'members' of device 'd' must be a list such as [a, b], not a "
              "map");
    EXPECT_EQ(only_error("devices:\n  a: {media: ssd}\n  d: {members: [a, [b]], scheme: raid1}\n"),
              "node.yaml:3:20: error: item 2 of 'members' in device 'd' must be a non-empty name");
}

TEST(NodeYamlRangeErrors, ZeroAndNonPowersOfTwo) {
    EXPECT_EQ(only_error("devices:\n  d: {media: ssd, performance: {seq_write_bw: 0}}\n"),
              "node.yaml:2:47: error: 'seq_write_bw' of 'performance' of device 'd' must be "
              "greater than 0 (leave it out when unknown)");
    EXPECT_EQ(only_error("devices:\n  d: {media: ssd, capacity: 0}\n"),
              "node.yaml:2:29: error: 'capacity' of device 'd' must be greater than 0");
    EXPECT_EQ(only_error("node: {page_size: 3000}\n"),
              "node.yaml:1:19: error: 'page_size' of 'node' of the node file must be a power of "
              "two such as 4K, got 3000 bytes");
    EXPECT_EQ(only_error("node: {page_size: 0}\n"),
              "node.yaml:1:19: error: 'page_size' of 'node' of the node file must be greater than "
              "0");
    EXPECT_EQ(
        only_error("devices:\n  d: {media: hdd, reliability: {mttf: 0}}\n"),
        "node.yaml:2:39: error: 'mttf' of 'reliability' of device 'd' must be greater than 0");
    EXPECT_EQ(only_error("system: {stdio_buffer_size: 0}\n"),
              "node.yaml:1:29: error: 'stdio_buffer_size' of 'system' of the node file must be "
              "greater than 0");
}

TEST(NodeYamlRangeErrors, MountBlockSizeAndCounts) {
    EXPECT_EQ(only_error(std::string(minimal_node) + "    block_size: 6K\n"),
              "node.yaml:9:17: error: 'block_size' of mount '/mnt/ssd' must be a power of two "
              "such as 4K, got 6144 bytes");
    EXPECT_EQ(only_error(std::string(minimal_node) + "    ecc: {sector_bits: 0}\n"),
              "node.yaml:9:24: error: 'sector_bits' of 'ecc' of mount '/mnt/ssd' must be at least "
              "1, got 0");
    EXPECT_EQ(only_error(std::string(minimal_node) + "    ecc: {correctable_bits: 1.5}\n"),
              "node.yaml:9:29: error: 'correctable_bits' of 'ecc' of mount '/mnt/ssd' must be a "
              "whole number, got '1.5'");
}

TEST(NodeYamlRangeErrors, BooleansAndNames) {
    EXPECT_EQ(only_error(std::string(minimal_node) + "    global: maybe\n"),
              "node.yaml:9:13: error: 'global' of mount '/mnt/ssd' must be true or false, got "
              "'maybe'");
    EXPECT_EQ(only_error("devices:\n  d: {media: sdd}\n"),
              "node.yaml:2:14: error: 'media' of device 'd' must be one of ram, nvram, ssd, hdd, "
              "network; got 'sdd' (did you mean 'ssd'?)");
    EXPECT_EQ(only_error("devices:\n  d: {structure: compex, scheme: opaque}\n"),
              "node.yaml:2:18: error: 'structure' of device 'd' must be one of simple, complex, "
              "partition; got 'compex' (did you mean 'complex'?)");
    EXPECT_EQ(only_error("devices:\n  d: {scheme: replicaton, members: []}\n"),
              "node.yaml:2:15: error: 'scheme' of device 'd' must be one of none, raid0, raid1, "
              "raid5, raid6, raid10, replication, erasure, opaque; got 'replicaton' (did you mean "
              "'replication'?)");
}

TEST(NodeYamlRangeErrors, EveryErrorIsReportedNotJustTheFirst) {
    const NodeLoadResult result = load_node_text(yaml(R"(
devices:
  d: {media: sdd, capacity: 1Q}
mounts:
  - {path: /x, device: d, global: maybe}
)"),
                                                 "node.yaml");
    EXPECT_FALSE(result.ok());
    EXPECT_EQ(errors(result).size(), 3u) << all_diagnostics(result);
}
