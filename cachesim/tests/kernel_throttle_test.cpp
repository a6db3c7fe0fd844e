// With lowered dirty limits a buffered writer is throttled by balance_dirty_pages, and the eBPF
// probes see it: positive pauses, dirty above freerun, the device's ratelimit.
#include "iosig/cachesim/collector.hpp"
#include "iosig/cachesim/dirty_limits.hpp"
#include "real_run.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <gtest/gtest.h>
#include <unistd.h>

namespace iosig::cachesim {
namespace {

constexpr std::uint64_t MiB = 1024 * 1024;
constexpr int kWriters = 4;

TEST(KernelThrottling, LoweredLimitsShowBalanceDirtyPagesPauses) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (BPF, /proc/sys/vm)";
    if (!built_with_bpf() || !std::filesystem::exists("/sys/kernel/btf/vmlinux"))
        GTEST_SKIP() << "no eBPF in this build or kernel";
    const std::filesystem::path work = "/var/tmp"; // on the root disk, unlike /tmp on some systems
    const auto device = backing_device_of(work.string());
    if (!device)
        GTEST_SKIP() << work << " is not on a block device: no write-back throttling to see";

    const auto before = *read_vm_dirty_settings();
    CollectorOptions options;
    options.poll_interval = 0.01;
    auto collector = DirtyCollector::open(options);
    ASSERT_EQ(collector->source(), StateSource::ebpf) << collector->fallback_reason();
    collector->start();
    std::vector<pid_t> writers;
    {
        std::string error;
        auto limits = DirtyLimitOverride::apply(8 * MiB, 4 * MiB, &error, 120);
        ASSERT_TRUE(limits) << error;
        collector->clear_history();
        // 256 MiB in 1 MiB writes against an 8 MiB limit: each writer outruns write-back over and
        // over. The kernel re-estimates the device's ratelimit (bdi_dirty_ratelimit) only from a
        // throttled writer that finds 200 ms passed since the bandwidth was last updated. The
        // flusher refreshes the same timestamp after every chunk it writes (do_writepages), so it
        // usually gets there first. With one writer the event came after 1.9-65 s (8 runs; once,
        // in a whole CI run, not within 60 s). Four writers at once check four times as often:
        // 1.5-4.5 s in 18 runs, in their first round. Write again until the event has come, up
        // to 150 s (the test's timeout is 180 s).
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(150);
        while (std::chrono::steady_clock::now() < deadline) {
            std::vector<std::future<validate::RunTimings>> runs;
            for (int w = 0; w < kWriters; ++w)
                runs.push_back(std::async(std::launch::async, [&work, w] {
                    return validate::run_workload(
                        work / ("iosig-cachesim-throttle-" + std::to_string(::getpid()) + "-" +
                                std::to_string(w) + ".dat"),
                        Method::buffered, sequential_workload(256 * MiB, MiB, 0));
                }));
            for (auto& r : runs) {
                const auto run = r.get();
                ASSERT_TRUE(run.ok()) << run.error;
                writers.push_back(run.pid);
            }
            if (!collector->device_history(*device).empty()) break;
        }
    }
    EXPECT_EQ(*read_vm_dirty_settings(), before) << "vm.dirty_* not restored";
    collector->stop();

    std::size_t paused = 0;
    for (const ThrottleSample& t : collector->throttle_history()) {
        if (std::find(writers.begin(), writers.end(), t.tgid) == writers.end() || t.pause <= 0)
            continue;
        ++paused;
        EXPECT_EQ(t.device, *device);
        // The kernel pauses only above freerun = 2 * setpoint - limit, at a positive task ratelimit
        // derived from the device's dirty ratelimit.
        EXPECT_GT(t.dirty, 2 * t.setpoint - t.limit);
        EXPECT_GT(t.dirty_ratelimit, 0);
        EXPECT_LE(t.pause, 0.2 + 1e-9); // MAX_PAUSE
    }
    EXPECT_GT(paused, 0u) << "no balance_dirty_pages event with a positive pause for the writer";
    EXPECT_FALSE(collector->device_history(*device).empty())
        << "no writeback:bdi_dirty_ratelimit for " << *device;
}

} // namespace
} // namespace iosig::cachesim
