// Values a node file may leave out are inferred, never overriding what was given
// (docs/config.md, "Inferred values").
#include "node_yaml_test_support.hpp"

using namespace iosig;
using namespace iosig::testing_support;

namespace {
constexpr double MiB = 1024.0 * 1024;
constexpr std::uint64_t GiB = 1ull << 30;

// Members for the complex devices: capacities 100G/200G/300G/400G, bandwidths 100/200/300/400 M/s.
std::string disks(std::string_view more) {
    return yaml(R"(
devices:
  d1: {media: hdd, rotational: true, capacity: 100G, performance: {seq_read_bw: 100M/s, seq_write_bw: 90M/s, op_latency: 1ms, seek_latency: 8ms, max_iops: 200}}
  d2: {media: ssd, capacity: 200G, performance: {seq_read_bw: 200M/s, seq_write_bw: 190M/s, op_latency: 2ms, max_iops: 400}}
  d3: {media: ssd, capacity: 300G, performance: {seq_read_bw: 300M/s, seq_write_bw: 290M/s, op_latency: 3ms, max_iops: 600}}
  d4: {media: ssd, capacity: 400G, performance: {seq_read_bw: 400M/s, seq_write_bw: 390M/s, op_latency: 4ms, max_iops: 800}}
)") + std::string(more);
}

const Device& device(const Node& node, std::string_view name) {
    const Device* d = node.find_device(name);
    EXPECT_NE(d, nullptr) << name;
    static const Device none;
    return d ? *d : none;
}
} // namespace

TEST(NodeYamlInference, RandomBandwidthDefaultsToSequential) {
    const Node node = load_ok(minimal_node);
    const Performance& p = node.devices[0].performance;
    EXPECT_DOUBLE_EQ(p.rand_read_bw, 500 * MiB);
    EXPECT_DOUBLE_EQ(p.rand_write_bw, 400 * MiB);
    EXPECT_EQ(node.provenance.at("devices.ssd0.performance.rand_read_bw"), Provenance::defaulted);
}

TEST(NodeYamlInference, GivenRandomBandwidthIsKept) {
    const Node node = load_ok(R"(
devices:
  hdd0: {media: hdd, performance: {seq_read_bw: 200M/s, seq_write_bw: 200M/s, rand_read_bw: 2M/s}}
)");
    EXPECT_DOUBLE_EQ(node.devices[0].performance.rand_read_bw, 2 * MiB);
    EXPECT_DOUBLE_EQ(node.devices[0].performance.rand_write_bw, 200 * MiB);
}

TEST(NodeYamlInference, MountCapacityIsTheDevicesAndFreeIsTheCapacity) {
    const Node node = load_ok(minimal_node);
    EXPECT_EQ(node.mounts[0].capacity, 100 * GiB);
    EXPECT_EQ(node.mounts[0].free_space, 100 * GiB);
    EXPECT_EQ(node.provenance.at("mounts[/mnt/ssd].capacity"), Provenance::derived);
    EXPECT_EQ(node.provenance.at("mounts[/mnt/ssd].free"), Provenance::defaulted);

    const Node given = load_ok(std::string(minimal_node) + "    capacity: 50G\n");
    EXPECT_EQ(given.mounts[0].capacity, 50 * GiB);
    EXPECT_EQ(given.mounts[0].free_space, 50 * GiB);

    const Node full = load_ok(std::string(minimal_node) + "    free: 0\n");
    EXPECT_EQ(full.mounts[0].free_space, 0u); // explicitly full, not "unknown"
}

TEST(NodeYamlInference, PartitionsShareTheirOwnersMediumAndFigures) {
    const Node node = load_ok(R"(
devices:
  d1:
    media: hdd
    rotational: true
    capacity: 100G
    performance: {seq_read_bw: 100M/s, seq_write_bw: 90M/s, seek_latency: 8ms, max_iops: 200,
                  throttle_slice: 50ms, read_ahead: 512K, max_io: 1M}
    reliability: {mttf: 5y, ber: 1e-14, mttr: 2d}
  d1p1: {owner: d1, capacity: 40G}
  d1p2: {owner: d1, performance: {seq_write_bw: 50M/s}, reliability: {mttf: 1y}}
)");
    const Device& p1 = device(node, "d1p1");
    EXPECT_EQ(p1.media, MediaKind::hdd);
    EXPECT_TRUE(p1.rotational);
    EXPECT_EQ(p1.capacity, 40 * GiB); // given
    EXPECT_DOUBLE_EQ(p1.performance.seq_read_bw, 100 * MiB);
    EXPECT_DOUBLE_EQ(p1.performance.seek_latency, 8e-3);
    EXPECT_DOUBLE_EQ(p1.performance.max_iops, 200);
    EXPECT_DOUBLE_EQ(p1.performance.throttle_slice, 0.05); // the same throttle
    EXPECT_EQ(p1.performance.read_ahead, 512u << 10);      // and the same queue
    EXPECT_EQ(p1.performance.max_io, 1u << 20);
    EXPECT_EQ(node.provenance.at("devices.d1p1.performance.read_ahead"), Provenance::derived);
    EXPECT_DOUBLE_EQ(*p1.reliability.ber, 1e-14);
    EXPECT_EQ(node.provenance.at("devices.d1p1.performance.seq_read_bw"), Provenance::derived);
    const Device& p2 = device(node, "d1p2");
    EXPECT_EQ(p2.capacity, 100 * GiB); // the owner's: an upper bound
    EXPECT_DOUBLE_EQ(p2.performance.seq_write_bw, 50 * MiB);
    EXPECT_DOUBLE_EQ(p2.performance.rand_write_bw, 50 * MiB); // from its own seq, not the owner's
    EXPECT_DOUBLE_EQ(*p2.reliability.mttf, 1 * 365.25 * 86400);
    EXPECT_DOUBLE_EQ(*p2.reliability.mttr, 2 * 86400.0);
}

