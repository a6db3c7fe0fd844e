// Moving one staged file over its symlink, durably.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace iosig::preload {

struct MoveResult {
    bool ok = false;
    bool copied = false; // across file systems (else renamed)
    std::string error;
};

// Puts the contents of `staged` at `destination` (currently a symlink to it) atomically: rename on
// the same file system; else copy to a temporary file beside `destination` (mode, owner, times
// kept), fsync, rename over the symlink, fsync the directory. `durable` is called once the data is
// safely home and before the staged copy is deleted; if it returns false the staged copy stays.
MoveResult move_home(const std::string& staged, const std::string& destination,
                     const std::function<bool()>& durable);

// The durable steps of finalizing one file, in order (docs/preload.md, "Finalize"). A crash after
// any of them leaves a state `iosig finalize --recover` completes.
enum class FinalizeStep {
    temp_created,     // copy: the temporary file beside the original path exists (empty)
    copied,           // copy: the data is in it, not yet fsync'd
    synced,           // copy: fsync'd
    renamed,          // rename over the symlink done (same file system: the staged file itself)
    directory_synced, // the original directory fsync'd
    journaled,        // the `finalized` record is durable
    staged_deleted,   // copy: the staged copy is gone
    symlink_deleted,  // temp: the symlink is gone
    data_deleted,     // temp: the staged data is gone
};

// Test hook, called after each step in the finalizing process: a test makes it _exit() to simulate
// a crash at that point. nullptr (the default) disables it.
using FinalizeStepHook = void (*)(FinalizeStep);
void set_finalize_step_hook(FinalizeStepHook hook);
void finalize_step(FinalizeStep step);

// Temporary copies an interrupted finalize left beside `destination` (".NAME.iosig-finalize-PID" of
// a process no longer alive); removed. Returns how many.
std::size_t remove_stale_temporaries(const std::string& destination);

// true if both files exist and hold the same bytes.
bool same_contents(const std::string& a, const std::string& b);

void fsync_directory(const std::string& directory);

} // namespace iosig::preload
