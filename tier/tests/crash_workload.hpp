// The crash sweeps' workload (crash_test.cpp): random writes, appends, truncates, fsyncs and
// commits over one or several home files through two handles each, with a record of every version
// written to each byte and of the version each successful fsync acknowledged; and the check that a
// file's content after a crash is allowed by that record.
#pragma once

#include "iosig/tier/engine.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace iosig::tier::test_support {

// Each home file's size in the workload: 24 lines of 4 KiB.
constexpr std::size_t crash_file_bytes = 24 * 4096;

// What the workload did to one home file.
struct FileOutcome {
    std::vector<std::vector<unsigned>> versions; // per byte: versions written to it, in order
    std::vector<std::optional<unsigned>>
        acked; // per byte: version made durable by a successful fsync

    FileOutcome() : versions(crash_file_bytes), acked(crash_file_bytes) {}
};

struct Outcome {
    std::vector<FileOutcome> files;
    std::set<unsigned> cuts; // versions that are truncates: the byte reads 0 (beyond the end)
    unsigned appends = 0, truncates = 0;
    bool any_failure = false;

    explicit Outcome(std::size_t file_count = 1) : files(file_count) {}
    // The value version v gives byte `offset`: never 0 for a write, 0 for a truncate.
    unsigned char value(unsigned v, std::size_t offset) const;
};

// The workload's home files in `dir`: home.dat alone, or home-0.dat .. home-<count-1>.dat.
std::vector<std::filesystem::path> crash_home_files(const std::filesystem::path& dir,
                                                    std::size_t count);

// 160 operations: writes of up to 6000 bytes at random offsets (every 13th an append where the
// file leaves room: 9 with seed 1 and one file; every third through a second handle), an fsync
// every 8th, a commit (TierCache::commit) half-way between, a truncate to a random length every
// 19th (7 in all; since session 30, when a truncate followed by writes and an fsync was found
// undone by recovery), one close and reopen of a handle, and a close at the end unless
// `crash_before_close` (then neither the last fsync nor the close: the last writes are still
// dirty when the caller crashes). With several files, each operation but the commits picks one
// at random; an fsync acknowledges its own file's bytes only. A successful fsync acknowledges the
// file's bytes also after calls that failed (since session 31, when that found an fsync
// succeeding after a failed truncate with the cut bytes still at home): a failed call's version
// may be anywhere or nowhere, but what fsync acknowledged must stay. Returns what was written and
// what fsync acknowledged. The commits leave lines dirty that recovery after a power cut must write
// home: without them only the lines of a write-back that failed half-way would be.
//
// Handles::one_reopened_after_each_fsync: one handle per file instead of two, closed and opened
// again after each fsync, so that an engine with TierConfig::idle_files 0 releases the file there
// (and forgets it once its lines have left the cache: docs/tier.md, "Idle files").
enum class Handles { two_throughout, one_reopened_after_each_fsync };
Outcome run_crash_workload(TierCache& tier, const std::vector<std::filesystem::path>& homes,
                           std::uint64_t seed, bool crash_before_close = false,
                           Handles handles = Handles::two_throughout);

// "" when every byte of `content` (home file `file` of the workload after a crash) is allowed by
// the outcome: no byte acknowledged by fsync lost, none stale. Otherwise the first violation.
std::string check_crash_outcome(const std::vector<char>& content, const Outcome& outcome,
                                std::size_t file);

} // namespace iosig::tier::test_support
