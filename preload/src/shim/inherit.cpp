#include "inherit.hpp"

#include "../common/layout.hpp"
#include "io_util.hpp"
#include "real.h"
#include "shim.h"
#include "stats.hpp"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace iosig::shim {
namespace {

struct LinuxDirent64 {
    ino64_t d_ino;
    off64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

void adopt(int fd, const char* target, const std::string& needle) {
    const char* at = std::strstr(target, needle.c_str());
    if (at == nullptr) return;
    struct stat st{};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) return;
    const std::string mount(target, static_cast<std::size_t>(at - target));
    FileIdentity id;
    id.path = target;
    id.staged = target;
    id.mount = mount.c_str();
    id.source = "inherited";
    id.placement = "redirected (descriptor inherited through exec)";
    id.api = "inherited";
    const int flags = IOSIG_REAL(fcntl)(fd, F_GETFL, 0UL);
    id.open_flags = flags < 0 ? 0 : flags;
    id.redirected = true;
    iosig_file* file = new_file(id);
    if (file == nullptr) return;
    const off_t position = IOSIG_REAL(lseek)(fd, 0, SEEK_CUR);
    if (position >= 0) {
        file->cursor.store(static_cast<std::uint64_t>(position), std::memory_order_relaxed);
        file->last_end.store(static_cast<std::uint64_t>(position), std::memory_order_relaxed);
    }
    publish(file, fd);
}

} // namespace

void adopt_inherited_descriptors(const std::string& job) {
    (void)job;
    const std::string needle = "/" + preload::staging_user_dir_name(geteuid()) + "/";
    const int dir = IOSIG_REAL(open)("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (dir < 0) return;
    alignas(8) char buffer[4096];
    while (true) {
        const long n = syscall(SYS_getdents64, dir, buffer, sizeof buffer);
        if (n <= 0) break;
        for (long offset = 0; offset < n;) {
            const auto* entry = reinterpret_cast<const LinuxDirent64*>(buffer + offset);
            offset += entry->d_reclen;
            char* end = nullptr;
            const long fd = std::strtol(entry->d_name, &end, 10);
            if (end == entry->d_name || *end != '\0' || fd == dir || fd >= IOSIG_MAX_FD) continue;
            char target[PATH_MAX];
            const ssize_t length = readlinkat(dir, entry->d_name, target, sizeof target - 1);
            if (length <= 0) continue;
            target[length] = '\0';
            adopt(static_cast<int>(fd), target, needle);
        }
    }
    IOSIG_REAL(close)(dir);
}

} // namespace iosig::shim
