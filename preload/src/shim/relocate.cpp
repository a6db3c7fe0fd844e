// ENOSPC in the middle of a redirected file (docs/preload.md, "When a destination fills up").
//
// When it is safe, the file is moved home under the program's feet and the write is retried: its
// bytes are copied next to the original path, made durable, journaled, renamed over the symlink,
// and every descriptor of this process that referred to the staged file is switched to the new file
// with dup3 (same number, same offset, same flags). Safe means: this process alone holds the file
// (not inherited, not open across a fork), one thread writes it, and it is not memory-mapped.
// Otherwise the ENOSPC goes to the program like on a full disk; every byte already written stays in
// the staged file and `finalize` brings it home.
#include "../common/journal_format.hpp"
#include "../common/paths.hpp"
#include "io_util.hpp"
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
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace iosig::shim {
namespace {

bool mapped(const char* path) {
    const int fd = internal_open("/proc/self/maps", O_RDONLY);
    if (fd < 0) return true; // cannot tell: assume the worst
    const std::size_t needle_length = std::strlen(path);
    char buffer[8192];
    std::size_t kept = 0;
    bool found = false;
    ssize_t n;
    while (!found && (n = read(fd, buffer + kept, sizeof buffer - kept)) > 0) {
        const std::size_t size = kept + static_cast<std::size_t>(n);
        found = memmem(buffer, size, path, needle_length) != nullptr;
        kept = std::min(needle_length, size);
        std::memmove(buffer, buffer + size - kept, kept);
    }
    internal_close(fd);
    return found;
}

bool copy_contents(int from, int to) {
    constexpr std::size_t chunk = std::size_t{1} << 20;
    void* buffer = mmap(nullptr, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buffer == MAP_FAILED) return false;
    bool ok = true;
    while (true) {
        const ssize_t n = read(from, buffer, chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            ok = n == 0;
            break;
        }
        if (!write_all(to, buffer, static_cast<std::size_t>(n))) {
            ok = false;
            break;
        }
    }
    munmap(buffer, chunk);
    return ok;
}

std::string read_link(const char* path) {
    char buffer[PATH_MAX];
    const ssize_t n = readlink(path, buffer, sizeof buffer - 1);
    return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
}

int relocate(iosig_file& file, int fd) {
    if (!file.id.redirected || file.id.staged == nullptr || file.relocated.load()) return -1;
    const char* why_not = nullptr;
    const int owner = file.owner_tid.load();
    if (file.shared_with_child.load() || file.inherited_from_parent.load() ||
        std::strcmp(file.id.source ? file.id.source : "", "inherited") == 0)
        why_not = "the file is shared with another process";
    else if (file.several_writers.load() || (owner != 0 && owner != current_tid()))
        why_not = "several threads write the file";
    else if (mapped(file.id.staged))
        why_not = "the file is memory-mapped";
    const char* renamed = file.renamed_to.load();
    const std::string original = renamed ? renamed : file.id.path;
    if (why_not == nullptr && read_link(original.c_str()) != file.id.staged)
        why_not = "the original path no longer points to the staged file";
    if (why_not != nullptr) {
        warn(Cause::relocation,
             "%s filled up while writing %s and %s: the program sees ENOSPC; the "
             "bytes already written stay in %s and finalize brings them home",
             file.id.mount ? file.id.mount : "the destination", original.c_str(), why_not,
             file.id.staged);
        return -1;
    }
    Process* p = process();
    if (p == nullptr) return -1;

    struct stat staged_stat{};
    if (fstat(fd, &staged_stat) != 0) return -1;
    const std::string directory(preload::parent_of(original));
    const std::string temporary = directory + "/." + std::string(preload::basename_of(original)) +
                                  ".iosig-" + std::to_string(getpid());
    const int access = file.id.open_flags & O_ACCMODE;
    const int sync_flags = file.id.open_flags & (O_SYNC | O_DSYNC);
    const int home = IOSIG_REAL(open)(temporary.c_str(),
                                      (access == O_RDONLY ? O_RDWR : access) | sync_flags |
                                          O_CREAT | O_EXCL | O_NOFOLLOW,
                                      staged_stat.st_mode & 07777);
    if (home < 0) return -1;
    const int source = internal_open(file.id.staged, O_RDONLY);
    bool ok = source >= 0 && copy_contents(source, home) && IOSIG_REAL(fsync)(home) == 0;
    internal_close(source);
    ok = ok && journal_append(*p, preload::RecordType::migrated, {file.id.staged, original});
    ok = ok && IOSIG_REAL(rename)(temporary.c_str(), original.c_str()) == 0;
    if (!ok) {
        const int saved = errno;
        IOSIG_REAL(close)(home);
        IOSIG_REAL(unlink)(temporary.c_str());
        warn(Cause::relocation,
             "%s filled up while writing %s and moving it home failed (%s): the "
             "program sees ENOSPC; the bytes written so far stay in %s",
             file.id.mount ? file.id.mount : "the destination", original.c_str(),
             std::strerror(saved), file.id.staged);
        return -1;
    }
    const int dir = internal_open(directory.c_str(), O_RDONLY | O_DIRECTORY);
    if (dir >= 0) {
        IOSIG_REAL(fsync)(dir);
        internal_close(dir);
    }
    // Same offset and status flags on the new open file description.
    const off_t position = IOSIG_REAL(lseek)(fd, 0, SEEK_CUR);
    if (position >= 0) IOSIG_REAL(lseek)(home, position, SEEK_SET);
    const int status = IOSIG_REAL(fcntl)(fd, F_GETFL, 0UL);
    if (status >= 0)
        IOSIG_REAL(fcntl)(
            home, F_SETFL,
            static_cast<unsigned long>(status & (O_APPEND | O_NONBLOCK | O_DIRECT | O_NOATIME)));
    for (int other = 0; other < IOSIG_MAX_FD; ++other) {
        if (__atomic_load_n(&iosig_slots[other], __ATOMIC_RELAXED) != &file) continue;
        const int descriptor_flags = IOSIG_REAL(fcntl)(other, F_GETFD, 0UL);
        IOSIG_REAL(dup3)(home, other,
                         descriptor_flags >= 0 && (descriptor_flags & FD_CLOEXEC) ? O_CLOEXEC : 0);
    }
    IOSIG_REAL(close)(home);
    IOSIG_REAL(unlink)(file.id.staged);
    file.relocated.store(true);
    warn(Cause::relocation,
         "%s filled up while writing %s: the file was moved home to %s and writing "
         "continues there",
         file.id.mount ? file.id.mount : "the destination", original.c_str(), original.c_str());
    return fd;
}

} // namespace
} // namespace iosig::shim

extern "C" IOSIG_HIDDEN int iosig_relocate_after_enospc(iosig_file* file, int fd) {
    if (file == nullptr || iosig_reentry) return -1;
    ++iosig_reentry;
    int result = -1;
    try {
        result = iosig::shim::relocate(*file, fd);
    } catch (...) {
        result = -1;
    }
    --iosig_reentry;
    return result;
}
