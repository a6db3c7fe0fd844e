// The crash sweeps (crash_test.cpp, and every N at once: crash_every_n_test.cpp): the workload of
// crash_workload.hpp with the N-th write to some of the engine's files failing, each run ended by
// a power cut and checked after recovery.
#pragma once

#include "crash_config.hpp"
#include "crash_workload.hpp"

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace iosig::tier::test_support {

// The journal rewritten past 1 KiB, not 64 MiB: 10-20 times a workload, failures and power cuts
// hit it in the middle of a rewrite and between rewrites.
constexpr std::uint64_t small_journal = 1024;

struct SweepOptions {
    std::uint64_t journal_compaction_bytes = 64ull << 20;
    std::size_t files = 1;
    // The failing write fails alone (IoFaults::fail_one_write): the device works again after it,
    // and the engine goes on with every path open. Else the device is gone from that write on.
    bool transient = false;
    // The workload reopens each file after each fsync (one handle per file), and the engine keeps
    // no idle file: every close releases its file, and a file whose lines have left the cache is
    // forgotten (docs/tier.md, "Idle files"), and the engine has no more file ids than files, so
    // that a file opened again takes a forgotten file's id.
    bool release_files = false;
    // The engine writes home only the bytes its writes changed (TierConfig::dirty_bytes_only),
    // and recovery only the parts the journal names.
    bool dirty_bytes_only = false;
};

struct SweepResult {
    std::uint64_t runs = 0, failed_runs = 0, recovered_lines = 0, acked_bytes = 0;
    std::uint64_t injected_runs = 0; // runs in which the failure was injected
};

// "" when every home file is allowed by the outcome, read from disk and through `tier`; else the
// first violation, naming the file.
std::string check_files(TierCache& tier, const std::vector<std::filesystem::path>& homes,
                        const Outcome& outcome, bool through_the_tier);

// The engine of a sweep's workload.
TierConfig workload_config(const ScratchDir& dir, std::shared_ptr<IoFaults> faults,
                           const SweepOptions& options);

Handles workload_handles(const SweepOptions& options);

// The workload with the N-th write to `roles` failing, for N from `first` to `last` by `stride`
// (N is also the workload's seed), each run ended by a power cut and checked after recovery. A
// violation fails the running test, naming N, and ends the sweep: one detailed failure is enough.
SweepResult sweep_range(const std::set<FileRole>& roles, std::uint64_t first, std::uint64_t last,
                        std::uint64_t stride, const SweepOptions& options = {});

// The last N a sweep over a workload of `writes` writes tries: two past them, where the workload
// ends before the failure comes.
constexpr std::uint64_t sweep_end(std::uint64_t writes) {
    return writes + 2;
}

// sweep_range over the whole workload: N from 1 to sweep_end(writes).
inline SweepResult sweep(const std::set<FileRole>& roles, std::uint64_t writes,
                         std::uint64_t stride, const SweepOptions& options = {}) {
    return sweep_range(roles, 1, sweep_end(writes), stride, options);
}

struct WriteCounts {
    std::uint64_t cache_side = 0, home = 0, journal_rewrites = 0;
    // The writes to files of `roles` (the cache side counts for FileRole::cache).
    std::uint64_t to(const std::set<FileRole>& roles) const {
        return (roles.contains(FileRole::cache) ? cache_side : 0) +
               (roles.contains(FileRole::home) ? home : 0);
    }
};

// The writes the workload makes (seed 1) when nothing fails; fails the running test unless the
// workload ran without a failure and appended and truncated.
WriteCounts count_writes(const SweepOptions& options = {});

} // namespace iosig::tier::test_support
