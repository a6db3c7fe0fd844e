// The kernel reference (kernel_reference.hpp) from two threads at once on one engine, each with
// four files of its own: whole runs, and runs up to a crash of the engine's process, with the
// devices working, and failing now and then (kernel_reference_faults_test.cpp says what a call in
// a failure may do; one thread's failure waits for the other thread's call, and fails the
// engine's write-back of both threads' lines). Only the variants whose file ids do not run out:
// an ENFILE open is told apart by the engine's file count, which the other thread moves. Run
// under ThreadSanitizer too.
#include "kernel_reference_runs.hpp"

#include <cstdio>
#include <gtest/gtest.h>
#include <random>
#include <shared_mutex>
#include <thread>
#include <unistd.h>

namespace iosig::tier {
namespace {

using test_support::Devices;
using test_support::failing_roles;
using test_support::KernelReference;
using test_support::reference_config;
using test_support::reference_seeds;
using test_support::ScratchDir;
using test_support::Variant;
using test_support::variant_name;
using test_support::variants;

// One engine of `variant` and a reference for each thread, in directories of their own.
struct TwoThreadRun {
    TwoThreadRun(const Variant& variant, std::uint64_t seed, Devices devices, bool every_line_dirty)
        : dir(variant.on), config(reference_config(dir, variant, devices, every_line_dirty)) {
        tier = TierCache::open(config);
        first = std::make_unique<KernelReference>(*tier, dir, config, seed, "0");
        second = std::make_unique<KernelReference>(*tier, dir, config, seed + 100, "1");
        if (devices == Devices::fail_now_and_then) {
            const auto gate = std::make_shared<std::shared_mutex>();
            for (KernelReference* reference : {first.get(), second.get()})
                reference->fail_devices_at_syncs(config.faults, failing_roles, gate);
        }
    }
    // Each reference makes its `calls` on a thread of its own (then closes every handle, if
    // `close_all`): "" or what differed first, in the first reference, then the second.
    std::string make_calls(int first_calls, int second_calls, bool close_all) {
        const auto run = [close_all](KernelReference& reference, int calls) {
            for (int i = 0; i < calls; ++i) {
                if (std::string wrong = reference.step(i); !wrong.empty()) return wrong;
                if (std::string wrong = reference.sizes_agree(); !wrong.empty()) return wrong;
            }
            return close_all ? reference.close_all() : std::string();
        };
        std::string wrong_in_second;
        std::thread other([&] { wrong_in_second = run(*second, second_calls); });
        std::string wrong = run(*first, first_calls);
        other.join();
        if (!wrong.empty()) return "thread 0: " + wrong;
        return wrong_in_second.empty() ? "" : "thread 1: " + wrong_in_second;
    }
    std::string same_files(const char* when, bool after_crash = false) {
        if (std::string wrong = first->same_files(when, after_crash); !wrong.empty())
            return "thread 0's files: " + wrong;
        if (std::string wrong = second->same_files(when, after_crash); !wrong.empty())
            return "thread 1's files: " + wrong;
        return "";
    }

