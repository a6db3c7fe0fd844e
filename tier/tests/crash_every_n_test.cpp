// Every N of a crash sweep, not a sample: the CrashSafety sweeps (crash_test.cpp) try 50-200 of the
// N their workload offers, so that the suite stays within its time. This runs the same workload,
// failure and power cut for each N from --from to --to, as often as --repetitions says (the
// workload's seed is N, so repetitions differ in the threads' timing only). A violation fails the
// test, naming N; run it again with --from N --to N. Session 38 found the cause of a CI failure
// this way (docs/tier.md, "Every N of a sweep").
//
//   tier_crash_every_n --fail cache-side|home|any [--files N] [--small-journal] [--alone]
//                      [--release-files] [--dirty-bytes-only] [--from N] [--to N] [--repetitions R]
//
// ctest runs a few short ranges of it, so that it keeps working.
#include "crash_sweep.hpp"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <iostream>

namespace iosig::tier {
namespace {

using test_support::count_writes;
using test_support::sweep_end;
using test_support::sweep_range;
using test_support::SweepOptions;
using test_support::SweepResult;

struct EveryN {
    std::set<FileRole> roles;
    SweepOptions options;
    std::uint64_t from = 1, to = 0, repetitions = 1; // to 0: sweep_end of the writes to `roles`
};

EveryN every_n;

TEST(CrashEveryN, NoFailingWriteLosesAnAcknowledgedByte) {
    const std::uint64_t to =
        every_n.to > 0 ? every_n.to : sweep_end(count_writes(every_n.options).to(every_n.roles));
    ASSERT_LE(every_n.from, to) << "--from is past --to";
    for (std::uint64_t repetition = 1; repetition <= every_n.repetitions; ++repetition) {
        const SweepResult r = sweep_range(every_n.roles, every_n.from, to, 1, every_n.options);
        std::cout << "repetition " << repetition << ": N = " << every_n.from << ".." << to << ", "
                  << r.runs << " runs, " << r.injected_runs << " with the failure injected, "
                  << r.failed_runs << " with a call failing, " << r.recovered_lines
                  << " lines recovered\n";
        if (HasFailure()) return; // sweep named the N
        EXPECT_EQ(r.runs, to - every_n.from + 1);
        EXPECT_GT(r.injected_runs, 0u) << "no N in the range reached a write it could fail";
    }
}

} // namespace
} // namespace iosig::tier

int main(int argc, char** argv) {
    using iosig::tier::every_n;
    using iosig::tier::FileRole;
    testing::InitGoogleTest(&argc, argv); // takes the --gtest_* flags out of argv
    CLI::App app{"Runs a CrashSafety sweep over every N (tier/tests/crash_every_n_test.cpp)"};
    std::string fail;
    bool small = false;
    app.add_option("--fail", fail,
                   "whose N-th write fails: cache-side (cache file and journal), home, or any "
                   "(then every write and sync from the N-th on: a power cut)")
        ->required()
        ->check(CLI::IsMember({"cache-side", "home", "any"}));
    app.add_option("--files", every_n.options.files, "home files of the workload (default 1)")
        ->check(CLI::Range(1, 16));
    app.add_flag("--small-journal", small, "rewrite the journal past 1 KiB (default 64 MiB)");
    app.add_flag("--alone", every_n.options.transient,
                 "the N-th write fails alone, the device working again after it");
    app.add_flag("--release-files", every_n.options.release_files,
                 "reopen each file after each fsync, and keep no idle file");
    app.add_flag("--dirty-bytes-only", every_n.options.dirty_bytes_only,
                 "write home only the bytes the writes changed");
    app.add_option("--from", every_n.from, "first N (default 1)")->check(CLI::PositiveNumber);
    app.add_option("--to", every_n.to, "last N (default: every write the workload makes, +2)")
        ->check(CLI::PositiveNumber);
    app.add_option("--repetitions", every_n.repetitions, "runs of the range (default 1)")
        ->check(CLI::PositiveNumber);
    CLI11_PARSE(app, argc, argv);
    if (small) every_n.options.journal_compaction_bytes = iosig::tier::test_support::small_journal;
    if (fail != "home") every_n.roles = {FileRole::cache, FileRole::journal};
    if (fail != "cache-side") every_n.roles.insert(FileRole::home);
    return RUN_ALL_TESTS();
}
