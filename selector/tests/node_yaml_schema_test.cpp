// Every key of docs/config.md is read into the model with its unit (docs/config.md, "Schema").
#include "iosig/units.hpp"
#include "node_yaml_test_support.hpp"

#include <yaml-cpp/yaml.h>

using namespace iosig;
using namespace iosig::testing_support;
using ::testing::ElementsAre;

namespace {
constexpr double KiB = 1024.0, MiB = KiB * 1024, GiB = MiB * 1024;
}

TEST(NodeYamlSchema, NodeSection) {
    const Node node = load_ok(std::string(R"(
node:
  name: paper-node
  page_size: 16K
)") + std::string(minimal_node));
    EXPECT_EQ(node.name, "paper-node");
    EXPECT_EQ(node.page_size, 16384u);
}

TEST(NodeYamlSchema, PageSizeDefaultsTo4K) {
    EXPECT_EQ(load_ok(minimal_node).page_size, 4096u);
}

TEST(NodeYamlSchema, EverySystemParameter) {
    const Node node = load_ok(std::string(R"(
system:
  memory_bw: 8G/s
  page_cache_write_bw: 2G/s
  page_cache_write_bw_flushing: 1.5G/s
  page_cache_rewrite_bw: 9G/s
  page_cache_rewrite_bw_cold: 4G/s
  rewrite_cooling_time: 2.5ms
  write_syscall_base: 1.5us
  write_syscall_cold_base: 31us
  call_cooling_time: 7ms
  write_syscall_per_byte: 2.1e-10
  sync_write_syscall_base: 20us
  sync_write_syscall_per_byte: 1e-9
  dirty_ratio: 0.2
  dirty_background_ratio: 0.1
  dirty_bytes: 0
  dirty_background_bytes: 64M
  dirtyable_memory: 22G
  dirty_expire: 30s
  dirty_writeback_interval: 5s
  stdio_buffer_size: 4K
)") + std::string(minimal_node));
    const SystemParameters& s = node.system;
    EXPECT_DOUBLE_EQ(*s.memory_bw, 8 * GiB);
    EXPECT_DOUBLE_EQ(*s.page_cache_write_bw, 2 * GiB);
    EXPECT_DOUBLE_EQ(*s.page_cache_write_bw_flushing, 1.5 * GiB);
    EXPECT_DOUBLE_EQ(*s.page_cache_rewrite_bw, 9 * GiB);
    EXPECT_DOUBLE_EQ(*s.page_cache_rewrite_bw_cold, 4 * GiB);
    EXPECT_DOUBLE_EQ(*s.rewrite_cooling_time, 2.5e-3);
    EXPECT_DOUBLE_EQ(*s.write_syscall_base, 1.5e-6);
    EXPECT_DOUBLE_EQ(*s.write_syscall_cold_base, 31e-6);
    EXPECT_DOUBLE_EQ(*s.call_cooling_time, 7e-3);
    EXPECT_DOUBLE_EQ(*s.write_syscall_per_byte, 2.1e-10);
    EXPECT_DOUBLE_EQ(*s.sync_write_syscall_base, 20e-6);
    EXPECT_DOUBLE_EQ(*s.sync_write_syscall_per_byte, 1e-9);
    EXPECT_DOUBLE_EQ(*s.dirty_ratio, 0.2);
    EXPECT_DOUBLE_EQ(*s.dirty_background_ratio, 0.1);
    EXPECT_EQ(*s.dirty_bytes, 0u);
    EXPECT_EQ(*s.dirty_background_bytes, 64u << 20);
    EXPECT_EQ(*s.dirtyable_memory, 22ull << 30);
    EXPECT_DOUBLE_EQ(*s.dirty_expire, 30);
    EXPECT_DOUBLE_EQ(*s.dirty_writeback_interval, 5);
    EXPECT_EQ(*s.stdio_buffer_size, 4096u);
}

TEST(NodeYamlSchema, SystemParametersStayUnsetUntilGiven) {
    EXPECT_EQ(load_ok(minimal_node).system, SystemParameters{});
}

TEST(NodeYamlSchema, EverySimpleDeviceKey) {
    const Node node = load_ok(R"(
devices:
  ram0:
    structure: simple
    media: ram
    dev_path: /dev/ram0
    rotational: false
    capacity: 1G
    performance:
      seq_read_bw: 6G/s
      seq_write_bw: 4G/s
      rand_read_bw: 5G/s
      rand_write_bw: 3G/s
      op_latency: 5us
      seek_latency: 0
      max_iops: 1000000
    reliability:
      mttf: 10y
      ber: 1e-6
      mttr: 1d
mounts:
  - {path: /mnt/ramdisk, device: ram0}
)");
    ASSERT_EQ(node.devices.size(), 1u);
    const Device& d = node.devices[0];
    EXPECT_EQ(d.name, "ram0");
    EXPECT_EQ(d.structure, DeviceStructure::simple);
    EXPECT_EQ(d.media, MediaKind::ram);
    EXPECT_EQ(d.dev_path, "/dev/ram0");
    EXPECT_FALSE(d.rotational);
    EXPECT_EQ(d.capacity, 1ull << 30);
    EXPECT_DOUBLE_EQ(d.performance.seq_read_bw, 6 * GiB);
    EXPECT_DOUBLE_EQ(d.performance.seq_write_bw, 4 * GiB);
    EXPECT_DOUBLE_EQ(d.performance.rand_read_bw, 5 * GiB);
    EXPECT_DOUBLE_EQ(d.performance.rand_write_bw, 3 * GiB);
    EXPECT_DOUBLE_EQ(d.performance.op_latency, 5e-6);
    EXPECT_DOUBLE_EQ(d.performance.seek_latency, 0);
    EXPECT_DOUBLE_EQ(d.performance.max_iops, 1e6);
    EXPECT_DOUBLE_EQ(*d.reliability.mttf, 10 * seconds_per_year);
    EXPECT_DOUBLE_EQ(*d.reliability.ber, 1e-6);
    EXPECT_DOUBLE_EQ(*d.reliability.mttr, 86400);
    EXPECT_EQ(d.scheme, RedundancyScheme::none);
    EXPECT_TRUE(d.members.empty());
    EXPECT_EQ(d.where, (SourceLocation{"node.yaml", 2, 3}));
}

TEST(NodeYamlSchema, ReliabilityStaysUnsetUntilGiven) {
    const Node node = load_ok(minimal_node);
    EXPECT_EQ(node.devices[0].reliability, ReliabilityFigures{});
}

TEST(NodeYamlSchema, EveryComplexDeviceKey) {
    const Node node = load_ok(R"(
devices:
  d0: {media: ssd, capacity: 1T}
  d1: {media: ssd, capacity: 1T}
  d2: {media: ssd, capacity: 1T}
  d3: {media: ssd, capacity: 1T}
  d4: {media: ssd, capacity: 1T}
  d5: {media: ssd, capacity: 1T}
  mirror: {structure: complex, scheme: raid1, members: [d0, d1]}
  triple: {structure: complex, scheme: replication, replicas: 3, members: [d0, d1, d2]}
  rs42:
    structure: complex
    scheme: erasure
    data_units: 4
    parity_units: 2
    members: [d0, d1, d2, d3, d4, d5]
  nfs:
    structure: complex
    scheme: opaque
    media: network
    mttdl: 100y
    capacity: 10T
    performance: {seq_read_bw: 100M/s, seq_write_bw: 80M/s, op_latency: 1ms}
mounts:
  - {path: /shared, device: nfs, global: true}
)");
    const Device* mirror = node.find_device("mirror");
    ASSERT_NE(mirror, nullptr);
    EXPECT_EQ(mirror->structure, DeviceStructure::complex);
    EXPECT_EQ(mirror->scheme, RedundancyScheme::raid1);
    EXPECT_THAT(mirror->members, ElementsAre("d0", "d1"));
    const Device* triple = node.find_device("triple");
    EXPECT_EQ(triple->scheme, RedundancyScheme::replication);
    EXPECT_EQ(triple->replicas, 3u);
    const Device* rs = node.find_device("rs42");
    EXPECT_EQ(rs->scheme, RedundancyScheme::erasure);
    EXPECT_EQ(rs->data_units, 4u);
    EXPECT_EQ(rs->parity_units, 2u);
    EXPECT_EQ(rs->members.size(), 6u);
    const Device* nfs = node.find_device("nfs");
    EXPECT_EQ(nfs->scheme, RedundancyScheme::opaque);
    EXPECT_EQ(nfs->media, MediaKind::network);
    EXPECT_DOUBLE_EQ(*nfs->mttdl, 100 * seconds_per_year);
    EXPECT_TRUE(nfs->members.empty());
}

TEST(NodeYamlSchema, EveryRaidLevelIsASchemeName) {
    const Node node = load_ok(R"(
devices:
  a: {media: hdd, capacity: 1T}
  b: {media: hdd, capacity: 1T}
  c: {media: hdd, capacity: 1T}
  d: {media: hdd, capacity: 1T}
  r0: {structure: complex, scheme: raid0, members: [a, b]}
  r1: {structure: complex, scheme: RAID1, members: [a, b]}
  r5: {structure: complex, scheme: raid5, members: [a, b, c]}
  r6: {structure: complex, scheme: raid6, members: [a, b, c, d]}
  r10: {structure: complex, scheme: raid10, members: [a, b, c, d]}
)");
    EXPECT_EQ(node.find_device("r0")->scheme, RedundancyScheme::raid0);
    EXPECT_EQ(node.find_device("r1")->scheme, RedundancyScheme::raid1); // case-insensitive
    EXPECT_EQ(node.find_device("r5")->scheme, RedundancyScheme::raid5);
    EXPECT_EQ(node.find_device("r6")->scheme, RedundancyScheme::raid6);
    EXPECT_EQ(node.find_device("r10")->scheme, RedundancyScheme::raid10);
}

TEST(NodeYamlSchema, PartitionKeys) {
    const Node node = load_ok(R"(
devices:
  sda: {media: hdd, rotational: true, capacity: 4T}
  sda1: {structure: partition, owner: sda, capacity: 1T, dev_path: /dev/sda1}
)");
    const Device* part = node.find_device("sda1");
    ASSERT_NE(part, nullptr);
    EXPECT_EQ(part->structure, DeviceStructure::partition);
    EXPECT_EQ(part->owner, "sda");
    EXPECT_EQ(part->capacity, 1ull << 40);
    EXPECT_EQ(part->dev_path, "/dev/sda1");
}

TEST(NodeYamlSchema, StructureFollowsFromTheKeysWhenNotGiven) {
    const Node node = load_ok(R"(
devices:
  a: {media: ssd}
  b: {media: ssd}
  mirror: {scheme: raid1, members: [a, b]}
  part: {owner: a}
)");
    EXPECT_EQ(node.find_device("a")->structure, DeviceStructure::simple);
    EXPECT_EQ(node.find_device("mirror")->structure, DeviceStructure::complex);
    EXPECT_EQ(node.find_device("part")->structure, DeviceStructure::partition);
}

TEST(NodeYamlSchema, EveryMediaName) {
    const Node node = load_ok(R"(
devices:
  a: {media: ram}
  b: {media: nvram}
  c: {media: ssd}
  d: {media: hdd}
  e: {media: network}
  f: {media: HDD}
)");
    EXPECT_EQ(node.find_device("a")->media, MediaKind::ram);
    EXPECT_EQ(node.find_device("b")->media, MediaKind::nvram);
    EXPECT_EQ(node.find_device("c")->media, MediaKind::ssd);
    EXPECT_EQ(node.find_device("d")->media, MediaKind::hdd);
    EXPECT_EQ(node.find_device("e")->media, MediaKind::network);
    EXPECT_EQ(node.find_device("f")->media, MediaKind::hdd);
}

TEST(NodeYamlSchema, EveryMountKey) {
    const Node node = load_ok(R"(
devices:
  ram0: {media: ram, capacity: 2G, performance: {seq_read_bw: 6G/s, seq_write_bw: 4G/s}}
mounts:
  - path: /mnt/ramdisk
    device: ram0
    fs_type: tmpfs
    labels: [scratch, fast]
    global: false
    volatile: true
    archive: true
    tamperproof: true
    capacity: 1G
    free: 768M
    block_size: 8K
    max_file_size: 16T
    ecc: {correctable_bits: 2, sector_bits: 512}
)");
    ASSERT_EQ(node.mounts.size(), 1u);
    const Mount& m = node.mounts[0];
    EXPECT_EQ(m.path, "/mnt/ramdisk");
    EXPECT_EQ(m.device, "ram0");
    EXPECT_EQ(m.fs_type, "tmpfs");
    EXPECT_THAT(m.labels, ElementsAre("scratch", "fast"));
    EXPECT_FALSE(m.global);
    EXPECT_TRUE(m.is_volatile);
    EXPECT_TRUE(m.archive);
    EXPECT_TRUE(m.tamperproof);
    EXPECT_EQ(m.capacity, 1ull << 30);
    EXPECT_EQ(m.free_space, 768ull << 20);
    EXPECT_EQ(m.block_size, 8192u);
    EXPECT_EQ(m.max_file_size, 16ull << 40);
    EXPECT_EQ(m.ecc.correctable_bits, 2u);
    EXPECT_EQ(m.ecc.sector_bits, 512u);
    EXPECT_EQ(m.where, (SourceLocation{"node.yaml", 4, 5}));
}

TEST(NodeYamlSchema, MountDefaults) {
    const Mount m = load_ok(minimal_node).mounts.at(0);
    EXPECT_FALSE(m.global);
    EXPECT_FALSE(m.is_volatile);
    EXPECT_FALSE(m.archive);
    EXPECT_FALSE(m.tamperproof);
    EXPECT_EQ(m.block_size, 4096u);
    EXPECT_EQ(m.max_file_size, 0u); // no limit
    EXPECT_EQ(m.ecc.correctable_bits, 0u);
    EXPECT_EQ(m.ecc.sector_bits, 4096u);
    EXPECT_TRUE(m.labels.empty());
    EXPECT_TRUE(m.fs_type.empty());
}

TEST(NodeYamlSchema, ASingleLabelMayBeWrittenWithoutBrackets) {
    const Node node = load_ok(std::string(minimal_node) + "    labels: archive-tier\n");
    EXPECT_THAT(node.mounts[0].labels, ElementsAre("archive-tier"));
}

TEST(NodeYamlSchema, MountPathsAreNormalized) {
    const Node node = load_ok(R"(
devices:
  ssd0: {media: ssd, capacity: 1G, performance: {seq_read_bw: 1G/s, seq_write_bw: 1G/s}}
mounts:
  - {path: /mnt/ssd/, device: ssd0}
  - {path: /mnt/./other//dir, device: ssd0}
)");
    EXPECT_EQ(node.mounts[0].path, "/mnt/ssd");
    EXPECT_EQ(node.mounts[1].path, "/mnt/other/dir");
}

TEST(NodeYamlSchema, BooleansAcceptTheUsualYamlSpellings) {
    const Node node = load_ok(R"(
devices:
  ssd0: {media: ssd, capacity: 1G, performance: {seq_read_bw: 1G/s, seq_write_bw: 1G/s}}
mounts:
  - {path: /a, device: ssd0, global: yes, volatile: on, archive: True, tamperproof: TRUE}
  - {path: /b, device: ssd0, global: no, volatile: off, archive: False, tamperproof: false}
)");
    EXPECT_TRUE(node.mounts[0].global && node.mounts[0].is_volatile && node.mounts[0].archive &&
                node.mounts[0].tamperproof);
    EXPECT_FALSE(node.mounts[1].global || node.mounts[1].is_volatile || node.mounts[1].archive ||
                 node.mounts[1].tamperproof);
}

TEST(NodeYamlSchema, DevicesAndMountsKeepFileOrder) {
    const Node node = load_ok(R"(
devices:
  zz: {media: ssd, capacity: 1G, performance: {seq_read_bw: 1G/s, seq_write_bw: 1G/s}}
  aa: {media: ssd, capacity: 1G, performance: {seq_read_bw: 1G/s, seq_write_bw: 1G/s}}
mounts:
  - {path: /z, device: zz}
  - {path: /a, device: aa}
)");
    EXPECT_EQ(node.devices[0].name, "zz");
    EXPECT_EQ(node.devices[1].name, "aa");
    EXPECT_EQ(node.mounts[0].path, "/z");
    EXPECT_EQ(node.mounts[1].path, "/a");
}

TEST(NodeYamlSchema, CalibrationMapsArePreservedAsYamlText) {
    const Node node = load_ok(std::string(R"(
devices:
  hdd0:
    media: hdd
    capacity: 4G
    performance: {seq_read_bw: 20M/s, seq_write_bw: 20M/s}
    calibration:
      tool: iosig-calibrate 0.1
      points: [{size: 4K, bw: 1.2M/s}, {size: 1M, bw: 19M/s}]
mounts:
  - path: /mnt/hdd
    device: hdd0
    calibration: {}
)"));
    const YAML::Node calibration = YAML::Load(node.devices[0].calibration_yaml);
    EXPECT_EQ(calibration["tool"].as<std::string>(), "iosig-calibrate 0.1");
    EXPECT_EQ(calibration["points"][1]["bw"].as<std::string>(), "19M/s");
    EXPECT_EQ(node.mounts[0].calibration_yaml, "{}");
}
