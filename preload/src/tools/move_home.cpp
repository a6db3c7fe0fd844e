#include "move_home.hpp"

#include "common/paths.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace iosig::preload {
namespace {

FinalizeStepHook step_hook = nullptr;

constexpr std::string_view temporary_infix = ".iosig-finalize-";

std::string error_text(const std::string& what) {
    return what + ": " + std::strerror(errno);
}

bool copy_data(int from, int to, std::uint64_t size) {
    std::uint64_t done = 0;
    while (done < size) {
        const ssize_t n = copy_file_range(from, nullptr, to, nullptr, size - done, 0);
        if (n > 0) {
            done += static_cast<std::uint64_t>(n);
            continue;
        }
        if (n == 0) break;
        if (errno == EINTR) continue;
        if (errno != EXDEV && errno != EINVAL && errno != EOPNOTSUPP && errno != ENOSYS)
            return false;
        break; // not supported between these file systems: plain copy below
    }
    std::vector<char> buffer(std::size_t{1} << 20);
    while (true) {
        const ssize_t n = read(from, buffer.data(), buffer.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return false;
        if (n == 0) return true;
        for (ssize_t written = 0; written < n;) {
            const ssize_t w =
                write(to, buffer.data() + written, static_cast<std::size_t>(n - written));
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) return false;
            written += w;
        }
    }
}

} // namespace

void set_finalize_step_hook(FinalizeStepHook hook) {
    step_hook = hook;
}

void finalize_step(FinalizeStep step) {
    if (step_hook != nullptr) step_hook(step);
}

std::size_t remove_stale_temporaries(const std::string& destination) {
    const std::string directory(parent_of(destination));
    const std::string prefix =
        "." + std::string(basename_of(destination)) + std::string(temporary_infix);
    std::size_t removed = 0;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(directory, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.compare(0, prefix.size(), prefix) != 0) continue;
        const std::string pid_text = name.substr(prefix.size());
        if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos)
            continue;
        const long pid = std::stol(pid_text);
        if (pid == getpid() || kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH)
            continue; // alive
        if (unlink(entry.path().c_str()) == 0) ++removed;
    }
    if (removed != 0) fsync_directory(directory);
    return removed;
}

void fsync_directory(const std::string& directory) {
    const int fd = open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    fsync(fd);
    close(fd);
}

bool same_contents(const std::string& a, const std::string& b) {
    const int fa = open(a.c_str(), O_RDONLY | O_CLOEXEC);
    const int fb = open(b.c_str(), O_RDONLY | O_CLOEXEC);
    bool same = fa >= 0 && fb >= 0;
    struct stat sa{}, sb{};
    same = same && fstat(fa, &sa) == 0 && fstat(fb, &sb) == 0 && sa.st_size == sb.st_size;
    std::vector<char> ba(std::size_t{1} << 16), bb(std::size_t{1} << 16);
    while (same) {
        const ssize_t na = read(fa, ba.data(), ba.size());
        const ssize_t nb = read(fb, bb.data(), bb.size());
        if (na != nb || na < 0)
            same = false;
        else if (na == 0)
            break;
        else
            same = std::memcmp(ba.data(), bb.data(), static_cast<std::size_t>(na)) == 0;
    }
    if (fa >= 0) close(fa);
    if (fb >= 0) close(fb);
    return same;
}

MoveResult move_home(const std::string& staged, const std::string& destination,
                     const std::function<bool()>& durable) {
    MoveResult result;
    struct stat source{};
    if (stat(staged.c_str(), &source) != 0) {
        result.error = error_text("cannot read the staged file " + staged);
        return result;
    }
    const std::string directory(parent_of(destination));
    struct stat home_dir{};
    if (stat(directory.c_str(), &home_dir) != 0) {
        result.error = error_text("the original directory " + directory + " is gone");
        return result;
    }
    const std::string staging_dir(parent_of(staged));
    if (source.st_dev == home_dir.st_dev) {
        if (rename(staged.c_str(), destination.c_str()) != 0) {
            result.error = error_text("rename " + staged + " -> " + destination);
            return result;
        }
        finalize_step(FinalizeStep::renamed);
        fsync_directory(directory);
        fsync_directory(staging_dir);
        finalize_step(FinalizeStep::directory_synced);
        if (durable()) finalize_step(FinalizeStep::journaled);
        result.ok = true;
        return result;
    }

    const std::string temporary = directory + "/." + std::string(basename_of(destination)) +
                                  std::string(temporary_infix) + std::to_string(getpid());
    const int from = open(staged.c_str(), O_RDONLY | O_CLOEXEC);
    if (from < 0) {
        result.error = error_text("open " + staged);
        return result;
    }
    const int to =
        open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (to < 0) {
        result.error = error_text("create " + temporary);
        close(from);
        return result;
    }
    finalize_step(FinalizeStep::temp_created);
    bool ok = copy_data(from, to, static_cast<std::uint64_t>(source.st_size));
    if (!ok) result.error = error_text("copy " + staged + " -> " + temporary);
    if (ok) finalize_step(FinalizeStep::copied);
    if (ok && geteuid() == 0) fchown(to, source.st_uid, source.st_gid);
    if (ok && fchmod(to, source.st_mode & 07777) != 0) {
        ok = false;
        result.error = error_text("chmod " + temporary);
    }
    if (ok) {
        const timespec times[2] = {source.st_atim, source.st_mtim};
        futimens(to, times);
    }
    if (ok && fsync(to) != 0) {
        ok = false;
        result.error = error_text("fsync " + temporary);
    }
    if (ok) finalize_step(FinalizeStep::synced);
    close(from);
    close(to);
    if (ok && rename(temporary.c_str(), destination.c_str()) != 0) {
        ok = false;
        result.error = error_text("rename " + temporary + " -> " + destination);
    }
    if (!ok) {
        unlink(temporary.c_str()); // the staged file and the symlink are untouched
        return result;
    }
    finalize_step(FinalizeStep::renamed);
    fsync_directory(directory);
    finalize_step(FinalizeStep::directory_synced);
    if (durable()) {
        finalize_step(FinalizeStep::journaled);
        unlink(staged.c_str());
        fsync_directory(staging_dir);
        finalize_step(FinalizeStep::staged_deleted);
    }
    result.ok = true;
    result.copied = true;
    return result;
}

} // namespace iosig::preload