    ScratchDir dir;
    TierConfig config;
    std::unique_ptr<TierCache> tier;
    std::unique_ptr<KernelReference> first, second; // destroyed before the engine
};

// What the runs of one engine counted, over its seeds.
struct Counts {
    std::uint64_t calls_failed = 0;   // in both threads, by the devices' failures
    std::uint64_t written_home = 0;   // lines recovery wrote home
    bool writes_back_at_once = false; // the engine's write-back delay is 0
    std::uint64_t passed_over = 0;    // files not compared after a crash (KernelReference)
};

// 1,500 calls in each thread and every handle closed (and, where the devices failed, a flush_all
// once they work, for the lines of a close that failed); then the files compared, and again once
// the engine is gone.
std::string run_whole(const Variant& variant, std::uint64_t seed, Devices devices, Counts& counts) {
    TwoThreadRun run(variant, seed, devices, false);
    if (std::string wrong = run.make_calls(1500, 1500, true); !wrong.empty()) return wrong;
    counts.calls_failed += run.first->calls_failed() + run.second->calls_failed();
    const char* closed = "every handle closed";
    if (devices == Devices::fail_now_and_then) {
        if (const int e = run.tier->flush_all(); e != 0)
            return "flush_all with the devices working gave " + std::to_string(e);
        closed = "every handle closed and flush_all";
    }
    if (std::string wrong = run.same_files(closed); !wrong.empty()) return wrong;
    run.tier.reset();
    return run.same_files("the engine gone");
}

// Both threads make 200 to 1,500 calls (each its own number, by the seed), so that the journal
// holds the records of both interleaved, as their writes, truncates and syncs came; the engine's
// process then crashes (TierCache::abandon) and TierCache::recover runs: every file of both holds
// what the kernel's holds, except one a write refused in a failure changed and no sync covered
// since.
std::string run_through_a_crash(const Variant& variant, std::uint64_t seed, Devices devices,
                                Counts& counts) {
    std::mt19937 rng(static_cast<unsigned>(seed));
    const int first_calls = 200 + static_cast<int>(rng() % 1300);
    const int second_calls = 200 + static_cast<int>(rng() % 1300);
    const std::string when = "crash after " + std::to_string(first_calls) + " and " +
                             std::to_string(second_calls) + " calls: ";
    TwoThreadRun run(variant, seed, devices, true);
    if (std::string wrong = run.make_calls(first_calls, second_calls, false); !wrong.empty())
        return when + wrong;
    counts.calls_failed += run.first->calls_failed() + run.second->calls_failed();
    run.first->forget_handles();
    run.second->forget_handles();
    run.tier->abandon();
    run.tier.reset();
    const RecoveryReport report = TierCache::recover(run.config.cache_file);
    if (!report.journal_found) return when + "recovery found no journal";
    counts.written_home += report.lines_written_home;
    counts.writes_back_at_once = run.config.writeback_delay == 0;
    const std::string wrong = run.same_files("after the crash and recovery", true);
    counts.passed_over += run.first->passed_over() + run.second->passed_over();
    return wrong.empty() ? "" : when + wrong;
}

// Recovery must have had work in some crash, unless the engine writes every line back at once:
// there the flusher often has every line home before the crash (under ThreadSanitizer 1-6 lines
// over 8 seeds), and a run without any would fail for its timing alone.
void expect_recovery_had_work(const Counts& counts) {
    if (counts.writes_back_at_once && counts.written_home == 0)
        std::printf("[          ] no crash left a dirty line: the engine writes back at once\n");
    else
        EXPECT_GT(counts.written_home, 0u) << "no crash left a dirty line for recovery";
}

const char* const needs_root = "needs root: recovery finds a renamed file by its handle "
                               "(open_by_handle_at, CAP_DAC_READ_SEARCH), which the calls rename";

class EngineAgainstTheKernelFromTwoThreads : public ::testing::TestWithParam<int> {};

TEST_P(EngineAgainstTheKernelFromTwoThreads, EachThreadGetsWhatTheKernelsFilesGive) {
    const Variant& variant = variants[GetParam()];
    SCOPED_TRACE(variant.name);
    Counts counts;
    for (const std::uint64_t seed : reference_seeds(2)) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        ASSERT_EQ(run_whole(variant, seed, Devices::work, counts), "");
    }
}

class EngineAgainstTheKernelFromTwoThreadsThroughACrash : public ::testing::TestWithParam<int> {};

TEST_P(EngineAgainstTheKernelFromTwoThreadsThroughACrash, RecoveryLeavesWhatTheKernelsFilesHold) {
    if (::geteuid() != 0) GTEST_SKIP() << needs_root;
    const Variant& variant = variants[GetParam()];
    SCOPED_TRACE(variant.name);
    Counts counts;
    for (const std::uint64_t seed : reference_seeds(8)) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        ASSERT_EQ(run_through_a_crash(variant, seed, Devices::work, counts), "");
    }
    EXPECT_EQ(counts.passed_over, 0u); // no call failed
    expect_recovery_had_work(counts);
}

class EngineAgainstTheKernelFromTwoThreadsWhileDevicesFail : public ::testing::TestWithParam<int> {
};

TEST_P(EngineAgainstTheKernelFromTwoThreadsWhileDevicesFail,
       OnlyTheCallsInAFailureFailAndNoByteIsLost) {
    const Variant& variant = variants[GetParam()];
    SCOPED_TRACE(variant.name);
    Counts counts;
    for (const std::uint64_t seed : reference_seeds(2)) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        ASSERT_EQ(run_whole(variant, seed, Devices::fail_now_and_then, counts), "");
    }
    EXPECT_GT(counts.calls_failed, 0u) << "no call failed: the devices' failures reached nothing";
}

class EngineAgainstTheKernelFromTwoThreadsWhileDevicesFailThroughACrash
    : public ::testing::TestWithParam<int> {};

TEST_P(EngineAgainstTheKernelFromTwoThreadsWhileDevicesFailThroughACrash,
       RecoveryLeavesWhatTheKernelsFilesHold) {
    if (::geteuid() != 0) GTEST_SKIP() << needs_root;
    const Variant& variant = variants[GetParam()];
    SCOPED_TRACE(variant.name);
    Counts counts;
    const std::vector<std::uint64_t> seeds = reference_seeds(8);
    for (const std::uint64_t seed : seeds) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        ASSERT_EQ(run_through_a_crash(variant, seed, Devices::fail_now_and_then, counts), "");
    }
    std::printf("[          ] %llu files passed over after the crashes, %llu lines written home\n",
                static_cast<unsigned long long>(counts.passed_over),
                static_cast<unsigned long long>(counts.written_home));
    EXPECT_LT(counts.passed_over * 10, seeds.size() * 2 * test_support::reference_names)
        << "most crashes must leave every file compared";
    EXPECT_GT(counts.calls_failed, 0u) << "no call failed: the devices' failures reached nothing";
    expect_recovery_had_work(counts);
}

INSTANTIATE_TEST_SUITE_P(Engines, EngineAgainstTheKernelFromTwoThreads,
                         ::testing::Values(0, 1, 2, 4, 5), variant_name);
INSTANTIATE_TEST_SUITE_P(Engines, EngineAgainstTheKernelFromTwoThreadsThroughACrash,
                         ::testing::Values(0, 1, 2, 4, 5), variant_name);
INSTANTIATE_TEST_SUITE_P(Engines, EngineAgainstTheKernelFromTwoThreadsWhileDevicesFail,
                         ::testing::Values(0, 1, 2, 4, 5), variant_name);
INSTANTIATE_TEST_SUITE_P(Engines, EngineAgainstTheKernelFromTwoThreadsWhileDevicesFailThroughACrash,
                         ::testing::Values(0, 1, 2, 4, 5), variant_name);

} // namespace
} // namespace iosig::tier
