// What each device structure and redundancy scheme needs, references between devices and mounts,
// cycles — each rejected at the file:line:col of the value at fault (docs/config.md, "Validation").
#include "node_yaml_test_support.hpp"

using namespace iosig;
using namespace iosig::testing_support;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {
// Four simple SSDs (lines 2-5) that the complex devices below are built from.
std::string with_disks(std::string_view more) {
    return yaml(R"(
devices:
  a: {media: ssd, capacity: 1T}
  b: {media: ssd, capacity: 1T}
  c: {media: ssd, capacity: 1T}
  d: {media: ssd, capacity: 1T}
)") + std::string(more);
}
} // namespace

TEST(NodeYamlSimpleDevices, NeedMedia) {
    EXPECT_EQ(only_error("devices:\n  ssd0: {capacity: 1G}\n"),
              "node.yaml:2:3: error: simple device 'ssd0' needs 'media' (one of ram, nvram, ssd, "
              "hdd, network)");
}

TEST(NodeYamlSimpleDevices, RejectComplexAndPartitionKeys) {
    EXPECT_EQ(only_error(with_disks("  e: {structure: simple, media: ssd, members: [a, b]}\n")),
              "node.yaml:6:47: error: 'members' only applies to complex devices; device 'e' is "
              "simple");
    EXPECT_EQ(only_error(with_disks("  e: {structure: simple, media: ssd, owner: a}\n")),
              "node.yaml:6:45: error: 'owner' only applies to partitions; device 'e' is simple");
}

TEST(NodeYamlComplexDevices, NeedASchemeAndMembers) {
    EXPECT_EQ(only_error(with_disks("  e: {structure: complex, members: [a, b]}\n")),
              "node.yaml:6:3: error: complex device 'e' needs a 'scheme' (raid0, raid1, raid5, "
              "raid6, raid10, replication, erasure or opaque)");
    EXPECT_EQ(only_error(with_disks("  e: {structure: complex, scheme: raid1}\n")),
              "node.yaml:6:35: error: complex device 'e' (raid1) needs 'members'");
}

TEST(NodeYamlComplexDevices, OpaqueDevicesNeedNoMembers) {
    const Node node = load_ok(R"(
devices:
  nfs: {structure: complex, scheme: opaque, media: network, capacity: 10T, mttdl: 50y}
)");
    EXPECT_TRUE(node.find_device("nfs")->members.empty());
}

TEST(NodeYamlComplexDevices, MembersMustExistOnceAndNotBeTheDeviceItself) {
    EXPECT_EQ(only_error(with_disks("  e: {scheme: raid1, members: [a, bb]}\n")),
              "node.yaml:6:35: error: device 'e' has unknown member 'bb' (did you mean 'b'?)");
    EXPECT_EQ(only_error(with_disks("  e: {scheme: raid1, members: [a, e]}\n")),
              "node.yaml:6:35: error: device 'e' cannot be a member of itself");
    EXPECT_EQ(only_error(with_disks("  e: {scheme: raid5, members: [a, b, a]}\n")),
              "node.yaml:6:38: error: device 'e' lists member 'a' twice");
}

TEST(NodeYamlComplexDevices, RaidLevelsNeedTheirMemberCounts) {
    EXPECT_EQ(only_error(with_disks("  e: {scheme: raid0, members: [a]}\n")),
              "node.yaml:6:31: error: raid0 device 'e' needs at least 2 members, has 1");
    EXPECT_EQ(only_error(with_disks("  e: {scheme: raid1, members: [a]}\n")),
              "node.yaml:6:31: error: raid1 device 'e' needs at least 2 members, has 1");
    EXPECT_EQ(only_error(with_disks("  e: {scheme: raid5, members: [a, b]}\n")),
              "node.yaml:6:31: error: raid5 device 'e' needs at least 3 members, has 2");
    EXPECT_EQ(only_error(with_disks("  e: {scheme: raid6, members: [a, b, c]}\n")),
              "node.yaml:6:31: error: raid6 device 'e' needs at least 4 members, has 3");
    EXPECT_EQ(only_error(with_disks("  e: {scheme: raid10, members: [a, b]}\n")),
              "node.yaml:6:32: error: raid10 device 'e' needs at least 4 members, has 2");
    EXPECT_EQ(only_error(with_disks(
                  "  f: {media: ssd}\n  e: {scheme: raid10, members: [a, b, c, d, f]}\n")),
              "node.yaml:7:32: error: raid10 device 'e' needs an even number of members (mirrored "
              "pairs), has 5");
    load_ok(with_disks("  e: {scheme: raid10, members: [a, b, c, d]}\n"));
}

