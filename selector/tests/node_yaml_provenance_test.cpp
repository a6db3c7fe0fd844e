// Provenance tags say where a value came from; the loader records them by YAML path
// (docs/config.md, "Provenance tags").
#include "node_yaml_test_support.hpp"

using namespace iosig;
using namespace iosig::testing_support;

TEST(NodeYamlProvenance, EveryTagIsRecordedUnderTheValuesPath) {
    const Node node = load_ok(R"(
node: {page_size: !detected 4K}
system: {memory_bw: !measured 8G/s, dirty_ratio: !detected 0.2, dirty_expire: !default 30s}
devices:
  hdd0:
    media: hdd
    capacity: !detected 4G
    performance: {seq_read_bw: !measured 20M/s, seq_write_bw: !measured 19M/s}
    reliability: {mttf: !user 5y, ber: !default 1e-6, mttr: !derived 1d}
mounts:
  - path: /mnt/hdd/
    device: hdd0
    free: !detected 3G
    ecc: {correctable_bits: !user 2}
)");
    const std::map<std::string, Provenance> expected{
        {"node.page_size", Provenance::detected},
        {"system.memory_bw", Provenance::measured},
        {"system.dirty_ratio", Provenance::detected},
        {"system.dirty_expire", Provenance::defaulted},
        {"devices.hdd0.capacity", Provenance::detected},
        {"devices.hdd0.performance.seq_read_bw", Provenance::measured},
        {"devices.hdd0.performance.seq_write_bw", Provenance::measured},
        {"devices.hdd0.reliability.mttf", Provenance::user},
        {"devices.hdd0.reliability.ber", Provenance::defaulted},
        {"devices.hdd0.reliability.mttr", Provenance::derived},
        {"mounts[/mnt/hdd].free", Provenance::detected},
        {"mounts[/mnt/hdd].ecc.correctable_bits", Provenance::user},
        // Filled by inference (docs/config.md, "Inferred values"), so also marked:
        {"devices.hdd0.performance.rand_read_bw", Provenance::defaulted},
        {"devices.hdd0.performance.rand_write_bw", Provenance::defaulted},
        {"mounts[/mnt/hdd].capacity", Provenance::derived},
    };
    EXPECT_EQ(node.provenance, expected);
    // The tag does not change the value.
    EXPECT_EQ(node.devices[0].capacity, 4ull << 30);
    EXPECT_DOUBLE_EQ(node.devices[0].performance.seq_write_bw, 19.0 * (1 << 20));
}

TEST(NodeYamlProvenance, UntaggedValuesHaveNoEntry) {
    const Node node = load_ok(R"(
devices:
  ssd0: {media: ssd, capacity: 1G, performance: {seq_read_bw: 1G/s, seq_write_bw: 1G/s,
                                                  rand_read_bw: 1G/s, rand_write_bw: 1G/s}}
mounts:
  - {path: /m, device: ssd0, capacity: 1G, free: 1G}
)");
    EXPECT_TRUE(node.provenance.empty());
}

TEST(NodeYamlProvenance, TagsOnMapsAndListsAreRecordedForTheWholeValue) {
    const Node node = load_ok(std::string(minimal_node) + R"(    labels: !user [scratch]
    ecc: !detected {correctable_bits: 2, sector_bits: 512}
)");
    EXPECT_EQ(node.provenance.at("mounts[/mnt/ssd].labels"), Provenance::user);
    EXPECT_EQ(node.provenance.at("mounts[/mnt/ssd].ecc"), Provenance::detected);
    EXPECT_EQ(node.mounts[0].ecc.sector_bits, 512u);
}

TEST(NodeYamlProvenance, TagsWorkOnQuotedValuesToo) {
    const Node node = load_ok(std::string(minimal_node) + "    fs_type: !detected \"ext4\"\n");
    EXPECT_EQ(node.mounts[0].fs_type, "ext4");
    EXPECT_EQ(node.provenance.at("mounts[/mnt/ssd].fs_type"), Provenance::detected);
}
