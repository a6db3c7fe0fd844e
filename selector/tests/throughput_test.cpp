// Eq. 3 of the IOSIG paper: t = min(1/(l + ceil(ds/cs)*cs/wbw + d*cs/rbw), max_iops/(d+1)) * ds.
#include "iosig/throughput.hpp"

#include <gtest/gtest.h>

namespace iosig {
namespace {

constexpr double MiB = 1 << 20;

Eq3Parameters parameters(double latency, double wbw, double rbw, double iops = 0,
                         std::uint64_t cs = 4096) {
    Eq3Parameters p;
    p.latency = latency;
    p.write_bw = wbw;
    p.read_bw = rbw;
    p.max_iops = iops;
    p.chunk = cs;
    return p;
}

TEST(Eq3, AlignedIoCostsLatencyPlusTransfer) {
    const auto p = parameters(1e-3, 100 * MiB, 200 * MiB);
    const double ds = 1 * MiB;
    EXPECT_DOUBLE_EQ(eq3_throughput(p, 1 << 20), ds / (1e-3 + ds / (100 * MiB)));
}

TEST(Eq3, UnalignedIoWritesWholeChunksAndReadsOneChunk) {
    const auto p = parameters(0, 100 * MiB, 50 * MiB, 0, 4096);
    // 5000 B: two 4 KiB chunks written, one 4 KiB chunk read back (read-modify-write).
    const double expected = 5000 / (2 * 4096 / (100 * MiB) + 4096 / (50 * MiB));
    EXPECT_DOUBLE_EQ(eq3_throughput(p, 5000), expected);
    // A sub-chunk IO pays the same read and a whole chunk write.
    EXPECT_DOUBLE_EQ(eq3_throughput(p, 512), 512 / (4096 / (100 * MiB) + 4096 / (50 * MiB)));
}

TEST(Eq3, IopsCapIsHalvedForReadModifyWrite) {
    const auto p = parameters(0, 1e12, 1e12, 1000, 4096);
    EXPECT_DOUBLE_EQ(eq3_throughput(p, 4096), 1000.0 * 4096);
    EXPECT_DOUBLE_EQ(eq3_throughput(p, 4000), 500.0 * 4000);
}

TEST(Eq3, IopsCapIsWholeForReadModifyWriteWhenReadsHaveTheirOwnBudget) {
    auto p = parameters(0, 1e12, 1e12, 1000, 4096);
    p.independent_read_write = true;
    EXPECT_DOUBLE_EQ(eq3_throughput(p, 4096), 1000.0 * 4096);
    EXPECT_DOUBLE_EQ(eq3_throughput(p, 4000), 1000.0 * 4000) << "the read goes to the read budget";
    // The read still takes its time: with a cap too high to bind, the RMW costs as before.
    p = parameters(0, 100 * MiB, 50 * MiB, 1e9, 4096);
    p.independent_read_write = true;
    EXPECT_DOUBLE_EQ(eq3_throughput(p, 5000), 5000 / (2 * 4096 / (100 * MiB) + 4096 / (50 * MiB)));
}

TEST(Eq3, LatencyBoundIoIsNotCappedWhenTheCapIsHigher) {
    const auto p = parameters(10e-3, 100 * MiB, 100 * MiB, 1000);
    const double per_io = 10e-3 + 4096 / (100 * MiB);
    EXPECT_DOUBLE_EQ(eq3_throughput(p, 4096), 4096 / per_io);
}

TEST(Eq3, ThroughputGrowsWithChunkSizeTowardsTheBandwidth) {
    const auto p = parameters(5e-3, 200 * MiB, 200 * MiB);
    double previous = 0;
    for (std::uint64_t ds = 4096; ds <= (std::uint64_t{1} << 32); ds *= 2) {
        const double t = eq3_throughput(p, ds);
        EXPECT_GT(t, previous) << ds;
        EXPECT_LT(t, 200 * MiB) << ds;
        previous = t;
    }
    EXPECT_GT(previous, 0.99 * 200 * MiB);
}

TEST(Eq3, MissingBandwidthMeansNoThroughput) {
    EXPECT_EQ(eq3_throughput(parameters(0, 0, 100 * MiB), 4096), 0);
    EXPECT_EQ(eq3_throughput(parameters(0, 100 * MiB, 0), 4097), 0); // needs the read
    EXPECT_GT(eq3_throughput(parameters(0, 100 * MiB, 0), 4096), 0); // does not
    EXPECT_EQ(eq3_throughput(parameters(0, 100 * MiB, 100 * MiB), 0), 0);
}

Node one_device_node(MediaKind media, bool rotational) {
    Node node;
    node.page_size = 4096;
    Device d;
    d.name = "dev";
    d.media = media;
    d.rotational = rotational;
    d.performance.seq_write_bw = 200 * MiB;
    d.performance.seq_read_bw = 210 * MiB;
    d.performance.rand_write_bw = 150 * MiB;
    d.performance.rand_read_bw = 160 * MiB;
    d.performance.op_latency = 1e-3;
    d.performance.seek_latency = 8e-3;
    d.performance.max_iops = 300;
    node.devices.push_back(d);
    Mount m;
    m.path = "/mnt/dev";
    m.device = "dev";
    m.block_size = 16384;
    node.mounts.push_back(m);
    return node;
}

TEST(Eq3Parameters, ChunkIsTheLargerOfPageAndBlockSize) {
    Node node = one_device_node(MediaKind::ssd, false);
    EXPECT_EQ(eq3_parameters(node, node.mounts[0], AccessPattern::sequential).chunk, 16384u);
    node.mounts[0].block_size = 1024;
    EXPECT_EQ(eq3_parameters(node, node.mounts[0], AccessPattern::sequential).chunk, 4096u);
    node.page_size = 65536;
    EXPECT_EQ(eq3_parameters(node, node.mounts[0], AccessPattern::sequential).chunk, 65536u);
}

TEST(Eq3Parameters, SeekLatencyOnlyForRandomIoOnRotationalMedia) {
    const Node hdd = one_device_node(MediaKind::hdd, true);
    EXPECT_DOUBLE_EQ(eq3_parameters(hdd, hdd.mounts[0], AccessPattern::random).latency, 9e-3);
    EXPECT_DOUBLE_EQ(eq3_parameters(hdd, hdd.mounts[0], AccessPattern::sequential).latency, 1e-3);
    EXPECT_DOUBLE_EQ(eq3_parameters(hdd, hdd.mounts[0], AccessPattern::unspecified).latency, 1e-3);
    const Node ssd = one_device_node(MediaKind::ssd, false);
    EXPECT_DOUBLE_EQ(eq3_parameters(ssd, ssd.mounts[0], AccessPattern::random).latency, 1e-3);
    // media: hdd counts as rotational even when the flag was not set
    const Node unflagged = one_device_node(MediaKind::hdd, false);
    EXPECT_DOUBLE_EQ(eq3_parameters(unflagged, unflagged.mounts[0], AccessPattern::random).latency,
                     9e-3);
}

TEST(Eq3Parameters, RandomIoUsesRandomBandwidthsFallingBackToSequential) {
    Node node = one_device_node(MediaKind::ssd, false);
    auto random = eq3_parameters(node, node.mounts[0], AccessPattern::random);
    EXPECT_DOUBLE_EQ(random.write_bw, 150 * MiB);
    EXPECT_DOUBLE_EQ(random.read_bw, 160 * MiB);
    auto sequential = eq3_parameters(node, node.mounts[0], AccessPattern::sequential);
    EXPECT_DOUBLE_EQ(sequential.write_bw, 200 * MiB);
    EXPECT_DOUBLE_EQ(sequential.read_bw, 210 * MiB);
    EXPECT_DOUBLE_EQ(sequential.max_iops, 300);

    node.devices[0].performance.rand_write_bw = 0;
    node.devices[0].performance.rand_read_bw = 0;
    random = eq3_parameters(node, node.mounts[0], AccessPattern::random);
    EXPECT_DOUBLE_EQ(random.write_bw, 200 * MiB);
    EXPECT_DOUBLE_EQ(random.read_bw, 210 * MiB);

    node.devices[0].performance.seq_read_bw = 0; // no read figure at all: reads as fast as writes
    EXPECT_DOUBLE_EQ(eq3_parameters(node, node.mounts[0], AccessPattern::random).read_bw,
                     200 * MiB);
}

TEST(Eq3Parameters, PartitionInheritsTheOwnersPerformance) {
    Node node = one_device_node(MediaKind::hdd, true);
    Device part;
    part.name = "dev1";
    part.structure = DeviceStructure::partition;
    part.owner = "dev";
    part.performance.op_latency = 2e-3; // a figure measured on the partition wins
    node.devices.push_back(part);
    node.mounts[0].device = "dev1";
    const auto p = eq3_parameters(node, node.mounts[0], AccessPattern::random);
    EXPECT_DOUBLE_EQ(p.write_bw, 150 * MiB);
    EXPECT_DOUBLE_EQ(p.latency, 2e-3 + 8e-3); // rotational through the owner
    EXPECT_DOUBLE_EQ(p.max_iops, 300);
    EXPECT_FALSE(p.independent_read_write);
    node.devices[0].performance.independent_read_write = true; // the owner's throttle
    EXPECT_TRUE(eq3_parameters(node, node.mounts[0], AccessPattern::random).independent_read_write);
}

// The lab's hdd behind its blkio throttle of 200 IOPS and 20 MiB/s, as iosig-calibrate wrote it
// before session 37: an op latency its Eq. 3 fit found in the limit's pacing, and a random
// bandwidth that is the IOPS budget again in bytes. Charged on top of the budgets, either would
// count each IO's time twice.
Node throttled_hdd_node() {
    Node node = one_device_node(MediaKind::hdd, true);
    Performance& p = node.devices[0].performance;
    p.seq_read_bw = p.seq_write_bw = 20 * MiB;
    p.rand_read_bw = p.rand_write_bw = 807893;
    p.op_latency = 4.57e-3;
    p.seek_latency = 1.7e-6;
    p.max_iops = 200;
    p.independent_read_write = true;
    p.throttle_slice = 0.1;
    node.mounts[0].block_size = 4096;
    return node;
}

TEST(Eq3Parameters, ThrottleChargesOnlyItsBudgetsAndTheSeek) {
    Node node = throttled_hdd_node();
    const auto random = eq3_parameters(node, node.mounts[0], AccessPattern::random);
    EXPECT_DOUBLE_EQ(random.latency, 1.7e-6) << "no op latency on a throttle, the seek stays";
    EXPECT_DOUBLE_EQ(random.write_bw, 20 * MiB) << "the bytes budget holds whatever the pattern";
    EXPECT_DOUBLE_EQ(random.read_bw, 20 * MiB);
    EXPECT_DOUBLE_EQ(eq3_throughput(random, 4096), 200.0 * 4096) << "the limit's 200 IOPS";
    EXPECT_DOUBLE_EQ(eq3_parameters(node, node.mounts[0], AccessPattern::sequential).latency, 0);

    // Without the slice the same figures are a device's own, charged one after the other.
    node.devices[0].performance.throttle_slice = 0;
    const auto unthrottled = eq3_parameters(node, node.mounts[0], AccessPattern::random);
    EXPECT_DOUBLE_EQ(unthrottled.latency, 4.57e-3 + 1.7e-6);
    EXPECT_DOUBLE_EQ(unthrottled.write_bw, 807893);
    EXPECT_DOUBLE_EQ(eq3_throughput(unthrottled, 4096),
                     4096 / (4.57e-3 + 1.7e-6 + 4096 / 807893.0)); // 104 IOPS

    // A slice without an IOPS budget is no throttle the model knows: the figures are charged.
    node.devices[0].performance.throttle_slice = 0.1;
    node.devices[0].performance.max_iops = 0;
    EXPECT_DOUBLE_EQ(eq3_parameters(node, node.mounts[0], AccessPattern::random).latency,
                     4.57e-3 + 1.7e-6);
}

TEST(Eq3Parameters, PartitionOfAThrottledDiskIsThrottled) {
    Node node = throttled_hdd_node();
    Device part;
    part.name = "dev1";
    part.structure = DeviceStructure::partition;
    part.owner = "dev";
    part.performance.op_latency = 2e-3; // measured on the partition, still the limit's pacing
    node.devices.push_back(part);
    node.mounts[0].device = "dev1";
    const auto p = eq3_parameters(node, node.mounts[0], AccessPattern::random);
    EXPECT_DOUBLE_EQ(p.latency, 1.7e-6);
    EXPECT_DOUBLE_EQ(p.write_bw, 20 * MiB);
    EXPECT_DOUBLE_EQ(eq3_throughput(p, 4096), 200.0 * 4096);
}

TEST(Eq3Parameters, UnknownDeviceHasNoThroughput) {
    Node node = one_device_node(MediaKind::ssd, false);
    node.mounts[0].device = "missing";
    EXPECT_EQ(eq3_throughput(eq3_parameters(node, node.mounts[0], AccessPattern::random), 1 << 20),
              0);
}

TEST(Eq3Parameters, DefaultSizePerIoIsOneMebibyte) {
    EXPECT_EQ(default_size_per_io, 1u << 20);
}

} // namespace
} // namespace iosig
