// to_yaml writes the schema back, with exact units and provenance tags; loading its text gives an
// equal model (docs/config.md, "Writing node files").
#include "iosig/units.hpp"
#include "node_yaml_test_support.hpp"

#include <yaml-cpp/yaml.h>

using namespace iosig;
using namespace iosig::testing_support;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

// Every section, structure and scheme; tags; calibration maps; values with and without exact units.
constexpr std::string_view rich_node = R"(
node: {name: "rich node: all keys", page_size: !detected 4K}
system:
  memory_bw: !measured 8G/s
  page_cache_write_bw: 2.5G/s
  page_cache_write_bw_flushing: 1234567.891
  page_cache_rewrite_bw: !measured 12G/s
  page_cache_rewrite_bw_cold: !measured 9G/s
  rewrite_cooling_time: !measured 3ms
  write_syscall_base: !measured 1.5us
  write_syscall_cold_base: !measured 30us
  call_cooling_time: !measured 8ms
  write_syscall_per_byte: 2.1e-10
  sync_write_syscall_base: 20us
  sync_write_syscall_per_byte: 1e-9
  dirty_ratio: 0.2
  dirty_background_ratio: 0.1
  dirty_bytes: 0
  dirty_background_bytes: 1.5M
  dirtyable_memory: 22G
  dirty_expire: 30s
  dirty_writeback_interval: 0.123456789s
  stdio_buffer_size: 4K
devices:
  ram0:
    media: ram
    dev_path: /dev/ram0
    capacity: 1G
    performance: {seq_read_bw: !measured 6G/s, seq_write_bw: !measured 4.123G/s, op_latency: 5us}
    reliability: {mttf: !user 10y, ber: 1e-6, mttr: 1d}
    calibration:
      tool: iosig-calibrate
      points: [{size: 4K, bw: !measured 1.2G/s}, {size: 1M, bw: 3.9G/s}]
      "quoted key": ~
  ssd0: {media: ssd, capacity: 240G, performance: {seq_read_bw: 540M/s, seq_write_bw: 480M/s, max_iops: 80000}}
  ssd1: {media: ssd, capacity: 240G, performance: {seq_read_bw: 540M/s, seq_write_bw: 480M/s, max_iops: 80000}}
  ssd2: {media: ssd, capacity: 240G, performance: {seq_read_bw: 540M/s, seq_write_bw: 480M/s, max_iops: 80000}}
  ssd3: {media: ssd, capacity: 240G, performance: {seq_read_bw: 540M/s, seq_write_bw: 480M/s, max_iops: 80000}}
  md1: {scheme: raid1, members: [ssd0, ssd1], dev_path: /dev/md1}
  md10: {scheme: raid10, members: [ssd0, ssd1, ssd2, ssd3]}
  md6: {scheme: raid6, members: [ssd0, ssd1, ssd2, ssd3], performance: {seq_write_bw: !derived 700M/s}}
  rep: {scheme: replication, replicas: 3, members: [ssd1, ssd2, ssd3]}
  ec: {scheme: erasure, data_units: 2, parity_units: 1, members: [ssd0, ssd1, ssd2]}
  nfs:
    structure: complex
    scheme: opaque
    media: network
    capacity: 100T
    mttdl: 100y
    performance: {seq_read_bw: 110M/s, seq_write_bw: 95M/s, op_latency: 1.2ms, rand_write_bw: 20M/s}
  hdd0:
    media: hdd
    rotational: true
    capacity: 8T
    performance: {seq_read_bw: 210M/s, seq_write_bw: 200M/s, op_latency: 4ms, seek_latency: 8.5ms, max_iops: 180,
                  independent_read_write: true, throttle_slice: 100ms, read_ahead: 2560K, max_io: 1280K}
    reliability: {mttf: 5y, mttr: 36h}
  hdd0p1: {owner: hdd0, capacity: 2T, dev_path: /dev/sdb1}
mounts:
  - path: /mnt/ramdisk
    device: ram0
    fs_type: tmpfs
    labels: [scratch, "odd label: with colon", "~"]
    volatile: true
    capacity: 1G
    free: !detected 900M
    max_file_size: 1G
    calibration: {}
  - {path: /mnt/raid1, device: md1, fs_type: ext4, ecc: {correctable_bits: 2, sector_bits: 512}}
  - {path: /mnt/raid10, device: md10, archive: true}
  - {path: /mnt/raid6, device: md6, tamperproof: true}
  - {path: /mnt/rep, device: rep, block_size: 64K}
  - {path: /mnt/ec, device: ec}
  - {path: /shared, device: nfs, global: true, labels: !user [home]}
  - {path: /mnt/hdd, device: hdd0p1, free: 1.25T, max_file_size: 16T}
)";

Node reload(const Node& node) {
    const std::string text = to_yaml(node);
    const NodeLoadResult again = load_node_text(text, "written.yaml");
    EXPECT_TRUE(again.ok()) << all_diagnostics(again) << "\n" << text;
    EXPECT_TRUE(again.diagnostics.empty()) << all_diagnostics(again) << "\n" << text;
    return again.node.value_or(Node{});
}

} // namespace

TEST(NodeYamlRoundTrip, ALoadedNodeLoadsBackEqualFromItsYaml) {
    const Node node = load_ok(rich_node);
    ASSERT_EQ(node.mounts.size(), 8u);
    const Node again = reload(node);
    EXPECT_EQ(without_locations(again), without_locations(node)) << to_yaml(node);
    // Member by member, so that a difference is easy to find when the whole comparison fails.
    for (std::size_t i = 0; i < node.devices.size() && i < again.devices.size(); ++i) {
        Device a = node.devices[i], b = again.devices[i];
        a.where = b.where = {};
        EXPECT_EQ(a, b) << a.name;
    }
    EXPECT_EQ(again.provenance, node.provenance);
    EXPECT_EQ(again.system, node.system);
}

