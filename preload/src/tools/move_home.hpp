// Moving one staged file over its symlink, durably.
#pragma once

#include <functional>
#include <string>

namespace iosig::preload {

struct MoveResult {
    bool ok = false;
    bool copied = false;  // across file systems (else renamed)
    std::string error;
};

// Puts the contents of `staged` at `destination` (currently a symlink to it) atomically: rename on the
// same file system; else copy to a temporary file beside `destination` (mode, owner, times kept),
// fsync, rename over the symlink, fsync the directory. `durable` is called once the data is safely
// home and before the staged copy is deleted; if it returns false the staged copy stays.
MoveResult move_home(const std::string& staged, const std::string& destination,
                     const std::function<bool()>& durable);

// true if both files exist and hold the same bytes.
bool same_contents(const std::string& a, const std::string& b);

void fsync_directory(const std::string& directory);

} // namespace iosig::preload
