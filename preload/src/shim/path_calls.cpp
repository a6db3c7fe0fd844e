// unlink/remove/rename on redirected files. The symlink stands for the file: deleting it deletes
// the staged data too; renaming it moves the file (journaled, so finalize brings the data to the
// new name); a rename that replaces a redirected file deletes that file's data.
#include "../common/paths.hpp"
#include "journal.hpp"
#include "log.hpp"
#include "process.hpp"
#include "real.h"
#include "shim.h"
#include "stats.hpp"

#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <stdio.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace iosig::shim {
namespace {

// If `path` is a symlink to a staged file of this user (a regular file we own inside one of our
// staging directories), that file's path.
bool staged_target(const Process& p, int dirfd, const char* path, std::string& target) {
    struct stat st{};
    if (fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISLNK(st.st_mode)) return false;
    char buffer[PATH_MAX];
    const ssize_t n = readlinkat(dirfd, path, buffer, sizeof buffer - 1);
    if (n <= 0 || buffer[0] != '/') return false;
    buffer[n] = '\0';
    const std::string needle = "/" + preload::staging_user_dir_name(p.uid) + "/";
    if (std::strstr(buffer, needle.c_str()) == nullptr) return false;
    struct stat staged{};
    if (lstat(buffer, &staged) != 0 || !S_ISREG(staged.st_mode) || staged.st_uid != p.uid)
        return false;
    target = buffer;
    return true;
}

std::string absolute(int dirfd, const char* path) {
    preload::PathBuffer buffer;
    if (!preload::absolute_path(dirfd, path, buffer)) return {};
    return std::string(buffer.view());
}

void mark_deleted(std::string_view path, std::string_view staged) {
    for_each_file([&](iosig_file& file) {
        const bool same_path = !path.empty() && file.id.path != nullptr && path == file.id.path;
        const bool same_data =
            !staged.empty() && file.id.staged != nullptr && staged == file.id.staged;
        if (same_path || same_data) file.deleted.store(true, std::memory_order_relaxed);
    });
}

void mark_renamed(std::string_view from, const std::string& to) {
    const char* copy = nullptr;
    for_each_file([&](iosig_file& file) {
        if (file.id.path == nullptr || from != file.id.path) return;
        if (copy == nullptr) copy = arena_string(to.c_str());
        file.renamed_to.store(copy, std::memory_order_relaxed);
    });
}

template <class F>
void guarded(F&& body) {
    ++iosig_reentry;
    try {
        body();
    } catch (...) {
        warn(Cause::internal, "internal error while following a delete or rename");
    }
    --iosig_reentry;
}

int real_unlink(int api, int dirfd, const char* path, int flags) {
    switch (api) {
    case IOSIG_REMOVE:
        return IOSIG_REAL(remove)(path);
    case IOSIG_UNLINKAT:
        return IOSIG_REAL(unlinkat)(dirfd, path, flags);
    default:
        return IOSIG_REAL(unlink)(path);
    }
}

int real_rename(int api, int olddirfd, const char* oldpath, int newdirfd, const char* newpath,
                unsigned flags) {
    switch (api) {
    case IOSIG_RENAMEAT:
        return IOSIG_REAL(renameat)(olddirfd, oldpath, newdirfd, newpath);
    case IOSIG_RENAMEAT2:
        return IOSIG_REAL(renameat2)(olddirfd, oldpath, newdirfd, newpath, flags);
    default:
        return IOSIG_REAL(rename)(oldpath, newpath);
    }
}

Process* state_for(const char* path) {
    if (path == nullptr) return nullptr;
    ++iosig_reentry;
    Process* p = process();
    --iosig_reentry;
    return p;
}

} // namespace
} // namespace iosig::shim

using namespace iosig::shim;

extern "C" {

IOSIG_HIDDEN int iosig_unlink_call(int dirfd, const char* path, int flags, int api) {
    Process* p = state_for(path);
    if (p == nullptr || (flags & AT_REMOVEDIR) != 0) return real_unlink(api, dirfd, path, flags);
    const int saved_errno = errno;
    std::string staged;
    std::string path_absolute;
    guarded([&] {
        staged_target(*p, dirfd, path, staged);
        path_absolute = absolute(dirfd, path);
    });
    errno = saved_errno;
    const int result = real_unlink(api, dirfd, path, flags);
    if (result != 0) return result;
    guarded([&] {
        if (!staged.empty()) {
            journal_append(*p, iosig::preload::RecordType::deleted, {staged});
            IOSIG_REAL(unlink)(staged.c_str());
        }
        mark_deleted(path_absolute, staged);
    });
    errno = saved_errno;
    return result;
}

IOSIG_HIDDEN int iosig_rename_call(int olddirfd, const char* oldpath, int newdirfd,
                                   const char* newpath, unsigned flags, int api) {
    Process* p = state_for(oldpath);
    if (p == nullptr || newpath == nullptr)
        return real_rename(api, olddirfd, oldpath, newdirfd, newpath, flags);
    const int saved_errno = errno;
    const bool exchange = (flags & RENAME_EXCHANGE) != 0;
    std::string moved, replaced, old_absolute, new_absolute;
    guarded([&] {
        staged_target(*p, olddirfd, oldpath, moved);
        staged_target(*p, newdirfd, newpath, replaced);
        old_absolute = absolute(olddirfd, oldpath);
        new_absolute = absolute(newdirfd, newpath);
    });
    errno = saved_errno;
    const int result = real_rename(api, olddirfd, oldpath, newdirfd, newpath, flags);
    if (result != 0) return result;
    guarded([&] {
        if (!moved.empty() && !new_absolute.empty())
            journal_append(*p, iosig::preload::RecordType::moved, {moved, new_absolute});
        if (exchange) {
            if (!replaced.empty() && !old_absolute.empty())
                journal_append(*p, iosig::preload::RecordType::moved, {replaced, old_absolute});
        } else if (!replaced.empty() && replaced != moved) {
            // The rename replaced a redirected file: its data is gone as it would be without iosig.
            journal_append(*p, iosig::preload::RecordType::deleted, {replaced});
            IOSIG_REAL(unlink)(replaced.c_str());
            mark_deleted({}, replaced);
        }
        if (!old_absolute.empty() && !new_absolute.empty())
            mark_renamed(old_absolute, new_absolute);
    });
    errno = saved_errno;
    return result;
}

} // extern "C"
