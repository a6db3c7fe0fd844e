// Crash safety in the style of Open CAS: fail the N-th write to the cache side (cache file and
// journal) or to the home file, for every N a workload makes; then lose, per 4 KiB block, what was
// not yet synced (a power cut), reopen (recovery), and verify that no byte acknowledged by fsync is
// lost and that no byte holds stale data: each byte holds a value written to it (or 0, cut by a
// truncate) at or after its last acknowledged version.
#include "crash_config.hpp"
#include "crash_workload.hpp"
#include "engine_fixture.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <set>

namespace iosig::tier {
namespace {

using test_support::check_crash_outcome;
using test_support::config_for;
using test_support::crash_file_bytes;
using test_support::crash_home_files;
using test_support::Handles;
using test_support::Outcome;
using test_support::read_file;
using test_support::run_crash_workload;
using test_support::ScratchDir;

// The journal rewritten past 1 KiB, not 64 MiB: 10-20 times a workload, failures and power cuts
// hit it in the middle of a rewrite and between rewrites.
constexpr std::uint64_t small_journal = 1024;

// The sweeps run the workload over one home file, and again over three (each operation picks
// one): with 72 lines of home files behind a cache of 8, lines of different files take turns in
// each slot, and a truncate, an fsync or a recovery of one file must leave the others' lines
// alone. These sweeps, and the transient ones, take 100 points over the workload where the first
// sweeps take 150-200: each run is longer, and under ThreadSanitizer a sweep of 200 took 200 s.
constexpr std::size_t three_files = 3;

// "" when every home file is allowed by the outcome, read from disk and through `tier`; else the
// first violation, naming the file.
std::string check_files(TierCache& tier, const std::vector<std::filesystem::path>& homes,
                        const Outcome& outcome, bool through_the_tier) {
    for (std::size_t f = 0; f < homes.size(); ++f) {
        std::string violation = check_crash_outcome(read_file(homes[f]), outcome, f);
        if (violation.empty() && through_the_tier) {
            const int h = tier.open_file(homes[f], O_RDONLY);
            std::vector<char> through(crash_file_bytes, 0);
            if (h >= 0 && tier.pread(h, through.data(), crash_file_bytes, 0) < 0)
                violation = "read through the tier failed";
            if (violation.empty()) violation = check_crash_outcome(through, outcome, f);
            if (!violation.empty()) violation = "read through the tier: " + violation;
            if (h >= 0) tier.close(h);
        }
        if (!violation.empty()) return homes[f].filename().string() + ", " + violation;
    }
    return "";
}

struct SweepResult {
    std::uint64_t runs = 0, failed_runs = 0, recovered_lines = 0, acked_bytes = 0;
    std::uint64_t injected_runs = 0; // runs in which the failure was injected
};

struct SweepOptions {
    std::uint64_t journal_compaction_bytes = 64ull << 20;
    std::size_t files = 1;
    // The failing write fails alone (IoFaults::fail_one_write): the device works again after it,
    // and the engine goes on with every path open. Else the device is gone from that write on.
    bool transient = false;
    // The workload reopens each file after each fsync (one handle per file), and the engine keeps
    // no idle file: every close releases its file, and a file whose lines have left the cache is
    // forgotten (docs/tier.md, "Idle files").
    bool release_files = false;
    // The engine writes home only the bytes its writes changed (TierConfig::dirty_bytes_only),
    // and recovery only the parts the journal names.
    bool dirty_bytes_only = false;
};

// The engine of a sweep's workload.
TierConfig workload_config(const ScratchDir& dir, std::shared_ptr<IoFaults> faults,
                           const SweepOptions& options) {
    TierConfig config = config_for(dir, std::move(faults), options.journal_compaction_bytes);
    if (options.release_files) config.idle_files = 0;
    config.dirty_bytes_only = options.dirty_bytes_only;
    return config;
}

Handles workload_handles(const SweepOptions& options) {
    return options.release_files ? Handles::one_reopened_after_each_fsync : Handles::two_throughout;
}

// The workload with the N-th write to `roles` failing, for N from 1 past `writes` by `stride`,
// each run ended by a power cut and checked after recovery.
SweepResult sweep(std::set<FileRole> roles, std::uint64_t writes, std::uint64_t stride,
                  const SweepOptions& options = {}) {
    const auto [journal_compaction_bytes, files, transient, release_files, dirty_bytes_only] =
        options;
    SweepResult r;
    for (std::uint64_t n = 1; n <= writes + 2; n += stride) {
        ScratchDir dir;
        const auto homes = crash_home_files(dir.path(), files);
        auto faults = std::make_shared<IoFaults>();
        if (transient)
            faults->fail_one_write(n, roles);
        else
            faults->fail_nth_write(n, roles);
        Outcome outcome(files);
        try {
            auto tier = TierCache::open(workload_config(dir, faults, options));
            outcome = run_crash_workload(*tier, homes, n, false, workload_handles(options));
            tier->abandon(); // the crash
        } catch (const TierError&) {
            outcome.any_failure = true; // the fault hit while the engine was starting
        }
        r.injected_runs += faults->injected_failures() > 0;
        faults->crash(n * 7919);
        faults->clear_failures();
        auto tier = TierCache::open(config_for(dir, nullptr, journal_compaction_bytes));
        r.recovered_lines += tier->recovery().lines_written_home;
        ++r.runs;
        r.failed_runs += outcome.any_failure;
        for (const auto& file : outcome.files)
            for (const auto& a : file.acked)
                r.acked_bytes += a.has_value();
        const std::string violation = check_files(*tier, homes, outcome, true);
        EXPECT_EQ(violation, "") << "after recovery, failing write " << n;
        if (!violation.empty()) break; // one detailed failure is enough
    }
    return r;
}

struct WriteCounts {
    std::uint64_t cache_side = 0, home = 0, journal_rewrites = 0;
};

WriteCounts count_writes(std::uint64_t journal_compaction_bytes = 64ull << 20,
                         std::size_t files = 1, bool release_files = false,
                         bool dirty_bytes_only = false) {
    ScratchDir dir;
    auto faults = std::make_shared<IoFaults>();
    WriteCounts counts;
    const SweepOptions options{journal_compaction_bytes, files, false, release_files,
                               dirty_bytes_only};
    {
        auto tier = TierCache::open(workload_config(dir, faults, options));
        const Outcome o = run_crash_workload(*tier, crash_home_files(dir.path(), files), 1, false,
                                             workload_handles(options));
        EXPECT_FALSE(o.any_failure);
        EXPECT_GT(o.appends, 0u) << "the workload must append";
        EXPECT_GT(o.truncates, 0u) << "the workload must truncate";
        counts.journal_rewrites = tier->stats().journal_rewrites;
    }
    counts.cache_side = faults->writes(FileRole::cache) + faults->writes(FileRole::journal);
    counts.home = faults->writes(FileRole::home);
    return counts;
}

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
    const auto [cache_writes, home_writes, rewrites] = count_writes(64ull << 20, three_files);
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
    const auto [cache_writes, home_writes, rewrites] = count_writes(small_journal, three_files);
    const SweepResult r =
        sweep({FileRole::cache, FileRole::journal}, cache_writes,
              std::max<std::uint64_t>(1, cache_writes / 100), {small_journal, three_files, true});
    EXPECT_GT(r.injected_runs, r.runs * 9 / 10);
    EXPECT_GT(r.failed_runs, 0u) << "some failures must reach the program";
    EXPECT_GT(r.acked_bytes, 0u);
}

TEST(CrashSafety, AFailureOfTheNthHomeWriteAloneLosesNoAcknowledgedByte) {
    const auto [cache_writes, home_writes, rewrites] = count_writes(small_journal, three_files);
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
        count_writes(small_journal, three_files, true);
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
        count_writes(small_journal, three_files, true);
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
    const auto [cache_writes, home_writes, rewrites] = count_writes(64ull << 20, files);
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
    const auto [cache_writes, home_writes, rewrites] = count_writes(small_journal);
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
    const auto counts = count_writes(small_journal, three_files, false, true);
    ASSERT_GE(counts.journal_rewrites, 5u) << "the workload must rewrite the journal";
    const SweepResult r = sweep({FileRole::cache, FileRole::journal}, counts.cache_side,
                                std::max<std::uint64_t>(1, counts.cache_side / 100),
                                {small_journal, three_files, false, false, true});
    EXPECT_GT(r.failed_runs, r.runs / 2);
    EXPECT_GT(r.recovered_lines, 0u);
    EXPECT_GT(r.acked_bytes, 0u);
}

TEST(CrashSafety, AFailureOfTheNthHomeWriteAloneLosesNoAcknowledgedByteWritingDirtyBytesOnly) {
    const auto counts = count_writes(small_journal, three_files, false, true);
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
