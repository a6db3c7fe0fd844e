// Redirection of a file about to be created (docs/preload.md, "Redirection"):
//
//   1. the path must not exist (any directory entry, even a dangling symlink, means "exists");
//   2. the signature's mount (live free space considered) must differ from the one the path is on;
//   3. the staged file is created with openat() on the verified per-user, per-job staging directory
//      (mode 0700, opened with O_NOFOLLOW, owner checked), O_CREAT|O_EXCL|O_NOFOLLOW;
//   4. the redirect record is made durable in the journal;
//   5. a symlink to the staged file is planted at the original path; if something appeared there
//      meanwhile, the staged file is removed and the original call proceeds.
//
// Any failure leaves no trace and hands the call back to the caller unchanged.
#pragma once

#include "decide.hpp"
#include "process.hpp"

#include <string>
#include <sys/types.h>

namespace iosig::shim {

struct RedirectResult {
    bool redirected = false;
    int fd = -1;           // the staged file's descriptor when redirected
    std::string staged;    // its path
    std::string mount;     // the mount it is on
    std::string placement; // what happened, in words (for the report)
};

RedirectResult redirect_create(Process& p, const Intent& intent, int dirfd, const char* path,
                               int flags, mode_t mode);

// mkstemp family: `placeholder` was just created at intent.path by the real call and nobody else
// knows its name; on success the symlink replaces it and the caller closes `placeholder`.
RedirectResult redirect_replace(Process& p, const Intent& intent, int flags);

} // namespace iosig::shim
