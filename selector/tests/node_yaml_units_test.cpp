// Each unit form of docs/config.md ("Quantities"), through the key that uses it.
#include "iosig/units.hpp"
#include "node_yaml_test_support.hpp"

using namespace iosig;
using namespace iosig::testing_support;
using ::testing::ElementsAre;

namespace {
constexpr double KiB = 1024.0, MiB = KiB * 1024, GiB = MiB * 1024;
}

TEST(NodeYamlUnits, SizesAreBase1024InAnySpelling) {
    const std::vector<std::pair<std::string, std::uint64_t>> cases{{"4096", 4096},
                                                                   {"4K", 4096},
                                                                   {"4k", 4096},
                                                                   {"4KB", 4096},
                                                                   {"4KiB", 4096},
                                                                   {"1.5G", 3ull << 29},
                                                                   {"2T", 2ull << 40},
                                                                   {"1P", 1ull << 50},
                                                                   {"512B", 512},
                                                                   {"\"16M\"", 16u << 20},
                                                                   {"!measured 1M", 1u << 20}};
    for (const auto& [text, bytes] : cases) {
        const Node node = load_ok(R"(
devices:
  ssd0:
    media: ssd
    capacity: )" + text + R"(
)");
        EXPECT_EQ(node.devices[0].capacity, bytes) << text;
    }
}

TEST(NodeYamlUnits, BandwidthsAreSizesPerSecond) {
    const std::vector<std::pair<std::string, double>> cases{
        {"500M/s", 500 * MiB}, {"500MiB/s", 500 * MiB}, {"500MB/s", 500 * MiB},
        {"1.5G/s", 1.5 * GiB}, {"1000", 1000},          {"2e9", 2e9}};
    for (const auto& [text, bw] : cases) {
        const Node node =
            load_ok("devices:\n  ssd0: {media: ssd, performance: {seq_read_bw: " + text + "}}\n");
        EXPECT_DOUBLE_EQ(node.devices[0].performance.seq_read_bw, bw) << text;
    }
}

TEST(NodeYamlUnits, DurationsFromNanosecondsToYears) {
    const std::vector<std::pair<std::string, double>> cases{
        {"100ns", 100e-9}, {"5us", 5e-6},
        {"8ms", 8e-3},     {"2", 2},
        {"2s", 2},         {"5min", 300},
        {"2h", 7200},      {"1d", 86400},
        {"2w", 1209600},   {"10y", 10 * seconds_per_year},
        {"1.5e-3", 1.5e-3}};
    for (const auto& [text, seconds] : cases) {
        const Node node =
            load_ok("devices:\n  hdd0: {media: hdd, performance: {seek_latency: " + text +
                    "}, reliability: {mttr: " + text + "}}\n");
        EXPECT_DOUBLE_EQ(node.devices[0].performance.seek_latency, seconds) << text;
        EXPECT_DOUBLE_EQ(*node.devices[0].reliability.mttr, seconds) << text;
    }
}

TEST(NodeYamlUnits, ProbabilitiesRatiosCountsAndPlainNumbers) {
    const Node node = load_ok(std::string(R"(
system:
  dirty_ratio: 1
  dirty_background_ratio: 0
  write_syscall_per_byte: 0.00000000021
devices:
  d: {media: hdd, reliability: {ber: 0.001}, performance: {max_iops: 2.5e5}}
)"));
    EXPECT_DOUBLE_EQ(*node.system.dirty_ratio, 1);
    EXPECT_DOUBLE_EQ(*node.system.dirty_background_ratio, 0);
    EXPECT_DOUBLE_EQ(*node.system.write_syscall_per_byte, 2.1e-10);
    EXPECT_DOUBLE_EQ(*node.devices[0].reliability.ber, 1e-3);
    EXPECT_DOUBLE_EQ(node.devices[0].performance.max_iops, 250000);
}

TEST(NodeYamlUnits, AnEmptyFileIsAnEmptyNodeWithAWarning) {
    const NodeLoadResult result = load_node_text("", "empty.yaml");
    ASSERT_TRUE(result.ok());
    EXPECT_TRUE(result.node->devices.empty());
    EXPECT_THAT(
        warnings(result),
        ElementsAre("empty.yaml: warning: the node defines no mounts, so no IO can be placed"));
}
