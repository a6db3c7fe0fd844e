// The paper's queueing model (Eqs. 1-7), checked against its worked example (Sec. 5) and against
// rates derived from a node model.
#include "iosig/tier/queueing.hpp"

#include <gtest/gtest.h>

namespace iosig::tier {
namespace {

// "n = 10000 read requests ... 4 MPI processes ... p12 = 0.2, lambda = 100, mu1 = 1000, mu2 = 33":
// 2500 requests and 500 misses per process.
TEST(QueueingModel, PaperWorkedExample) {
    const TierRates rates{1000, 1000, 33, 33};
    const std::vector<ProcessLoad> processes(4, ProcessLoad{2500, 0, 500, 0});
    const CompletionTime t = completion_time(processes, rates);
    ASSERT_EQ(t.process.size(), 4u);
    EXPECT_DOUBLE_EQ(t.hit[0], 2.5); // "total response time per process = 2500/1000 = 2.5 sec"
    EXPECT_NEAR(t.miss[0], 500.0 / 33, 1e-12); // Eq. 2
    EXPECT_DOUBLE_EQ(t.seconds, t.miss[0]);    // Eqs. 3-4: the miss queue dominates

    const auto e = equilibrium(100, 0.2, 1000, 33, 4);
    ASSERT_TRUE(e.has_value());
    EXPECT_NEAR(e->rho2, 20.0 / 33, 1e-12); // "rho2 = 20/33 = 0.6"
    EXPECT_LT(e->rho1, 0.2);                // "the expected length of the tier 1 queue is almost 0"
    EXPECT_LT(e->l1, 1e-3);
    EXPECT_NEAR(e->l2, e->rho2 * e->rho2 / (1 - e->rho2), 1e-12);
    EXPECT_NEAR(e->w2, e->l2 / 20, 1e-12);
}

TEST(QueueingModel, SlowestProcessDeterminesCompletion) {
    const TierRates rates{1000, 500, 100, 100};
    const CompletionTime t = completion_time({{1000, 1000, 10, 0}, {100, 0, 300, 0}}, rates);
    EXPECT_DOUBLE_EQ(t.hit[0], 1.0 + 2.0);
    EXPECT_DOUBLE_EQ(t.process[1], 3.0);
    EXPECT_DOUBLE_EQ(t.seconds, 3.0);
}

// Eq. 2 split by direction: a home device with one medium serves fetches and write-backs one after
// the other; one that limits reads and writes separately (the lab's blkio throttle) serves them at
// the same time, so the busier direction sets the time.
TEST(QueueingModel, WriteBacksAddToFetchesUnlessTheDeviceLimitsDirectionsSeparately) {
    TierRates rates{1e6, 1e6, 200, 100};
    const ProcessLoad load{1000, 500, 400, 300}; // 2 s of fetches, 3 s of write-backs
    EXPECT_DOUBLE_EQ(completion_time({load}, rates).miss[0], 2.0 + 3.0);
    rates.tier2_independent_read_write = true;
    EXPECT_DOUBLE_EQ(completion_time({load}, rates).miss[0], 3.0);
    EXPECT_DOUBLE_EQ(completion_time({ProcessLoad{1000, 0, 400, 0}}, rates).miss[0], 2.0)
        << "a read-only load is unaffected";
}

TEST(QueueingModel, ExpectedServiceTimeInterpolatesBetweenTiers) {
    EXPECT_DOUBLE_EQ(expected_service_time(0, 1000, 10), 0.001);
    EXPECT_DOUBLE_EQ(expected_service_time(1, 1000, 10), 0.1);
    EXPECT_DOUBLE_EQ(expected_service_time(0.5, 1000, 10), 0.0505);
}

TEST(QueueingModel, NoEquilibriumWhenTheMissQueueIsOverloaded) {
    EXPECT_FALSE(equilibrium(100, 0.5, 1000, 33, 4).has_value());
}

// A node with a ramdisk mounted at /fast and `slow` (a rotational device) at /slow.
Node node_with_slow(const Performance& slow_performance) {
    Node node;
    node.name = "test";
    Device slow_device;
    slow_device.name = "slow";
    slow_device.rotational = true;
    slow_device.performance = slow_performance;
    Device ram;
    ram.name = "ram";
    ram.performance = Performance{6e9, 4e9, 0, 0, 2e-6, 0, 0};
    node.devices = {slow_device, ram};
    Mount slow, fast;
    slow.path = "/slow";
    slow.device = "slow";
    fast.path = "/fast";
    fast.device = "ram";
    node.mounts = {slow, fast};
    return node;
}

TEST(QueueingModel, RatesFromTheNodeModel) {
    Node node = node_with_slow(Performance{20 << 20, 20 << 20, 0, 0, 0.001, 0.004, 200});
    const Device& hdd = node.devices[0];
    // 4 KiB random read on the disk: 1 ms + 4 ms seek + 4096 / 20 MiB/s = 5.195 ms -> 192.5/s (<
    // 200 IOPS).
    EXPECT_NEAR(service_rate(hdd, 4096, true, true), 1 / (0.005 + 4096.0 / (20 << 20)), 1e-9);
    // Sequential 1 MiB: bandwidth-bound, 1 ms + 50 ms.
    EXPECT_NEAR(service_rate(hdd, 1 << 20, true, false), 1 / 0.051, 1e-9);
    // 512 B random: capped by max_iops? 1/(5.024 ms) = 199/s, just below the cap.
    EXPECT_LE(service_rate(hdd, 512, true, true), 200);
    const TierRates r = tier_rates(node, "/fast", "/slow", 4096, true);
    EXPECT_NEAR(r.tier1_read, 1 / (2e-6 + 4096 / 6e9), 1e-6);
    EXPECT_NEAR(r.tier2_read, service_rate(hdd, 4096, true, true), 1e-9);
    EXPECT_NEAR(r.tier2_write, service_rate(hdd, 4096, false, true), 1e-9);
    EXPECT_FALSE(r.tier2_independent_read_write);
    EXPECT_EQ(tier_rates(node, "/fast/cache/dir", "/slow/home", 4096, true).tier2_read,
              r.tier2_read)
        << "files below a mount";
    node.devices[0].performance.independent_read_write = true;
    EXPECT_TRUE(tier_rates(node, "/fast", "/slow", 4096, true).tier2_independent_read_write)
        << "the home device's property, from the node model";
    EXPECT_EQ(mount_holding(node, "/fastx"), nullptr)
        << "a prefix of the name is not a parent directory";
    EXPECT_THROW(tier_rates(node, "/nowhere", "/slow", 4096, true), std::invalid_argument);
}

TEST(QueueingModel, NamesTheFiguresAServiceRateReads) {
    Node node = node_with_slow(Performance{20 << 20, 20 << 20, 0, 0, 0.001, 0.004, 200});
    const Device& hdd = node.devices[0];
    using Fields = std::vector<std::string_view>;
    EXPECT_EQ(service_rate_fields(hdd, true, false),
              (Fields{"seq_read_bw", "op_latency", "max_iops"}));
    EXPECT_EQ(service_rate_fields(hdd, true, true),
              (Fields{"seq_read_bw", "op_latency", "seek_latency", "max_iops"}))
        << "no random bandwidth: the sequential one, and the seek of rotational media";
    node.devices[0].performance.rand_write_bw = 5 << 20;
    EXPECT_EQ(service_rate_fields(node.devices[0], false, true),
              (Fields{"rand_write_bw", "op_latency", "seek_latency", "max_iops"}));
    EXPECT_EQ(service_rate_fields(node.devices[1], true, true),
              (Fields{"seq_read_bw", "op_latency", "max_iops"}))
        << "the ramdisk: no seek";
}

TEST(QueueingModel, TierOneServesAPartOfALineAtThatPartsSize) {
    const Node node = node_with_slow(Performance{20 << 20, 20 << 20, 0, 0, 0.001, 0.004, 200});
    const TierRates r = tier_rates(node, "/fast", "/slow", 64 << 10, true);
    // A whole 64 KiB line on the ramdisk: 2 us + 64 KiB / 6 GB/s = 12.9 us; a 4 KiB part of it:
    // 2 us + 0.68 us. A hit reads only the part (engine_data.cpp), so it costs the part's time.
    EXPECT_NEAR(1 / r.tier1_read, 2e-6 + 65536 / 6e9, 1e-12);
    ASSERT_TRUE(r.tier1_read_io && r.tier1_write_io);
    EXPECT_NEAR(1 / r.tier1_read_io(4096), 2e-6 + 4096 / 6e9, 1e-12);
    EXPECT_NEAR(1 / r.tier1_write_io(4096), 2e-6 + 4096 / 4e9, 1e-12);
    EXPECT_DOUBLE_EQ(r.tier1_read_io(64 << 10), r.tier1_read) << "a whole line: mu_1,r itself";
}

// A home device that is a throttle alone (throttle slices, max_iops, no per-IO latency, as the
// lab's hdd) has two read budgets; any other device has none.
TEST(QueueingModel, AThrottleAloneHasReadBudgets) {
    Performance throttled{20 << 20, 20 << 20, 0, 0, 0, 0, 200};
    throttled.throttle_slice = 0.1;
    Node node = node_with_slow(throttled);
    const TierRates r = tier_rates(node, "/fast", "/slow", 4096, true);
    EXPECT_DOUBLE_EQ(r.tier2_read_iops_budget, 200);
    EXPECT_NEAR(r.tier2_read_bytes_budget, 20 << 20, 1);
    // 10 reads of a 4 KiB line and 123 of 128 KiB: 133 / 200 = 0.665 s of IOs, 15.4 MiB / 20 MiB/s
    // = 0.77 s of bytes; each read's larger charge summed would say 0.82 s.
    const std::uint64_t bytes = 10 * 4096 + 123 * (128 << 10);
    ASSERT_TRUE(budgeted_fetch_seconds(r, 133, bytes).has_value());
    EXPECT_NEAR(*budgeted_fetch_seconds(r, 133, bytes), double(bytes) / (20 << 20), 1e-9);
    EXPECT_NEAR(*budgeted_fetch_seconds(r, 400, 4096 * 400), 2.0, 1e-9) << "IOs the scarcer";

    node.devices[0].performance.seek_latency = 0.004;
    EXPECT_EQ(tier_rates(node, "/fast", "/slow", 4096, true).tier2_read_iops_budget, 0)
        << "a disk's arm costs every read its seek: no separate budgets";
    EXPECT_GT(tier_rates(node, "/fast", "/slow", 4096, false).tier2_read_iops_budget, 0)
        << "sequential reads do not seek";
    node.devices[0].performance.seek_latency = 0;
    node.devices[0].performance.throttle_slice = 0;
    EXPECT_FALSE(budgeted_fetch_seconds(tier_rates(node, "/fast", "/slow", 4096, true), 133, bytes))
        << "no throttle";
}

// What iosig-calibrate writes for the lab's throttled hdd (build/calibrate/tests/lab-run): the
// limit's 20 MiB/s and 197 IOPS, a random bandwidth of 4 KiB x 197 IOPS, and the latency its
// Eq. 3 fit found in the throttle's pacing of the sweep. The limit passes a 4 KiB read every
// 1/197 s and a 64 KiB one every 1/197 s too (3.1 ms of bytes): before session 37 the model
// charged 2.97 ms + 4 KiB / (4 KiB x 197/s) = 8.0 ms for the first and 84 ms for the second.
TEST(QueueingModel, AThrottlesRatesAreTheLimitsWhateverTheFitFoundBeneathThem) {
    Performance calibrated{20 << 20, 20 << 20, 4096.0 * 197, 4096.0 * 197, 0.00296679, 0, 197};
    calibrated.throttle_slice = 0.1;
    Node node = node_with_slow(calibrated);
    const Device& hdd = node.devices[0];
    EXPECT_NEAR(service_rate(hdd, 4096, true, true), 197, 1e-9);
    EXPECT_NEAR(service_rate(hdd, 64 << 10, true, true), 197, 1e-9);
    EXPECT_NEAR(service_rate(hdd, 1 << 20, false, true), 20, 1e-9) << "the bytes budget binds";
    const TierRates r = tier_rates(node, "/fast", "/slow", 4096, true);
    EXPECT_DOUBLE_EQ(r.tier2_read_iops_budget, 197) << "no latency of its own: the budgets";
    EXPECT_NEAR(r.tier2_read_bytes_budget, 20 << 20, 1) << "the sequential rate, for any pattern";
    using Fields = std::vector<std::string_view>;
    EXPECT_EQ(service_rate_fields(hdd, true, true),
              (Fields{"seq_read_bw", "seek_latency", "max_iops", "throttle_slice"}));

    node.devices[0].performance.seek_latency = 0.008;
    EXPECT_NEAR(1 / service_rate(node.devices[0], 4096, true, true), 0.008 + 4096.0 / (20 << 20),
                1e-12)
        << "the arm beneath the limit still seeks (8 ms: slower than the IOPS budget)";
    node.devices[0].performance.seek_latency = 0;
    node.devices[0].performance.throttle_slice = 0;
    EXPECT_NEAR(1 / service_rate(node.devices[0], 4096, true, true), 0.00296679 + 1.0 / 197, 1e-12)
        << "without a limit, the figures are the device's own";
}

} // namespace
} // namespace iosig::tier
