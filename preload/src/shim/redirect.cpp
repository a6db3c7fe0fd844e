#include "redirect.hpp"

#include "../common/journal_format.hpp"
#include "io_util.hpp"
#include "journal.hpp"
#include "log.hpp"
#include "real.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace iosig::shim {
namespace {

constinit std::atomic<unsigned> staged_counter{0};

std::uint64_t space_needed(const Process& p, const Signature& signature) {
    if (signature.total_size) return *signature.total_size;
    return p.rules ? p.rules->options().min_free : preload::RuleOptions{}.min_free;
}

std::uint64_t free_bytes(const std::string& path) {
    struct statvfs fs{};
    if (statvfs(path.c_str(), &fs) != 0) return ~std::uint64_t{0}; // unknown: let creation decide
    return static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
}

// The placement for the intent's signature, cached per rule or signature text, and re-decided when
// the cached mount no longer has the space the signature needs.
Placement placement_for(Process& p, const Intent& intent) {
    std::lock_guard lock(p.mutex);
    const std::uint64_t need = space_needed(p, *intent.signature);
    Placement* cached = nullptr;
    const bool by_rule = std::strcmp(intent.source, "rule") == 0 && intent.rule != nullptr;
    if (by_rule) {
        if (auto it = p.rule_placements.find(intent.rule->index); it != p.rule_placements.end())
            cached = &it->second;
    } else if (auto it = p.sig_placements.find(intent.signature_text);
               it != p.sig_placements.end()) {
        cached = &it->second;
    }
    if (cached && cached->mount >= 0 &&
        free_bytes(p.mounts[static_cast<std::size_t>(cached->mount)].path) >= need)
        return *cached;
    if (cached && cached->mount < 0) return *cached;
    Placement fresh = place_locked(p, *intent.signature, need);
    if (by_rule)
        p.rule_placements[intent.rule->index] = fresh;
    else
        p.sig_placements[intent.signature_text] = fresh;
    return fresh;
}

bool safe_parent(const struct stat& st, uid_t uid) {
    const bool trusted_owner = st.st_uid == uid || st.st_uid == 0;
    const bool others_can_rename =
        (st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0;
    return trusted_owner && !others_can_rename;
}

bool private_directory(int fd, uid_t uid) {
    struct stat st{};
    return fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == uid &&
           (st.st_mode & 077) == 0;
}

// Opens (creating as needed) <mount>/.iosig-<uid>/<job> without following any symlink below the
// mount, and checks that both levels belong to us and are private. -1 (and a warning) otherwise.
int open_staging(Process& p, const MountState& mount, std::string& staging_path) {
    const std::string user_dir = preload::staging_user_dir_name(p.uid);
    staging_path = preload::staging_job_dir(mount.path, p.uid, p.job);
    const int mount_fd = internal_open(mount.path.c_str(), O_RDONLY | O_DIRECTORY);
    if (mount_fd < 0) {
        warn(Cause::staging, "cannot open the mount %s (%s): not redirecting there",
             mount.path.c_str(), std::strerror(errno));
        return -1;
    }
    int job_fd = -1;
    int user_fd = -1;
    const char* problem = nullptr;
    struct stat st{};
    if (fstat(mount_fd, &st) != 0 || !safe_parent(st, p.uid)) {
        problem = "the mount directory is writable by others without the sticky bit";
    } else if (mkdirat(mount_fd, user_dir.c_str(), 0700) != 0 && errno != EEXIST) {
        problem = "cannot create the staging directory";
    } else if ((user_fd = internal_openat(mount_fd, user_dir.c_str(),
                                          O_RDONLY | O_DIRECTORY | O_NOFOLLOW)) < 0) {
        problem = "the staging directory is a symlink or not a directory";
    } else if (!private_directory(user_fd, p.uid)) {
        problem = "the staging directory belongs to another user or is not private (mode 0700)";
    } else if (mkdirat(user_fd, p.job.c_str(), 0700) != 0 && errno != EEXIST) {
        problem = "cannot create the job's staging directory";
    } else if ((job_fd = internal_openat(user_fd, p.job.c_str(),
                                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW)) < 0) {
        problem = "the job's staging directory is a symlink or not a directory";
    } else if (!private_directory(job_fd, p.uid)) {
        problem = "the job's staging directory belongs to another user or is not private";
        internal_close(job_fd);
        job_fd = -1;
    }
    const int saved = errno;
    internal_close(user_fd);
    internal_close(mount_fd);
    if (problem != nullptr)
        warn(Cause::staging, "%s: %s (%s): not redirecting there", staging_path.c_str(), problem,
             std::strerror(saved));
    return job_fd;
}

std::string staged_name(std::string_view original_basename) {
    std::string name = std::to_string(getpid()) + "-" +
                       std::to_string(staged_counter.fetch_add(1, std::memory_order_relaxed)) + "-";
    name += original_basename.substr(0, 200);
    return name;
}

const char* persistence_of(const Signature& s) {
    switch (s.persistence) {
    case Persistence::persist:
        return preload::persistence_persist.data();
    case Persistence::temp:
        return preload::persistence_temp.data();
    default:
        return preload::persistence_unspecified.data();
    }
}

bool is_destination_error(int error) {
    return error == ENOSPC || error == EDQUOT || error == EROFS || error == EACCES ||
           error == EPERM || error == EINVAL || error == EMFILE || error == ENFILE ||
           error == EIO || error == EOPNOTSUPP;
}

struct Staged {
    int dir_fd = -1;
    int fd = -1;
    std::string name;
    std::string path;
    Placement placement;
};

// Steps 2-4: choose, create the staged file, journal it. Fills result.placement on every outcome.
bool stage(Process& p, const Intent& intent, int flags, mode_t mode, Staged& staged,
           RedirectResult& result, bool path_exists_already) {
    const std::string_view absolute = intent.path.view();
    struct stat parent{};
    const std::string parent_path(preload::parent_of(absolute));
    if (stat(parent_path.c_str(), &parent) != 0) {
        result.placement = "not redirected: the directory does not exist";
        return false;
    }
    staged.placement = placement_for(p, intent);
    if (staged.placement.mount < 0) {
        warn(Cause::no_mount, "%s: %s: not redirecting", std::string(absolute).c_str(),
             staged.placement.why.c_str());
        result.placement = "not redirected: " + staged.placement.why;
        return false;
    }
    const MountState& mount = p.mounts[static_cast<std::size_t>(staged.placement.mount)];
    result.mount = mount.path;
    bool within_other = false;
    for (const auto& other : p.mounts)
        if (&other != &mount && other.path.size() > 1 && preload::is_within(absolute, other.path))
            within_other = true;
    if (preload::is_within(absolute, mount.path) ||
        (parent.st_dev == mount.device && !within_other)) {
        result.placement =
            "already on the chosen mount " + mount.path + " (" + staged.placement.why + ")";
        return false;
    }
    if (free_bytes(mount.path) < space_needed(p, *intent.signature)) {
        warn(Cause::destination_full, "%s is too full for %s: not redirecting", mount.path.c_str(),
             std::string(absolute).c_str());
        result.placement = "not redirected: " + mount.path + " is full";
        return false;
    }
    std::string staging_path;
    staged.dir_fd = open_staging(p, mount, staging_path);
    if (staged.dir_fd < 0) {
        result.placement = "not redirected: staging directory on " + mount.path + " unusable";
        return false;
    }
    constexpr int kept = O_ACCMODE | O_APPEND | O_CLOEXEC | O_DIRECT | O_DSYNC | O_SYNC |
                         O_NOATIME | O_NONBLOCK | O_NOCTTY | O_LARGEFILE;
    const int staged_flags = (flags & kept) | O_CREAT | O_EXCL | O_NOFOLLOW;
    for (int attempt = 0; attempt < 4 && staged.fd < 0; ++attempt) {
        staged.name = staged_name(preload::basename_of(absolute));
        staged.fd = IOSIG_REAL(openat)(staged.dir_fd, staged.name.c_str(), staged_flags, mode);
        if (staged.fd < 0 && errno != EEXIST) break;
    }
    if (staged.fd < 0) {
        const int error = errno;
        warn(is_destination_error(error) ? Cause::destination : Cause::staging,
             "cannot create a file in %s (%s): not redirecting", staging_path.c_str(),
             std::strerror(error));
        result.placement =
            "not redirected: " + std::string(std::strerror(error)) + " on " + mount.path;
        internal_close(staged.dir_fd);
        staged.dir_fd = -1;
        return false;
    }
    staged.path = staging_path + "/" + staged.name;
    const std::string why =
        (intent.rule ? "rule " + intent.rule->pattern.text() : std::string("pragma")) + ": " +
        intent.signature_text + " -> " + mount.path + " (" + staged.placement.why + ")";
    std::string rule_where;
    if (intent.rule)
        rule_where = intent.rule->where.file + ":" + std::to_string(intent.rule->where.line) + ":" +
                     std::to_string(intent.rule->where.column);
    const bool journaled = journal_append(
        p, preload::RecordType::redirect,
        {staged.path, absolute, mount.path, persistence_of(*intent.signature),
         staged.placement.global ? "1" : "0", p.rules && p.rules->options().keep_global ? "1" : "0",
         intent.source, intent.signature_text, why,
         intent.rule ? std::string_view(intent.rule->pattern.text()) : std::string_view(),
         rule_where});
    if (!journaled) {
        IOSIG_REAL(close)(staged.fd);
        unlinkat(staged.dir_fd, staged.name.c_str(), 0);
        internal_close(staged.dir_fd);
        staged.fd = staged.dir_fd = -1;
        result.placement = "not redirected: the journal cannot be written";
        return false;
    }
    (void)path_exists_already;
    result.placement = "redirected to " + mount.path + " (" + staged.placement.why + ")";
    return true;
}

void unstage(Process& p, Staged& staged) {
    IOSIG_REAL(close)(staged.fd);
    unlinkat(staged.dir_fd, staged.name.c_str(), 0);
    internal_close(staged.dir_fd);
    staged.fd = staged.dir_fd = -1;
    journal_append(p, preload::RecordType::abandoned, {staged.path});
}

} // namespace

RedirectResult redirect_create(Process& p, const Intent& intent, int dirfd, const char* path,
                               int flags, mode_t mode) {
    RedirectResult result;
    if (!intent.signature) {
        result.placement = "tracked (the rule gives no signature)";
        return result;
    }
    if ((flags & O_DIRECTORY) != 0) return result;
    struct stat existing{};
    if (fstatat(dirfd, path, &existing, AT_SYMLINK_NOFOLLOW) == 0) {
        result.placement =
            S_ISLNK(existing.st_mode) ? "exists (a symlink, followed)" : "exists: not redirected";
        return result;
    }
    if (errno != ENOENT) {
        result.placement = "not redirected: cannot inspect the path";
        return result;
    }
    Staged staged;
    if (!stage(p, intent, flags, mode, staged, result, false)) return result;
    if (symlinkat(staged.path.c_str(), dirfd, path) != 0) {
        const int error = errno;
        unstage(p, staged);
        result.placement = error == EEXIST ? "exists (appeared while redirecting): not redirected"
                                           : "not redirected: cannot create the symlink (" +
                                                 std::string(std::strerror(error)) + ")";
        return result;
    }
    internal_close(staged.dir_fd);
    note("redirected %s -> %s", intent.path.c_str(), staged.path.c_str());
    result.redirected = true;
    result.fd = staged.fd;
    result.staged = std::move(staged.path);
    return result;
}

RedirectResult redirect_replace(Process& p, const Intent& intent, int flags) {
    RedirectResult result;
    if (!intent.signature) {
        result.placement = "tracked (the rule gives no signature)";
        return result;
    }
    Staged staged;
    if (!stage(p, intent, flags | O_RDWR, 0600, staged, result, true)) return result;
    // Plant the symlink under a temporary name beside the placeholder, then rename it over it.
    const std::string absolute(intent.path.view());
    const std::string temporary = absolute + ".iosig-" + std::to_string(getpid());
    if (symlink(staged.path.c_str(), temporary.c_str()) != 0 ||
        IOSIG_REAL(rename)(temporary.c_str(), absolute.c_str()) != 0) {
        IOSIG_REAL(unlink)(temporary.c_str());
        unstage(p, staged);
        result.placement = "not redirected: cannot replace the new file by a symlink";
        return result;
    }
    internal_close(staged.dir_fd);
    note("redirected %s -> %s", absolute.c_str(), staged.path.c_str());
    result.redirected = true;
    result.fd = staged.fd;
    result.staged = std::move(staged.path);
    return result;
}

} // namespace iosig::shim
