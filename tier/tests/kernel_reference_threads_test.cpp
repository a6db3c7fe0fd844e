// The kernel reference (kernel_reference.hpp) from two threads at once on one engine, each with
// four files of its own: whole runs, and runs up to a crash of the engine's process. Only the
// variants whose file ids do not run out: an ENFILE open is told apart by the engine's file count,
// which the other thread moves. Run under ThreadSanitizer too.
#include "kernel_reference_runs.hpp"

#include <gtest/gtest.h>
#include <random>
#include <thread>
#include <unistd.h>

namespace iosig::tier {
namespace {

using test_support::KernelReference;
using test_support::reference_seeds;
using test_support::ScratchDir;
using test_support::small_config;
using test_support::Variant;
using test_support::variant_name;
using test_support::variants;

// One engine of `variant` and a reference for each thread, in directories of their own.
struct TwoThreadRun {
    // `every_line_dirty`: so that a crash leaves more of them for recovery.
    TwoThreadRun(const Variant& variant, std::uint64_t seed, bool every_line_dirty)
        : dir(variant.on), config(small_config(dir)) {
        variant.configure(config);
        if (every_line_dirty) config.max_dirty_lines = config.cache_size / config.line_size;
        tier = TierCache::open(config);
        first = std::make_unique<KernelReference>(*tier, dir, config, seed, "0");
        second = std::make_unique<KernelReference>(*tier, dir, config, seed + 100, "1");
    }
    // Each reference makes its `calls` on a thread of its own (then closes every handle, if
    // `close_all`): "" or what differed first, in the first reference, then the second.
    std::string make_calls(int first_calls, int second_calls, bool close_all) {
        const auto run = [close_all](KernelReference& reference, int calls) {
            for (int i = 0; i < calls; ++i)
                if (std::string wrong = reference.step(i); !wrong.empty()) return wrong;
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

class EngineAgainstTheKernelFromTwoThreads : public ::testing::TestWithParam<int> {};

TEST_P(EngineAgainstTheKernelFromTwoThreads, EachThreadGetsWhatTheKernelsFilesGive) {
    const Variant& variant = variants[GetParam()];
    SCOPED_TRACE(variant.name);
    const std::uint64_t seeds = reference_seeds(2);
    for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        TwoThreadRun run(variant, seed, false);
        ASSERT_EQ(run.make_calls(1500, 1500, true), "");
        ASSERT_EQ(run.same_files("every handle closed"), "");
        run.tier.reset();
        ASSERT_EQ(run.same_files("the engine gone"), "");
    }
}

// Both threads make 200 to 1,500 calls (each its own number, by the seed), so that the journal
// holds the records of both interleaved, as their writes, truncates and syncs came; the engine's
// process then crashes (TierCache::abandon) and TierCache::recover runs: every file of both holds
// what the kernel's holds.
class EngineAgainstTheKernelFromTwoThreadsThroughACrash : public ::testing::TestWithParam<int> {};

TEST_P(EngineAgainstTheKernelFromTwoThreadsThroughACrash, RecoveryLeavesWhatTheKernelsFilesHold) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "needs root: recovery finds a renamed file by its handle "
                        "(open_by_handle_at, CAP_DAC_READ_SEARCH), which the calls rename";
    const Variant& variant = variants[GetParam()];
    SCOPED_TRACE(variant.name);
    const std::uint64_t seeds = reference_seeds(4);
    std::uint64_t written_home = 0; // by recovery, over the seeds
    for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
        std::mt19937 rng(static_cast<unsigned>(seed));
        const int first_calls = 200 + static_cast<int>(rng() % 1300);
        const int second_calls = 200 + static_cast<int>(rng() % 1300);
        SCOPED_TRACE("seed " + std::to_string(seed) + ", crash after " +
                     std::to_string(first_calls) + " and " + std::to_string(second_calls) +
                     " calls");
        TwoThreadRun run(variant, seed, true);
        ASSERT_EQ(run.make_calls(first_calls, second_calls, false), "");
        run.first->forget_handles();
        run.second->forget_handles();
        run.tier->abandon();
        run.tier.reset();
        const RecoveryReport report = TierCache::recover(run.config.cache_file);
        ASSERT_TRUE(report.journal_found);
        written_home += report.lines_written_home;
        ASSERT_EQ(run.same_files("after the crash and recovery", true), "");
        EXPECT_EQ(run.first->passed_over() + run.second->passed_over(), 0u); // no call failed
    }
    EXPECT_GT(written_home, 0u) << "no crash left a dirty line for recovery";
}

INSTANTIATE_TEST_SUITE_P(Engines, EngineAgainstTheKernelFromTwoThreads,
                         ::testing::Values(0, 1, 2, 4, 5), variant_name);
INSTANTIATE_TEST_SUITE_P(Engines, EngineAgainstTheKernelFromTwoThreadsThroughACrash,
                         ::testing::Values(0, 1, 2, 4, 5), variant_name);

} // namespace
} // namespace iosig::tier
