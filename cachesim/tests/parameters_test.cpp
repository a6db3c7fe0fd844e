// Reading the model's parameters from the node model (through the core's YAML schema), the live
// corrections, and writing measured ones back.
#include "iosig/cachesim/kernel_state.hpp"
#include "iosig/cachesim/parameters.hpp"
#include "iosig/node_yaml.hpp"

#include <gtest/gtest.h>

namespace iosig::cachesim {
namespace {

constexpr const char* node_yaml = R"(node:
  name: test
  page_size: 4K
system:
  memory_bw: 10G/s
  page_cache_write_bw: 2G/s
  page_cache_write_bw_flushing: 1G/s
  write_syscall_base: 2us
  sync_write_syscall_base: 4ms
  sync_write_syscall_per_byte: 2e-9
  dirty_bytes: 64M
  dirty_background_bytes: 32M
  dirty_expire: 20s
  dirty_writeback_interval: 2s
  stdio_buffer_size: 8K
devices:
  disk:
    structure: simple
    media: ssd
    capacity: 100G
    performance:
      seq_write_bw: 1G/s
      seq_read_bw: 2G/s
      op_latency: 3ms
      seek_latency: 0
    calibration:
      cachesim:
        writeback_bw: 500M/s
mounts:
  - path: /data
    device: disk
    fs_type: ext4
    block_size: 4K
)";

Node load() {
    const NodeLoadResult r = load_node_text(node_yaml, "node.yaml");
    for (const auto& d : r.diagnostics)
        ADD_FAILURE() << d.format();
    return *r.node;
}

constexpr double MiB = 1024.0 * 1024.0;

TEST(ResolveParameters, ReadsEverySymbolFromTheSchema) {
    const Node node = load();
    const Mount* mount = mount_for_path(node, "/data/run/out.dat");
    ASSERT_NE(mount, nullptr);
    const ResolvedParameters r = resolve_parameters(node, *mount, Method::stdio);
    ASSERT_TRUE(r.ok()) << r.missing.front();
    const ModelParameters& p = *r.parameters;
    EXPECT_DOUBLE_EQ(p.memory_bw, 10.0 * 1024 * MiB);
    EXPECT_DOUBLE_EQ(p.page_cache_write_bw, 2.0 * 1024 * MiB);
    EXPECT_DOUBLE_EQ(p.page_cache_write_bw_flushing, 1.0 * 1024 * MiB);
    EXPECT_DOUBLE_EQ(p.write_syscall_base, 2e-6);
    EXPECT_DOUBLE_EQ(p.thresholds.hard, 64 * MiB);
    EXPECT_DOUBLE_EQ(p.thresholds.background, 32 * MiB);
    EXPECT_DOUBLE_EQ(p.dirty_expire, 20);
    EXPECT_DOUBLE_EQ(p.writeback_interval, 2);
    EXPECT_EQ(p.stdio_buffer_size, 8192u);
    EXPECT_DOUBLE_EQ(p.device_write_bw, 1024 * MiB);
    EXPECT_DOUBLE_EQ(p.writeback_bw, 500 * MiB); // from the calibration map
}

TEST(ResolveParameters, Eq2AndEq3TakeTheirFixedCosts) {
    const Node node = load();
    const ModelParameters direct =
        *resolve_parameters(node, node.mounts[0], Method::direct).parameters;
    EXPECT_DOUBLE_EQ(direct.direct_write_base, 3e-3); // the device's O_DIRECT latency
    const ModelParameters sync = *resolve_parameters(node, node.mounts[0], Method::sync).parameters;
    EXPECT_DOUBLE_EQ(sync.sync_write_syscall_base, 4e-3);
    // The O_SYNC slope minus the device transfer is Eq. 3's copy cost.
    EXPECT_NEAR(sync.sync_copy_per_byte, 2e-9 - 1 / (1024 * MiB), 1e-18);
    EXPECT_DOUBLE_EQ(sync.device_read_bw, 2048 * MiB);
}

TEST(ResolveParameters, ListsWhatIsMissingPerMethod) {
    Node node = load();
    node.system = SystemParameters{};
    node.devices[0].performance.op_latency = 0;
    const ResolvedParameters direct = resolve_parameters(node, node.mounts[0], Method::direct);
    EXPECT_FALSE(direct.ok());
    ASSERT_EQ(direct.missing.size(), 1u);
    EXPECT_EQ(direct.missing[0],
              "devices.disk.performance.op_latency (or system.sync_write_syscall_base)");
    const ResolvedParameters buffered = resolve_parameters(node, node.mounts[0], Method::buffered);
    EXPECT_EQ(buffered.missing, (std::vector<std::string>{
                                    "system.page_cache_write_bw", "system.write_syscall_base",
                                    "system.dirty_bytes/dirty_background_bytes (or the ratios with "
                                    "system.dirtyable_memory)"}));
}

TEST(ResolveParameters, RatiosApplyToDirtyableMemory) {
    Node node = load();
    node.system.dirty_bytes.reset();
    node.system.dirty_background_bytes.reset();
    node.system.dirty_ratio = 0.2;
    node.system.dirty_background_ratio = 0.1;
    node.system.dirtyable_memory = 1000 * 1024 * 1024ull;
    const ModelParameters p =
        *resolve_parameters(node, node.mounts[0], Method::buffered).parameters;
    EXPECT_DOUBLE_EQ(p.thresholds.hard, 200 * MiB);
    EXPECT_DOUBLE_EQ(p.thresholds.background, 100 * MiB);
}

TEST(ResolveParameters, LiveKernelStateOverridesThresholds) {
    const Node node = load();
    KernelDirtyState live;
    GlobalDirtySample g;
    g.background_thresh = 8 * MiB;
    g.dirty_thresh = 16 * MiB;
    g.dirty_limit = 24 * MiB;
    live.global = g;
    live.dirty_expire = 30;
    live.writeback_interval = 5;
    const ResolvedParameters r = resolve_parameters(node, node.mounts[0], Method::buffered, &live);
    ASSERT_TRUE(r.ok());
    EXPECT_DOUBLE_EQ(r.parameters->thresholds.background, 8 * MiB);
    EXPECT_DOUBLE_EQ(r.parameters->thresholds.effective_limit(), 24 * MiB);
    EXPECT_DOUBLE_EQ(r.parameters->dirty_expire, 30);
    EXPECT_FALSE(r.notes.empty());
}

TEST(ApplyKernelState, TakesTheDevicesRatelimitAndRaisesWritebackBandwidth) {
    ModelParameters p;
    p.writeback_bw = 100 * MiB;
    KernelDirtyState live;
    DeviceRateSample d;
    d.dirty_ratelimit = 80 * MiB;
    d.write_bw = 300 * MiB;
    d.avg_write_bw = 250 * MiB;
    live.devices["254:0"] = d;
    std::vector<std::string> notes;
    apply_kernel_state(p, live, std::string("254:0"), &notes);
    EXPECT_DOUBLE_EQ(p.dirty_ratelimit, 80 * MiB);
    EXPECT_DOUBLE_EQ(p.writeback_bw, 300 * MiB);
    EXPECT_EQ(notes.size(), 2u);
    // A lower kernel estimate (lagging after a short burst) does not lower the node's value.
    p.writeback_bw = 1000 * MiB;
    apply_kernel_state(p, live, std::string("254:0"), nullptr);
    EXPECT_DOUBLE_EQ(p.writeback_bw, 1000 * MiB);
    // Another device's numbers are not used.
    ModelParameters q;
    apply_kernel_state(q, live, std::string("8:0"), nullptr);
    EXPECT_DOUBLE_EQ(q.dirty_ratelimit, kernel_initial_dirty_ratelimit);
}

TEST(StoreParameters, WritesThroughTheSchemaAndRoundTrips) {
    Node node = load();
    MeasuredParameters m;
    m.page_cache_write_bw = 3e9;
    m.write_syscall_base = 5e-6;
    m.device_write_bw = 7e8;
    m.writeback_bw = 6e8;
    m.throttle_sleep = 0.0125;
    m.page_cache_rewrite_bw = 3e10;
    m.page_cache_rewrite_bw_cold = 9e9;
    m.rewrite_cooling_time = 0.004;
    m.write_syscall_cold_base = 30e-6;
    m.call_cooling_time = 0.008;
    store_parameters(node, "disk", m);
    EXPECT_EQ(node.provenance.at("system.page_cache_write_bw"), Provenance::measured);
    EXPECT_EQ(node.provenance.at("devices.disk.performance.seq_write_bw"), Provenance::measured);
    const NodeLoadResult again = load_node_text(to_yaml(node), "written.yaml");
    for (const auto& d : again.diagnostics)
        ADD_FAILURE() << d.format();
    ASSERT_TRUE(again.ok());
    EXPECT_DOUBLE_EQ(*again.node->system.page_cache_write_bw, 3e9);
    EXPECT_DOUBLE_EQ(*again.node->system.write_syscall_base, 5e-6);
    EXPECT_DOUBLE_EQ(again.node->devices[0].performance.seq_write_bw, 7e8);
    EXPECT_DOUBLE_EQ(*stored_writeback_bandwidth(again.node->devices[0]), 6e8);
    EXPECT_NEAR(*stored_throttle_sleep(again.node->devices[0]), 0.0125, 1e-9);
    const Mount* mount = mount_for_path(*again.node, "/data/x");
    ASSERT_NE(mount, nullptr);
    const ResolvedParameters r = resolve_parameters(*again.node, *mount, Method::buffered);
    ASSERT_TRUE(r.ok());
    EXPECT_NEAR(r.parameters->throttle_sleep, 0.0125, 1e-9);
    EXPECT_NEAR(r.parameters->page_cache_rewrite_bw, 3e10, 1);
    EXPECT_NEAR(r.parameters->page_cache_rewrite_bw_cold, 9e9, 1);
    EXPECT_NEAR(r.parameters->rewrite_cooling_time, 0.004, 1e-12);
    EXPECT_NEAR(r.parameters->write_syscall_cold_base, 30e-6, 1e-12);
    EXPECT_NEAR(r.parameters->call_cooling_time, 0.008, 1e-12);
    EXPECT_EQ(again.node->provenance.at("system.page_cache_write_bw"), Provenance::measured);
}

TEST(StoreParameters, CostCurvesRoundTripAndReplaceTheLines) {
    Node node = load();
    MeasuredParameters m;
    m.direct_write_curve = CostCurve({{4096, 130e-6}, {65536, 178e-6}, {1048576, 774e-6}});
    m.sync_write_curve = CostCurve({{4096, 147e-6}, {8192, 150e-6}});
    store_parameters(node, "disk", m);
    const NodeLoadResult again = load_node_text(to_yaml(node), "written.yaml");
    ASSERT_TRUE(again.ok());
    const Device& disk = again.node->devices[0];
    const auto direct = stored_cost_curve(disk, "direct_write_curve");
    ASSERT_TRUE(direct);
    ASSERT_EQ(direct->points().size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) { // stored to 0.1 us
        EXPECT_EQ(direct->points()[i].first, m.direct_write_curve->points()[i].first);
        EXPECT_NEAR(direct->points()[i].second, m.direct_write_curve->points()[i].second, 5e-11);
    }
    EXPECT_DOUBLE_EQ(*stored_writeback_bandwidth(disk), 500 * MiB); // kept beside the curves

    const ModelParameters p =
        *resolve_parameters(*again.node, again.node->mounts[0], Method::direct).parameters;
    EXPECT_DOUBLE_EQ(p.direct_write_curve.cost(65536), 178e-6);
    const ModelParameters s =
        *resolve_parameters(*again.node, again.node->mounts[0], Method::sync).parameters;
    EXPECT_DOUBLE_EQ(s.sync_write_curve.cost(8192), 150e-6);
    EXPECT_TRUE(s.direct_write_curve.empty()); // each method reads only its own curve
}

TEST(StoreParameters, AnUnreadableCurveLeavesTheLine) {
    std::string text = node_yaml;
    const std::string at = "        writeback_bw: 500M/s\n";
    ASSERT_NE(text.find(at), std::string::npos);
    text.insert(text.find(at) + at.size(), "        direct_write_curve: {4K: 100us, 64K: fast}\n");
    const NodeLoadResult r = load_node_text(text, "node.yaml");
    ASSERT_TRUE(r.ok());
    std::string problem;
    EXPECT_FALSE(stored_cost_curve(r.node->devices[0], "direct_write_curve", &problem));
    EXPECT_EQ(problem, "devices.disk.calibration.cachesim.direct_write_curve: 'fast' is not a "
                       "positive duration");
    const ResolvedParameters resolved =
        resolve_parameters(*r.node, r.node->mounts[0], Method::direct);
    ASSERT_TRUE(resolved.ok());
    EXPECT_TRUE(resolved.parameters->direct_write_curve.empty());
    EXPECT_DOUBLE_EQ(resolved.parameters->direct_write_base, 3e-3);
    ASSERT_EQ(resolved.notes.size(), 1u);
    EXPECT_EQ(resolved.notes[0], problem + "; Eq. 2 with its fitted line instead");
}

TEST(MountForPath, PicksTheLongestPrefix) {
    Node node = load();
    Mount root;
    root.path = "/";
    root.device = "disk";
    node.mounts.push_back(root);
    EXPECT_EQ(mount_for_path(node, "/data/x")->path, "/data");
    EXPECT_EQ(mount_for_path(node, "/database/x")->path, "/");
    EXPECT_EQ(mount_for_path(node, "/data")->path, "/data");
}

} // namespace
} // namespace iosig::cachesim
