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
#include "kernel_reference.hpp"
#include "kernel_reference_variants.hpp"

#include <gtest/gtest.h>
#include <random>
#include <unistd.h>

namespace iosig::tier {
namespace {

using test_support::KernelReference;
using test_support::reference_seeds;
using test_support::ScratchDir;
using test_support::small_config;
using test_support::variant_name;
using test_support::variants;

class EngineAgainstTheKernelWhileDevicesFail : public ::testing::TestWithParam<int> {};

TEST_P(EngineAgainstTheKernelWhileDevicesFail, OnlyTheCallsInAFailureFailAndNoByteIsLost) {
    const auto& variant = variants[GetParam()];
    SCOPED_TRACE(variant.name);
    const std::uint64_t seeds = reference_seeds(3);
    std::uint64_t failed = 0, writebacks = 0;
    for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        ScratchDir dir(variant.on);
        TierConfig config = small_config(dir);
        variant.configure(config);
        config.faults = IoFaults::without_power_cuts();
        auto tier = TierCache::open(config);
        KernelReference reference(*tier, dir, config, seed);
        reference.fail_devices_at_syncs(config.faults,
                                        {FileRole::home, FileRole::journal, FileRole::cache});
        for (int i = 0; i < 1500; ++i) {
            ASSERT_EQ(reference.step(i), "");
            ASSERT_EQ(reference.sizes_agree(), "");
        }
        ASSERT_EQ(reference.close_all(), "");
        // A close that failed left its file's lines in the engine: the devices work now.
        ASSERT_EQ(tier->flush_all(), 0);
        ASSERT_EQ(reference.same_files("every handle closed and flush_all"), "");
        failed += reference.calls_failed();
        writebacks += tier->stats().writebacks;
        tier.reset();
        ASSERT_EQ(reference.same_files("the engine gone"), "");
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
    const std::uint64_t seeds = reference_seeds(8);
    std::uint64_t failed = 0, written_home = 0, passed_over = 0;
    for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        ScratchDir dir(variant.on);
        TierConfig config = small_config(dir);
        variant.configure(config);
        config.max_dirty_lines = config.cache_size / config.line_size;
        config.faults = IoFaults::without_power_cuts();
        auto tier = TierCache::open(config);
        KernelReference reference(*tier, dir, config, seed);
        reference.fail_devices_at_syncs(config.faults,
                                        {FileRole::home, FileRole::journal, FileRole::cache});
        const int calls =
            200 + static_cast<int>(std::mt19937(static_cast<unsigned>(seed))() % 1300);
        SCOPED_TRACE("crash after " + std::to_string(calls) + " calls");
        for (int i = 0; i < calls; ++i)
            ASSERT_EQ(reference.step(i), "");
        failed += reference.calls_failed();
        reference.forget_handles();
        tier->abandon();
        tier.reset();
        const RecoveryReport report = TierCache::recover(config.cache_file);
        EXPECT_TRUE(report.journal_found);
        written_home += report.lines_written_home;
        ASSERT_EQ(reference.same_files("after the crash and recovery", true), "");
        passed_over += reference.passed_over();
    }
    // Most files are compared: only those a refused write changed and no sync covered since
    // are passed over.
    std::printf("[          ] %llu files passed over after the crashes\n",
                static_cast<unsigned long long>(passed_over));
    EXPECT_LT(passed_over * 10, seeds * test_support::reference_names)
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
