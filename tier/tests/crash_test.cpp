// Crash safety in the style of Open CAS: fail the N-th write to the cache side (cache file and
// journal) or to the home file, for N over the writes a workload makes; then lose, per 4 KiB
// block, what was not yet synced (a power cut), reopen (recovery), and verify that no byte
// acknowledged by fsync is lost and that no byte holds stale data: each byte holds a value written
// to it (or 0, cut by a truncate) at or after its last acknowledged version. The sweeps take
// 50-200 of the N a workload offers; tier_crash_every_n (crash_every_n_test.cpp) takes every N of
// a range.
#include "crash_sweep.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <set>

namespace iosig::tier {
namespace {

using test_support::check_files;
using test_support::config_for;
using test_support::count_writes;
using test_support::crash_file_bytes;
using test_support::crash_home_files;
using test_support::Outcome;
using test_support::read_file;
using test_support::run_crash_workload;
using test_support::ScratchDir;
using test_support::small_journal;
using test_support::sweep;
using test_support::SweepResult;

// The sweeps run the workload over one home file, and again over three (each operation picks
// one): with 72 lines of home files behind a cache of 8, lines of different files take turns in
// each slot, and a truncate, an fsync or a recovery of one file must leave the others' lines
// alone. These sweeps, and the transient ones, take 100 points over the workload where the first
// sweeps take 150-200: each run is longer, and under ThreadSanitizer a sweep of 200 took 200 s.
constexpr std::size_t three_files = 3;

TEST(CrashSafety, FailingTheNthCacheSideWriteLosesNoAcknowledgedByte) {
    const auto [cache_writes, home_writes, rewrites] = count_writes();
    ASSERT_GT(cache_writes, 100u);
    const SweepResult r = sweep({FileRole::cache, FileRole::journal}, cache_writes,
                                std::max<std::uint64_t>(1, cache_writes / 150));
    EXPECT_GT(r.failed_runs, r.runs / 2) << "the injected failures must actually hit the workload";
    EXPECT_GT(r.recovered_lines, 0u)
        << "some crashes must leave dirty lines for recovery to write home";
    EXPECT_GT(r.acked_bytes, 0u);
}

TEST(CrashSafety, FailingTheNthHomeWriteLosesNoAcknowledgedByte) {
    const auto [cache_writes, home_writes, rewrites] = count_writes();
    ASSERT_GT(home_writes, 20u);
    const SweepResult r =
        sweep({FileRole::home}, home_writes, std::max<std::uint64_t>(1, home_writes / 150));
    EXPECT_GT(r.failed_runs, r.runs / 2);
    EXPECT_GT(r.recovered_lines, 0u)
        << "dirty lines that could not go home are written by recovery";
}

TEST(CrashSafety, FailingTheNthHomeWriteLosesNoAcknowledgedByteOfThreeFiles) {
    const auto [cache_writes, home_writes, rewrites] = count_writes({.files = three_files});
    ASSERT_GT(home_writes, 20u);
    const SweepResult r =
        sweep({FileRole::home}, home_writes, std::max<std::uint64_t>(1, home_writes / 100),
              {.files = three_files});
    EXPECT_GT(r.failed_runs, r.runs / 2);
    EXPECT_GT(r.recovered_lines, 0u);
    EXPECT_GT(r.acked_bytes, 0u);
}

// A transient failure: the N-th write fails alone, the engine goes on, and the program's later
// fsyncs that succeed must hold whatever the failure left behind (a truncate, a write-back or a
// journal record half done). Over three files, with the journal rewritten past 1 KiB.
TEST(CrashSafety, AFailureOfTheNthCacheSideWriteAloneLosesNoAcknowledgedByte) {
    const auto [cache_writes, home_writes, rewrites] = count_writes({small_journal, three_files});
    const SweepResult r =
        sweep({FileRole::cache, FileRole::journal}, cache_writes,
              std::max<std::uint64_t>(1, cache_writes / 100), {small_journal, three_files, true});
    EXPECT_GT(r.injected_runs, r.runs * 9 / 10);
    EXPECT_GT(r.failed_runs, 0u) << "some failures must reach the program";
    EXPECT_GT(r.acked_bytes, 0u);
}

TEST(CrashSafety, AFailureOfTheNthHomeWriteAloneLosesNoAcknowledgedByte) {
    const auto [cache_writes, home_writes, rewrites] = count_writes({small_journal, three_files});
    const SweepResult r =
        sweep({FileRole::home}, home_writes, std::max<std::uint64_t>(1, home_writes / 100),
              {small_journal, three_files, true});
    EXPECT_GT(r.injected_runs, r.runs * 9 / 10);
    EXPECT_GT(r.failed_runs, 0u) << "some failures must reach the program";
    EXPECT_GT(r.acked_bytes, 0u);
}

// Adds the journal's rewrites over the 40 workloads to `rewrites`.
void expect_power_loss_keeps_acknowledged_bytes(std::uint64_t journal_compaction_bytes,
                                                std::uint64_t& rewrites, std::size_t files = 1) {
    for (std::uint64_t seed = 1; seed <= 40; ++seed) {
        ScratchDir dir;
        const auto homes = crash_home_files(dir.path(), files);
        auto faults = std::make_shared<IoFaults>();
        Outcome outcome(files);
        {
            auto tier = TierCache::open(config_for(dir, faults, journal_compaction_bytes));
            outcome = run_crash_workload(*tier, homes, seed);
            ASSERT_FALSE(outcome.any_failure);
            rewrites += tier->stats().journal_rewrites;
            tier->abandon();
        }
        faults->crash(seed);
        auto tier = TierCache::open(config_for(dir, nullptr, journal_compaction_bytes));
        EXPECT_EQ(check_files(*tier, homes, outcome, false), "") << "seed " << seed;
    }
}

// Every file released at each fsync's close and forgotten once its lines have left the cache,
// over three files with the journal rewritten past 1 KiB (its rewrites leave forgotten files out):
// the device gone from the N-th cache-side write on, and the N-th home write failing alone (a
// release then may fail to sync the file, which keeps its descriptor). 50 points each: under
// ThreadSanitizer 100 took 100 and 150 s.
TEST(CrashSafety, FailingTheNthCacheSideWriteWhileFilesAreReleasedLosesNoAcknowledgedByte) {
    const auto [cache_writes, home_writes, rewrites] =
        count_writes({small_journal, three_files, false, true});
    ASSERT_GT(rewrites, 0u);
    const SweepResult r = sweep({FileRole::cache, FileRole::journal}, cache_writes,
                                std::max<std::uint64_t>(1, cache_writes / 50),
                                {small_journal, three_files, false, true});
    EXPECT_GT(r.failed_runs, r.runs / 2);
    EXPECT_GT(r.recovered_lines, 0u);
    EXPECT_GT(r.acked_bytes, 0u);
}

TEST(CrashSafety, AFailureOfTheNthHomeWriteAloneWhileFilesAreReleasedLosesNoAcknowledgedByte) {
    const auto [cache_writes, home_writes, rewrites] =
        count_writes({small_journal, three_files, false, true});
    const SweepResult r =
        sweep({FileRole::home}, home_writes, std::max<std::uint64_t>(1, home_writes / 50),
              {small_journal, three_files, true, true});
    EXPECT_GT(r.injected_runs, r.runs * 9 / 10);
    EXPECT_GT(r.failed_runs, 0u) << "some failures must reach the program";
    EXPECT_GT(r.acked_bytes, 0u);
}

TEST(CrashSafety, PowerLossWithoutFailedWritesKeepsEveryAcknowledgedByte) {
    std::uint64_t rewrites = 0;
    expect_power_loss_keeps_acknowledged_bytes(64ull << 20, rewrites);
}

// The journal's rewrite (write beside, sync, rename) under the same failures and power losses.
TEST(CrashSafety, PowerLossAcrossJournalRewritesKeepsEveryAcknowledgedByte) {
    std::uint64_t rewrites = 0;
    expect_power_loss_keeps_acknowledged_bytes(small_journal, rewrites);
    EXPECT_GT(rewrites, 40u) << "the journal must be rewritten during the workloads";
}

TEST(CrashSafety, PowerLossAcrossJournalRewritesKeepsEveryAcknowledgedByteOfThreeFiles) {
    std::uint64_t rewrites = 0;
    expect_power_loss_keeps_acknowledged_bytes(small_journal, rewrites, three_files);
    EXPECT_GT(rewrites, 40u) << "the journal must be rewritten during the workloads";
}

// A power cut at the N-th write of the workload, N at `points` points over it: every write and sync
// from the N-th on fails, whatever the file, and then what was not synced is lost as above. Unlike
// the sweeps above, where one side fails and the other goes on, this stops the engine in the middle
// of each of its steps, e.g. between a line's data landing in the cache file and the sync that must
// precede its DIRTY record (rule 1 in docs/tier.md, which fails here when removed).
void expect_a_power_cut_at_the_nth_write_loses_nothing(std::size_t files, std::uint64_t points) {
    const auto [cache_writes, home_writes, rewrites] = count_writes({.files = files});
    const std::uint64_t writes = cache_writes + home_writes;
    const SweepResult r = sweep({FileRole::cache, FileRole::journal, FileRole::home}, writes,
                                std::max<std::uint64_t>(1, writes / points), {.files = files});
    EXPECT_GT(r.recovered_lines, 0u);
    EXPECT_GT(r.acked_bytes, 0u);
}

TEST(CrashSafety, APowerCutAtTheNthWriteLosesNoAcknowledgedByte) {
    expect_a_power_cut_at_the_nth_write_loses_nothing(1, 200);
}

TEST(CrashSafety, APowerCutAtTheNthWriteLosesNoAcknowledgedByteOfThreeFiles) {
    expect_a_power_cut_at_the_nth_write_loses_nothing(three_files, 100);
}

TEST(CrashSafety, FailingTheNthCacheSideWriteAcrossJournalRewritesLosesNoAcknowledgedByte) {
    const auto [cache_writes, home_writes, rewrites] =
        count_writes({.journal_compaction_bytes = small_journal});
    ASSERT_GE(rewrites, 5u) << "the workload must rewrite the journal";
    const SweepResult r = sweep({FileRole::cache, FileRole::journal}, cache_writes,
                                std::max<std::uint64_t>(1, cache_writes / 150),
                                {.journal_compaction_bytes = small_journal});
    EXPECT_GT(r.failed_runs, r.runs / 2);
    EXPECT_GT(r.recovered_lines, 0u);
    EXPECT_GT(r.acked_bytes, 0u);
}

// A crash of the process alone (the kernel keeps every write it was given): pwrite's contract is
// that its data is in the cache file and its line journaled as dirty when it returns (in the
// journal's pages, which recovery in the same boot trusts whole), so recovery must bring every
// byte home at its last written version, fsynced or not, and across the journal's rewrites, which
// must keep every line still dirty. Adds the rewrites of the 40 workloads to `rewrites`.
void expect_process_crash_keeps_every_write(std::uint64_t journal_compaction_bytes,
                                            std::uint64_t& rewrites, std::size_t files = 1,
                                            bool dirty_bytes_only = false) {
    std::uint64_t recovered = 0;
    for (std::uint64_t seed = 1; seed <= 40; ++seed) {
        ScratchDir dir;
        const auto homes = crash_home_files(dir.path(), files);
        Outcome outcome(files);
        {
            // Write-back after 100 ms instead of 2: the last writes are still dirty at the crash
            // also when the workload runs slowly (under a sanitizer every line was home by then).
            TierConfig config = config_for(dir, nullptr, journal_compaction_bytes);
            config.writeback_delay = 0.1;
            config.dirty_bytes_only = dirty_bytes_only;
            auto tier = TierCache::open(config);
            outcome = run_crash_workload(*tier, homes, seed, true);
            ASSERT_FALSE(outcome.any_failure);
            rewrites += tier->stats().journal_rewrites;
            tier->abandon();
        }
        auto tier = TierCache::open(config_for(dir, nullptr, journal_compaction_bytes));
        recovered += tier->recovery().lines_written_home;
        for (std::size_t f = 0; f < files; ++f) {
            const std::vector<char> home = read_file(homes[f]);
            const auto& versions = outcome.files[f].versions;
            for (std::size_t b = 0; b < crash_file_bytes; ++b) {
                if (versions[b].empty()) continue;
                const auto got = b < home.size() ? static_cast<unsigned char>(home[b]) : 0;
                ASSERT_EQ(got, outcome.value(versions[b].back(), b))
                    << homes[f].filename() << " byte " << b
                    << " is not its last written version, seed " << seed;
            }
        }
    }
    EXPECT_GT(recovered, 0u) << "some crashes must leave dirty lines for recovery";
}

TEST(CrashSafety, AProcessCrashLosesNoWrittenByte) {
    std::uint64_t rewrites = 0;
    expect_process_crash_keeps_every_write(64ull << 20, rewrites);
}

TEST(CrashSafety, AProcessCrashLosesNoWrittenByteAcrossJournalRewrites) {
    std::uint64_t rewrites = 0;
    expect_process_crash_keeps_every_write(small_journal, rewrites);
    EXPECT_GT(rewrites, 40u) << "the journal must be rewritten during the workloads";
}

TEST(CrashSafety, AProcessCrashLosesNoWrittenByteOfThreeFilesAcrossJournalRewrites) {
    std::uint64_t rewrites = 0;
    expect_process_crash_keeps_every_write(small_journal, rewrites, three_files);
    EXPECT_GT(rewrites, 40u) << "the journal must be rewritten during the workloads";
}

// Engines writing home only the bytes their writes changed (dirty_bytes_only, session 36).
TEST(CrashSafety, FailingTheNthCacheSideWriteLosesNoAcknowledgedByteWritingDirtyBytesOnly) {
    const auto counts = count_writes({small_journal, three_files, false, false, true});
    ASSERT_GE(counts.journal_rewrites, 5u) << "the workload must rewrite the journal";
    const SweepResult r = sweep({FileRole::cache, FileRole::journal}, counts.cache_side,
                                std::max<std::uint64_t>(1, counts.cache_side / 100),
                                {small_journal, three_files, false, false, true});
    EXPECT_GT(r.failed_runs, r.runs / 2);
    EXPECT_GT(r.recovered_lines, 0u);
    EXPECT_GT(r.acked_bytes, 0u);
}

TEST(CrashSafety, AFailureOfTheNthHomeWriteAloneLosesNoAcknowledgedByteWritingDirtyBytesOnly) {
    const auto counts = count_writes({small_journal, three_files, false, false, true});
    const SweepResult r =
        sweep({FileRole::home}, counts.home, std::max<std::uint64_t>(1, counts.home / 100),
              {small_journal, three_files, true, false, true});
    EXPECT_GT(r.injected_runs, r.runs * 9 / 10);
    EXPECT_GT(r.acked_bytes, 0u);
}

TEST(CrashSafety, AProcessCrashLosesNoWrittenByteWritingDirtyBytesOnly) {
    std::uint64_t rewrites = 0; // first never rewritten: recovery reads every DIRTY_PART record
    expect_process_crash_keeps_every_write(64ull << 20, rewrites, 1, true);
    expect_process_crash_keeps_every_write(small_journal, rewrites, three_files, true);
    EXPECT_GT(rewrites, 40u) << "the journal must be rewritten during the workloads";
}

} // namespace
} // namespace iosig::tier