// Separate read and write limits (a throttled volume) are a property of the medium: partitions
// share it, and a mirror or stripe has it when every member has it.
TEST(NodeYamlInference, SeparateReadAndWriteLimitsPassToPartitionsAndToComplexDevices) {
    const Node node = load_ok(R"(
devices:
  v1: {media: ssd, capacity: 10G, performance: {seq_read_bw: 100M/s, seq_write_bw: 100M/s, independent_read_write: true}}
  v2: {media: ssd, capacity: 10G, performance: {seq_read_bw: 100M/s, seq_write_bw: 100M/s, independent_read_write: true}}
  v3: {media: ssd, capacity: 10G, performance: {seq_read_bw: 100M/s, seq_write_bw: 100M/s}}
  v1p1: {owner: v1, capacity: 5G}
  both: {scheme: raid1, members: [v1, v2]}
  mixed: {scheme: raid1, members: [v1, v3]}
)");
    EXPECT_TRUE(device(node, "v1p1").performance.independent_read_write);
    EXPECT_EQ(node.provenance.at("devices.v1p1.performance.independent_read_write"),
              Provenance::derived);
    EXPECT_TRUE(device(node, "both").performance.independent_read_write);
    EXPECT_FALSE(device(node, "mixed").performance.independent_read_write);
    EXPECT_FALSE(device(node, "v3").performance.independent_read_write) << "the default";
}