TEST(NodeYamlComplexDevices, ReplicationNeedsReplicasAndEnoughMembers) {
    EXPECT_EQ(only_error(with_disks("  e: {scheme: replication, members: [a, b]}\n")),
              "node.yaml:6:15: error: replication device 'e' needs 'replicas' (the number of "
              "copies k >= 1)");
    EXPECT_EQ(only_error(with_disks("  e: {scheme: replication, replicas: 0, members: [a]}\n")),
              "node.yaml:6:38: error: 'replicas' of device 'e' must be at least 1, got 0");
    EXPECT_EQ(only_error(with_disks("  e: {scheme: replication, replicas: 3, members: [a, b]}\n")),
              "node.yaml:6:50: error: replication device 'e' needs at least 3 members to hold 3 "
              "replicas, has 2");
    load_ok(with_disks("  e: {scheme: replication, replicas: 1, members: [a]}\n"));
}

TEST(NodeYamlComplexDevices, ErasureCodesNeedDataAndParityUnits) {
    EXPECT_EQ(only_error(with_disks("  e: {scheme: erasure, data_units: 2, members: [a, b, c]}\n")),
              "node.yaml:6:15: error: erasure device 'e' needs 'data_units' (n) and "
              "'parity_units' (m) of its n+m code");
    EXPECT_EQ(only_error(with_disks("  e: {scheme: erasure, data_units: 3, parity_units: 2, "
                                    "members: [a, b, c, d]}\n")),
              "node.yaml:6:65: error: erasure device 'e' needs at least 5 members for its 3+2 "
              "code, has 4");
    EXPECT_EQ(only_error(with_disks("  e: {scheme: erasure, data_units: 0, parity_units: 1, "
                                    "members: [a]}\n")),
              "node.yaml:6:36: error: 'data_units' of device 'e' must be at least 1, got 0");
    load_ok(with_disks(
        "  e: {scheme: erasure, data_units: 2, parity_units: 2, members: [a, b, c, d]}\n"));
}

TEST(NodeYamlPartitions, NeedAnOwnerThatExistsAndIsNotAPartition) {
    EXPECT_EQ(only_error(with_disks("  p: {structure: partition}\n")),
              "node.yaml:6:3: error: partition 'p' needs an 'owner' (the device it is a partition "
              "of)");
    EXPECT_EQ(only_error(with_disks("  p: {owner: aa}\n")),
              "node.yaml:6:14: error: partition 'p' has unknown owner 'aa' (did you mean 'a'?)");
    EXPECT_EQ(only_error(with_disks("  p: {owner: p}\n")),
              "node.yaml:6:14: error: partition 'p' cannot be its own owner");
    EXPECT_EQ(only_error(with_disks("  p: {owner: a}\n  q: {owner: p}\n")),
              "node.yaml:7:14: error: the owner of partition 'q' cannot be a partition, and 'p' is "
              "one; name the device it is on");
    EXPECT_EQ(only_error(with_disks("  p: {owner: a, scheme: raid1}\n")),
              "node.yaml:6:25: error: 'scheme' only applies to complex devices; device 'p' is "
              "partition");
}

