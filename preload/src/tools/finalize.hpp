// `iosig finalize`: bring a job's redirected files to their final state (docs/preload.md,
// "Finalize").
//
//   persist (and unspecified): home. Same file system: rename over the symlink. Otherwise: copy
//   into a
//     temporary file beside the original path, fsync it, rename it over the symlink, fsync the
//     directory, journal it, delete the staged copy.
//   temp: symlink and data deleted.
//   persist on a global mount with `keep_global`: left in place, symlink kept.
//
// Idempotent (a finalized record is skipped; an interrupted copy is recognised and finished), and
// careful: a staged file that a live process still has open or mapped is left alone, and data whose
// symlink is gone is kept and reported, never deleted, unless it was temp.
#pragma once

#include "job_journal.hpp"

#include <optional>
#include <string>
#include <vector>

namespace iosig::preload {

struct FinalizeOptions {
    std::string state_dir;
    std::string job;
    std::optional<std::string> run; // only this run's files (`iosig run`)
    bool recover = false;           // also a job whose run never ended (crashed, killed)
    bool force = false;             // move files even if a process still has them open
};

enum class FinalizeAction {
    renamed_home, // same file system
    copied_home,  // across file systems
    deleted_temp,
    kept_global, // keep_global policy
    already_done,
    nothing_left, // deleted by the program, abandoned, or moved home by the shim
    in_use,       // a live process has the staged file open or mapped: skipped
    orphan_kept,  // symlink gone or replaced: staged data kept where it is
    failed,       // could not be moved (e.g. ENOSPC at home): staged data and symlink intact
};

struct FinalizeItem {
    std::string staged;
    std::string path;
    FinalizeAction action{};
    std::string detail;
};

struct FinalizeResult {
    std::vector<FinalizeItem> items;
    std::vector<std::string> errors;          // job-level problems (no journal, unfinished run)
    std::vector<std::string> left_in_staging; // files in staging not in the journal (never deleted)
    std::size_t damaged_lines = 0;
    bool ok() const;
    std::size_t count(FinalizeAction action) const;
};

FinalizeResult finalize_job(const FinalizeOptions& options);

// Jobs of this state directory with a redirection not yet finalized.
std::vector<std::string> unfinished_jobs(const std::string& state_dir);

std::string to_string(FinalizeAction action);

} // namespace iosig::preload
