#include "crash_sweep.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>

namespace iosig::tier::test_support {

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

TierConfig workload_config(const ScratchDir& dir, std::shared_ptr<IoFaults> faults,
                           const SweepOptions& options) {
    TierConfig config = config_for(dir, std::move(faults), options.journal_compaction_bytes);
    if (options.release_files) {
        config.idle_files = 0;
        // No more ids than files: from the fourth file the engine makes on, each takes a
        // forgotten file's id, under the failures, crashes and rewrites too (docs/tier.md, "What
        // a key can name").
        config.file_ids = static_cast<std::uint32_t>(options.files);
    }
    config.dirty_bytes_only = options.dirty_bytes_only;
    return config;
}

Handles workload_handles(const SweepOptions& options) {
    return options.release_files ? Handles::one_reopened_after_each_fsync : Handles::two_throughout;
}

SweepResult sweep_range(const std::set<FileRole>& roles, std::uint64_t first, std::uint64_t last,
                        std::uint64_t stride, const SweepOptions& options) {
    SweepResult r;
    for (std::uint64_t n = first; n <= last; n += stride) {
        ScratchDir dir;
        const auto homes = crash_home_files(dir.path(), options.files);
        auto faults = std::make_shared<IoFaults>();
        if (options.transient)
            faults->fail_one_write(n, roles);
        else
            faults->fail_nth_write(n, roles);
        Outcome outcome(options.files);
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
        auto tier = TierCache::open(config_for(dir, nullptr, options.journal_compaction_bytes));
        r.recovered_lines += tier->recovery().lines_written_home;
        ++r.runs;
        r.failed_runs += outcome.any_failure;
        for (const auto& file : outcome.files)
            for (const auto& a : file.acked)
                r.acked_bytes += a.has_value();
        const std::string violation = check_files(*tier, homes, outcome, true);
        EXPECT_EQ(violation, "") << "after recovery, failing write " << n;
        if (!violation.empty()) break;
    }
    return r;
}

WriteCounts count_writes(const SweepOptions& options) {
    ScratchDir dir;
    auto faults = std::make_shared<IoFaults>();
    WriteCounts counts;
    {
        auto tier = TierCache::open(workload_config(dir, faults, options));
        const Outcome o = run_crash_workload(*tier, crash_home_files(dir.path(), options.files), 1,
                                             false, workload_handles(options));
        EXPECT_FALSE(o.any_failure);
        EXPECT_GT(o.appends, 0u) << "the workload must append";
        EXPECT_GT(o.truncates, 0u) << "the workload must truncate";
        counts.journal_rewrites = tier->stats().journal_rewrites;
        if (options.release_files)
            EXPECT_GT(tier->stats().file_ids_reused, 0u) << "no file took a forgotten file's id";
    }
    counts.cache_side = faults->writes(FileRole::cache) + faults->writes(FileRole::journal);
    counts.home = faults->writes(FileRole::home);
    return counts;
}

} // namespace iosig::tier::test_support