TEST(NodeYamlPartitions, MayBeMembersOfComplexDevicesAsInFigure3OfThePaper) {
    const Node node = load_ok(with_disks(R"(  a1: {owner: a}
  b1: {owner: b}
  md0: {scheme: raid0, members: [a1, b1]}
)"));
    EXPECT_EQ(node.find_device("md0")->members.size(), 2u);
}

TEST(NodeYamlComplexDevices, CyclesThroughMembersAndOwnersAreRejected) {
    EXPECT_EQ(only_error(R"(
devices:
  x: {scheme: raid1, members: [y, z]}
  y: {scheme: raid1, members: [x, z]}
  z: {media: ssd}
)"),
              "node.yaml:2:3: error: devices contain themselves: x -> y -> x");
    EXPECT_EQ(only_error(R"(
devices:
  disk: {media: hdd}
  md: {scheme: raid1, members: [disk, md1]}
  md1: {owner: md}
)"),
              "node.yaml:3:3: error: devices contain themselves: md -> md1 -> md");
}

TEST(NodeYamlMounts, NeedAnAbsolutePathAndAnExistingDevice) {
    const std::string disk =
        "devices:\n  ssd0: {media: ssd, performance: {seq_read_bw: 1G/s, seq_write_bw: 1G/s}}\n";
    EXPECT_EQ(only_error(disk + "mounts:\n  - {device: ssd0}\n"),
              "node.yaml:4:5: error: a mount needs a 'path' (the absolute directory IO is "
              "redirected to)");
    EXPECT_EQ(only_error(disk + "mounts:\n  - {path: mnt/ssd, device: ssd0}\n"),
              "node.yaml:4:12: error: mount path 'mnt/ssd' must be absolute");
    EXPECT_EQ(only_error(disk + "mounts:\n  - {path: /mnt/ssd}\n"),
              "node.yaml:4:5: error: mount '/mnt/ssd' needs a 'device' (a name from 'devices')");
    EXPECT_EQ(only_error(disk + "mounts:\n  - {path: /mnt/ssd, device: ssd1}\n"),
              "node.yaml:4:30: error: mount '/mnt/ssd' is on unknown device 'ssd1' (did you mean "
              "'ssd0'?)");
}

TEST(NodeYamlMounts, APathAppearsOnceInAFile) {
    EXPECT_EQ(only_error(std::string(minimal_node) + "  - {path: /mnt/ssd/, device: ssd0}\n"),
              "node.yaml:9:12: error: mount path '/mnt/ssd/' is listed twice in this file (first "
              "at line 7); a later file may override it, one file may not");
}

TEST(NodeYamlMounts, EccCorrectsFewerBitsThanASector) {
    EXPECT_EQ(only_error(std::string(minimal_node) +
                         "    ecc: {correctable_bits: 512, sector_bits: 512}\n"),
              "node.yaml:9:29: error: ecc of mount '/mnt/ssd' corrects 512 bits per 512-bit "
              "sector: correctable_bits must be less than sector_bits");
}

TEST(NodeYamlMounts, FreeSpaceCannotExceedCapacity) {
    EXPECT_EQ(only_error(std::string(minimal_node) + "    capacity: 1G\n    free: 2G\n"),
              "node.yaml:10:11: error: mount '/mnt/ssd' has more free space (2147483648 bytes) "
              "than capacity (1073741824 bytes)");
}

TEST(NodeYamlMounts, TheirDeviceNeedsSequentialBandwidths) {
    EXPECT_THAT(errors(load_node_text(yaml(R"(
devices:
  ssd0: {media: ssd, performance: {seq_read_bw: 1G/s}}
mounts:
  - {path: /mnt/ssd, device: ssd0}
)"),
                                      "node.yaml")),
                ElementsAre("node.yaml:4:30: error: mount '/mnt/ssd' is on device 'ssd0', which "
                            "has no performance.seq_write_bw (the throughput model needs it)"));
}

TEST(NodeYamlMounts, AComplexDeviceWithoutFiguresPointsAtItsMembers) {
    const NodeLoadResult result = load_node_text(yaml(R"(
devices:
  a: {media: ssd}
  b: {media: ssd}
  md: {scheme: raid1, members: [a, b]}
mounts:
  - {path: /md, device: md}
)"),
                                                 "node.yaml");
    EXPECT_THAT(errors(result),
                ElementsAre("node.yaml:6:25: error: mount '/md' is on device 'md', which has no "
                            "performance.seq_read_bw (the throughput model needs it); give it, or "
                            "give its members' performance",
                            HasSubstr("node.yaml:6:25: error: mount '/md' is on device 'md', which "
                                      "has no performance.seq_write_bw")));
}

TEST(NodeYamlMounts, UnusedDevicesNeedNoPerformance) {
    const Node node = load_ok(std::string(minimal_node) + R"(
  - {path: /mnt/ssd2, device: ssd0}
)");
    EXPECT_EQ(node.mounts.size(), 2u);
    load_ok("devices:\n  spare: {media: hdd}\n");
}
