// The engine answers as the kernel's files do while its devices fail now and then. The sequences
// of kernel_reference_test.cpp run again, and one sync, close, flush_all or commit in three runs
// while the home files, the journal and the cache file fail every write and sync: such a call may
// fail with EIO where the kernel's succeeds, as a program's own fsync would on a failing disk.
// What must not happen: any other call answering otherwise than the kernel's (a read serving
// other bytes, a write refused once the devices work again), a later fsync leaving the home file
// short of what the kernel's file holds, or any byte missing at the end, once a flush_all has
// run with the devices working. Linux's page cache forgets a page whose write-back failed (the
// fsync after the one that reported it succeeds); the engine keeps the line dirty until it is
// home.
#include "kernel_reference_runs.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

namespace iosig::tier {
namespace {

using test_support::Devices;
using test_support::reference_seeds;
using test_support::run_through_a_crash;
using test_support::run_whole;
using test_support::RunCounts;
using test_support::variant_name;
using test_support::variants;

class EngineAgainstTheKernelWhileDevicesFail : public ::testing::TestWithParam<int> {};

TEST_P(EngineAgainstTheKernelWhileDevicesFail, OnlyTheCallsInAFailureFailAndNoByteIsLost) {
    const auto& variant = variants[GetParam()];
    SCOPED_TRACE(variant.name);
    const std::vector<std::uint64_t> seeds = reference_seeds(3);
    std::uint64_t failed = 0, writebacks = 0;
    for (const std::uint64_t seed : seeds) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        RunCounts counts;
        ASSERT_EQ(run_whole(variant, seed, Devices::fail_now_and_then, counts), "");
        failed += counts.calls_failed;
        writebacks += counts.stats.writebacks;
    }
    EXPECT_GT(failed, 0u) << "no call failed: the devices' failures reached nothing";
    EXPECT_GT(writebacks, 0u);
}

// The same sequences up to a crash of the engine's process (TierCache::abandon), with what the
// failures left behind them: lines whose write-back failed, closes that failed, cuts not finished
// at home. Recovery (TierCache::recover) leaves what the kernel's files hold.
class EngineAgainstTheKernelWhileDevicesFailThroughACrash : public ::testing::TestWithParam<int> {};

TEST_P(EngineAgainstTheKernelWhileDevicesFailThroughACrash, RecoveryLeavesWhatTheKernelsFilesHold) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "needs root: recovery finds a renamed file by its handle "
                        "(open_by_handle_at, CAP_DAC_READ_SEARCH), which the calls rename";
    const auto& variant = variants[GetParam()];
    SCOPED_TRACE(variant.name);
    const std::vector<std::uint64_t> seeds = reference_seeds(8);
    std::uint64_t failed = 0, written_home = 0, passed_over = 0;
    for (const std::uint64_t seed : seeds) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        RunCounts counts;
        ASSERT_EQ(run_through_a_crash(variant, seed, Devices::fail_now_and_then, counts), "");
        failed += counts.calls_failed;
        written_home += counts.written_home;
        passed_over += counts.passed_over;
    }
    // Most files are compared: only those a refused write changed and no sync covered since
    // are passed over.
    std::printf("[          ] %llu files passed over after the crashes\n",
                static_cast<unsigned long long>(passed_over));
    EXPECT_LT(passed_over * 10, seeds.size() * test_support::reference_names)
        << "most crashes must leave every file compared";
    EXPECT_GT(failed, 0u) << "no call failed: the devices' failures reached nothing";
    EXPECT_GT(written_home, 0u) << "no crash left a dirty line for recovery";
}

INSTANTIATE_TEST_SUITE_P(Engines, EngineAgainstTheKernelWhileDevicesFailThroughACrash,
                         ::testing::Range(0, static_cast<int>(std::size(variants))), variant_name);
INSTANTIATE_TEST_SUITE_P(Engines, EngineAgainstTheKernelWhileDevicesFail,
                         ::testing::Range(0, static_cast<int>(std::size(variants))), variant_name);

} // namespace
} // namespace iosig::tier