TEST(NodeYamlRoundTrip, WritingIsStable) {
    const std::string once = to_yaml(load_ok(rich_node));
    EXPECT_EQ(to_yaml(reload(load_ok(rich_node))), once);
}

TEST(NodeYamlRoundTrip, UsesUnitsWhereExactAndPlainNumbersOtherwise) {
    const std::string text = to_yaml(load_ok(rich_node));
    EXPECT_THAT(text, HasSubstr("page_size: !detected 4K\n"));
    EXPECT_THAT(text, HasSubstr("memory_bw: !measured 8G/s\n"));
    EXPECT_THAT(text, HasSubstr("page_cache_write_bw: 2560M/s\n"));
    EXPECT_THAT(text, HasSubstr("page_cache_write_bw_flushing: 1234567.891\n"));
    EXPECT_THAT(text, HasSubstr("page_cache_rewrite_bw: !measured 12G/s\n"));
    EXPECT_THAT(text, HasSubstr("page_cache_rewrite_bw_cold: !measured 9G/s\n"));
    EXPECT_THAT(text, HasSubstr("rewrite_cooling_time: !measured 3ms\n"));
    EXPECT_THAT(text, HasSubstr("write_syscall_cold_base: !measured 30us\n"));
    EXPECT_THAT(text, HasSubstr("call_cooling_time: !measured 8ms\n"));
    EXPECT_THAT(text, HasSubstr("dirty_background_bytes: 1536K\n"));
    EXPECT_THAT(text, HasSubstr("mttf: !user 10y\n"));
    EXPECT_THAT(text, HasSubstr("mttr: 36h\n"));
    EXPECT_THAT(text, HasSubstr("mttdl: 100y\n"));
    EXPECT_THAT(text, HasSubstr("op_latency: 5us\n"));
    EXPECT_THAT(text, HasSubstr("seek_latency: 8.5ms\n"));
    EXPECT_THAT(text, HasSubstr("throttle_slice: 0.1s\n"));
    EXPECT_THAT(text, HasSubstr("read_ahead: 2560K\n"));
    EXPECT_THAT(text, HasSubstr("max_io: 1280K\n"));
    EXPECT_THAT(text, HasSubstr("ber: 1e-6\n"));
    EXPECT_THAT(text, HasSubstr("free: 1280G\n"));
    EXPECT_THAT(text, HasSubstr("capacity: 100T\n"));
    EXPECT_THAT(text, HasSubstr("members: [ssd0, ssd1]\n"));
    EXPECT_THAT(text, HasSubstr("labels: !user [home]\n"));
    // Inferred values are marked as such.
    EXPECT_THAT(text, HasSubstr("rand_read_bw: !default 540M/s\n"));
    EXPECT_THAT(text, HasSubstr("capacity: !derived 240G\n"));
    EXPECT_THAT(text, HasSubstr("seq_write_bw: !derived 700M/s\n      rand_read_bw: !derived "
                                "1080M/s\n      rand_write_bw: !default 700M/s\n"));
    // Zero means unknown / no cap and is left out rather than written as an invalid bandwidth.
    EXPECT_THAT(text, Not(HasSubstr("_bw: 0")));
}

TEST(NodeYamlRoundTrip, CalibrationMapsSurviveAsMaps) {
    const Node node = load_ok(rich_node);
    const Node again = reload(node);
    const YAML::Node calibration = YAML::Load(again.find_device("ram0")->calibration_yaml);
    ASSERT_TRUE(calibration.IsMap());
    EXPECT_EQ(calibration["tool"].as<std::string>(), "iosig-calibrate");
    EXPECT_EQ(calibration["points"][0]["bw"].Tag(), "!measured");
    EXPECT_TRUE(calibration["quoted key"].IsNull());
    EXPECT_EQ(again.find_mount("/mnt/ramdisk")->calibration_yaml, "{}");
}

TEST(NodeYamlRoundTrip, AHandBuiltCompleteNodeRoundTripsExactly) {
    Node node;
    node.name = "built";
    node.page_size = 65536;
    node.system.memory_bw = 1e10 / 3; // not a whole number of bytes per second
    node.system.dirty_expire = 1.0 / 3;
    node.system.dirty_ratio = 0.15;
    Device& d = node.devices.emplace_back();
    d.name = "nv";
    d.media = MediaKind::nvram;
    d.capacity = 3 * 1000 * 1000 * 1000ull + 7;
    d.performance = {1.5e9, 1.25e9, 1e9, 0.75e9, 2e-6, 0, 5e5, false, 0, 0, 4096 * 5 + 1};
    d.reliability = {7 * seconds_per_year, 1e-17, 3600};
    Mount& m = node.mounts.emplace_back();
    m.path = "/pmem";
    m.device = "nv";
    m.fs_type = "ext4-dax";
    m.capacity = d.capacity;
    m.free_space = 12345;
    m.block_size = 4096;
    m.global = m.tamperproof = true;
    m.labels = {"a b", "#hash", "- dash", "yes"};
    m.ecc = {3, 4096};
    node.provenance["devices.nv.performance.max_iops"] = Provenance::measured;
    node.provenance["mounts[/pmem].labels"] = Provenance::user;
    node.provenance["system.memory_bw"] = Provenance::derived;
    EXPECT_EQ(without_locations(reload(node)), node) << to_yaml(node);
}

TEST(NodeYamlRoundTrip, TheOutputIsAcceptedByTheLoaderWithoutWarnings) {
    // reload() asserts both; this states it for the smallest node as well.
    const Node node = load_ok(minimal_node);
    EXPECT_EQ(without_locations(reload(node)), without_locations(node));
}
