// The live kernel state: the eBPF probes against /proc/vmstat, and the procfs fallback.
#include "iosig/cachesim/collector.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace iosig::cachesim {
namespace {

std::string why_no_bpf() {
    if (::geteuid() != 0) return "needs root (CAP_BPF, CAP_PERFMON) to load the probes";
    if (!built_with_bpf()) return "built without eBPF (no /sys/kernel/btf/vmlinux at build time)";
    if (!std::filesystem::exists("/sys/kernel/btf/vmlinux")) return "the running kernel has no BTF";
    return {};
}

// /proc/vmstat as text (reading it is what fires writeback:global_dirty_state).
std::map<std::string, double> read_vmstat() {
    std::ifstream in("/proc/vmstat");
    std::map<std::string, double> values;
    std::string key;
    double value;
    while (in >> key >> value)
        values[key] = value;
    return values;
}

TEST(EbpfCollector, GlobalDirtyStateThresholdsEqualVmstat) {
    if (const std::string why = why_no_bpf(); !why.empty()) GTEST_SKIP() << why;
    auto collector = DirtyCollector::open();
    ASSERT_EQ(collector->source(), StateSource::ebpf) << collector->fallback_reason();
    collector->clear_history();
    const auto vmstat = read_vmstat(); // fires the tracepoint in this process
    const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
    std::optional<GlobalDirtySample> mine;
    for (int i = 0; i < 100 && !mine; ++i) {
        collector->poll(20);
        for (const GlobalDirtySample& g : collector->global_history())
            if (g.tgid == ::getpid()) mine = g;
    }
    ASSERT_TRUE(mine) << "no writeback:global_dirty_state event from our /proc/vmstat read";
    // The read computed the thresholds once: the event and the text carry the same numbers.
    EXPECT_EQ(mine->dirty_thresh, vmstat.at("nr_dirty_threshold") * page);
    EXPECT_EQ(mine->background_thresh, vmstat.at("nr_dirty_background_threshold") * page);
    // dirty_limit is the domain's smoothed limit: it follows a raised threshold only when a writer
    // next enters balance_dirty_pages, so after a test that lowered vm.dirty_bytes and restored it,
    // it can stay far below dirty_thresh for a while (seen: 0.66 GB against 2.47 GB).
    EXPECT_GT(mine->dirty_limit, 0);
    EXPECT_GT(mine->written_total, 0);
    // The snapshot exposes it as the live state.
    const KernelDirtyState state = collector->snapshot();
    ASSERT_TRUE(state.thresholds());
    EXPECT_EQ(state.source, StateSource::ebpf);
}

TEST(EbpfCollector, BackgroundThreadKeepsSampling) {
    if (const std::string why = why_no_bpf(); !why.empty()) GTEST_SKIP() << why;
    CollectorOptions options;
    options.poll_interval = 0.01;
    auto collector = DirtyCollector::open(options);
    ASSERT_EQ(collector->source(), StateSource::ebpf);
    collector->clear_history();
    collector->start();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    collector->stop();
    // Its own /proc/vmstat triggers every 10 ms give a trajectory even when nothing writes.
    EXPECT_GE(collector->global_history().size(), 10u);
}

TEST(ProcfsFallback, ChosenWhenTheCallerDisablesBpf) {
    CollectorOptions options;
    options.allow_bpf = false;
    options.notice = [](std::string_view) {};
    auto collector = DirtyCollector::open(options);
    EXPECT_EQ(collector->source(), StateSource::procfs);
    EXPECT_EQ(collector->fallback_reason(), "disabled by the caller");
    EXPECT_EQ(collector->poll(1000), 1);
    const KernelDirtyState state = collector->snapshot();
    ASSERT_TRUE(state.thresholds());
    const auto vmstat = read_vmstat();
    const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
    // Thresholds follow free memory: two reads a moment apart agree to well within a percent.
    EXPECT_NEAR(state.thresholds()->hard, vmstat.at("nr_dirty_threshold") * page,
                0.01 * vmstat.at("nr_dirty_threshold") * page);
    EXPECT_TRUE(state.devices.empty()); // per-device rates need the tracepoints
}

TEST(ProcfsFallbackDeathTest, ForcedByTheEnvironmentAndAnnouncedOnce) {
    GTEST_FLAG_SET(death_test_style,
                   "threadsafe"); // a fresh process: the notice is once per process
    EXPECT_EXIT(
        {
            ::setenv(no_bpf_environment, "1", 1);
            int notices = 0;
            std::string text;
            CollectorOptions options;
            options.notice = [&](std::string_view t) {
                ++notices;
                text = t;
            };
            auto a = DirtyCollector::open(options);
            auto b = DirtyCollector::open(options);
            const bool ok = a->source() == StateSource::procfs &&
                            b->source() == StateSource::procfs && notices == 1 &&
                            text.find("IOSIG_CACHESIM_NO_BPF=1") != std::string::npos &&
                            text.find("/proc/vmstat") != std::string::npos;
            std::exit(ok ? 0 : 1);
        },
        ::testing::ExitedWithCode(0), "");
}

TEST(KernelState, ProcfsReadHasThresholdsAndSettings) {
    std::string error;
    const auto state = read_procfs_state(&error);
    ASSERT_TRUE(state) << error;
    ASSERT_TRUE(state->thresholds());
    EXPECT_LT(state->thresholds()->background, state->thresholds()->hard);
    EXPECT_GT(state->dirty_expire, 0);
    EXPECT_GT(state->writeback_interval, 0);
}

TEST(KernelState, BackingDeviceOfTheRootFileSystem) {
    const auto device = backing_device_of("/var/tmp");
    if (!device) GTEST_SKIP() << "/var/tmp is not on a block device here";
    EXPECT_NE(device->find(':'), std::string::npos);
    EXPECT_TRUE(std::filesystem::exists("/sys/dev/block/" + *device));
    EXPECT_FALSE(backing_device_of("/proc"));
}

} // namespace
} // namespace iosig::cachesim