TEST(NodeYamlInference, ComplexCapacityFollowsTheScheme) {
    const Node node = load_ok(disks(R"(  r0: {scheme: raid0, members: [d1, d2]}
  r1: {scheme: raid1, members: [d1, d2]}
  r5: {scheme: raid5, members: [d1, d2, d3, d4]}
  r6: {scheme: raid6, members: [d1, d2, d3, d4]}
  r10: {scheme: raid10, members: [d1, d2, d3, d4]}
  rep: {scheme: replication, replicas: 2, members: [d1, d2, d3]}
  ec: {scheme: erasure, data_units: 2, parity_units: 2, members: [d1, d2, d3, d4]}
  nfs: {scheme: opaque, members: [d1, d2]}
  given: {scheme: raid1, members: [d1, d2], capacity: 42G}
)"));
    EXPECT_EQ(device(node, "r0").capacity, 300 * GiB);  // sum
    EXPECT_EQ(device(node, "r1").capacity, 100 * GiB);  // smallest
    EXPECT_EQ(device(node, "r5").capacity, 300 * GiB);  // (k-1) * smallest
    EXPECT_EQ(device(node, "r6").capacity, 200 * GiB);  // (k-2) * smallest
    EXPECT_EQ(device(node, "r10").capacity, 200 * GiB); // k/2 * smallest
    EXPECT_EQ(device(node, "rep").capacity, 300 * GiB); // sum / replicas
    EXPECT_EQ(device(node, "ec").capacity, 500 * GiB);  // sum * n/(n+m)
    EXPECT_EQ(device(node, "nfs").capacity, 0u);        // opaque: not derivable
    EXPECT_EQ(device(node, "given").capacity, 42 * GiB);
    EXPECT_EQ(node.provenance.at("devices.r5.capacity"), Provenance::derived);
    EXPECT_FALSE(node.provenance.contains("devices.given.capacity"));
}

TEST(NodeYamlInference, ComplexBandwidthIsTheDataWidthTimesTheSlowestMember) {
    const Node node = load_ok(disks(R"(  r0: {scheme: raid0, members: [d2, d3]}
  r1: {scheme: raid1, members: [d2, d3]}
  r5: {scheme: raid5, members: [d2, d3, d4]}
  r6: {scheme: raid6, members: [d1, d2, d3, d4]}
  r10: {scheme: raid10, members: [d1, d2, d3, d4]}
  rep: {scheme: replication, replicas: 3, members: [d2, d3, d4]}
  ec: {scheme: erasure, data_units: 3, parity_units: 1, members: [d1, d2, d3, d4]}
  nfs: {scheme: opaque, media: network, members: [d1, d2]}
)"));
    EXPECT_DOUBLE_EQ(device(node, "r0").performance.seq_read_bw, 2 * 200 * MiB);
    EXPECT_DOUBLE_EQ(device(node, "r0").performance.seq_write_bw, 2 * 190 * MiB);
    EXPECT_DOUBLE_EQ(device(node, "r1").performance.seq_read_bw, 200 * MiB);
    EXPECT_DOUBLE_EQ(device(node, "r5").performance.seq_write_bw, 2 * 190 * MiB);
    EXPECT_DOUBLE_EQ(device(node, "r6").performance.seq_read_bw, 2 * 100 * MiB);
    EXPECT_DOUBLE_EQ(device(node, "r10").performance.seq_read_bw, 2 * 100 * MiB);
    EXPECT_DOUBLE_EQ(device(node, "rep").performance.seq_read_bw, 200 * MiB);
    EXPECT_DOUBLE_EQ(device(node, "ec").performance.seq_write_bw, 3 * 90 * MiB);
    EXPECT_DOUBLE_EQ(device(node, "ec").performance.rand_read_bw, 3 * 100 * MiB);
    EXPECT_DOUBLE_EQ(device(node, "nfs").performance.seq_read_bw, 0); // opaque: give it
    // Latencies are the worst member's; IOPS scale like bandwidth.
    EXPECT_DOUBLE_EQ(device(node, "r5").performance.op_latency, 4e-3);
    EXPECT_DOUBLE_EQ(device(node, "r6").performance.seek_latency, 8e-3);
    EXPECT_DOUBLE_EQ(device(node, "r0").performance.max_iops, 2 * 400);
    EXPECT_EQ(node.provenance.at("devices.r0.performance.seq_read_bw"), Provenance::derived);
}

TEST(NodeYamlInference, GivenComplexFiguresWin) {
    const Node node = load_ok(disks(R"(  r1:
    scheme: raid1
    members: [d2, d3]
    performance: {seq_read_bw: 500M/s, max_iops: 10}
)"));
    const Performance& p = device(node, "r1").performance;
    EXPECT_DOUBLE_EQ(p.seq_read_bw, 500 * MiB);
    EXPECT_DOUBLE_EQ(p.rand_read_bw, 500 * MiB);  // the device's own seq, not the members'
    EXPECT_DOUBLE_EQ(p.seq_write_bw, 190 * MiB);  // derived from the members ...
    EXPECT_DOUBLE_EQ(p.rand_write_bw, 190 * MiB); // ... as is its random counterpart
    EXPECT_DOUBLE_EQ(p.max_iops, 10);
}

TEST(NodeYamlInference, AnUncappedOrUnknownMemberStopsTheDerivation) {
    const Node node = load_ok(disks(R"(  d5: {media: ssd}
  r0: {scheme: raid0, members: [d2, d5]}
  d6: {media: ssd, capacity: 1G, performance: {seq_read_bw: 1G/s, seq_write_bw: 1G/s}}
  r1: {scheme: raid1, members: [d2, d6]}
)"));
    EXPECT_EQ(device(node, "r0").capacity, 0u);
    EXPECT_DOUBLE_EQ(device(node, "r0").performance.seq_read_bw, 0);
    EXPECT_DOUBLE_EQ(device(node, "r1").performance.max_iops, 0); // d6 has no cap
    EXPECT_DOUBLE_EQ(device(node, "r1").performance.seq_read_bw, 200 * MiB);
}

TEST(NodeYamlInference, ComplexMediaAndRotationFollowTheMembers) {
    const Node node = load_ok(disks(R"(  mixed: {scheme: raid5, members: [d1, d2, d3]}
  hdds: {scheme: raid1, members: [d1, d1p]}
  d1p: {owner: d1}
  told: {scheme: raid1, media: nvram, rotational: false, members: [d1, d2]}
)"));
    EXPECT_EQ(device(node, "mixed").media, MediaKind::ssd); // two of three
    EXPECT_TRUE(device(node, "mixed").rotational);          // one spinning member suffices
    EXPECT_EQ(device(node, "hdds").media, MediaKind::hdd);
    EXPECT_EQ(device(node, "told").media, MediaKind::nvram);
    EXPECT_FALSE(device(node, "told").rotational);
}

TEST(NodeYamlInference, NestedComplexDevicesResolveInsideOut) {
    // A RAID1 of two RAID0s, declared before its members.
    const Node node = load_ok(disks(R"(  top: {scheme: raid1, members: [left, right]}
  left: {scheme: raid0, members: [d1, d2]}
  right: {scheme: raid0, members: [d3, d4]}
)"));
    EXPECT_EQ(device(node, "left").capacity, 300 * GiB);
    EXPECT_EQ(device(node, "top").capacity, 300 * GiB);
    EXPECT_DOUBLE_EQ(device(node, "top").performance.seq_read_bw, 2 * 100 * MiB);
}
