#include "io_util.hpp"

#include "real.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

namespace iosig::shim {

int internal_fd_floor() {
    static int floor = 0; // benign race: every thread computes the same value
    if (floor == 0) {
        rlimit limit{};
        long soft = 1024;
        if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
            soft = static_cast<long>(limit.rlim_cur);
        floor = soft < 128 ? static_cast<int>(std::max(3L, soft / 2))
                           : static_cast<int>(std::min(soft - 64, 1000L));
    }
    return floor;
}

int to_internal_fd(int fd) {
    if (fd < 0 || fd >= internal_fd_floor()) return fd;
    const int high =
        IOSIG_REAL(fcntl)(fd, F_DUPFD_CLOEXEC, static_cast<unsigned long>(internal_fd_floor()));
    if (high < 0) return fd; // no high number free: the low one still works
    IOSIG_REAL(close)(fd);
    return high;
}

int internal_open(const char* path, int flags, mode_t mode) {
    return to_internal_fd(IOSIG_REAL(open)(path, flags | O_CLOEXEC, mode));
}

int internal_openat(int dirfd, const char* path, int flags, mode_t mode) {
    return to_internal_fd(IOSIG_REAL(openat)(dirfd, path, flags | O_CLOEXEC, mode));
}

void internal_close(int fd) {
    if (fd >= 0) IOSIG_REAL(close)(fd);
}

bool make_directories(const char* path, mode_t mode) {
    struct stat st{};
    if (stat(path, &st) == 0) return S_ISDIR(st.st_mode);
    char buffer[PATH_MAX];
    const std::size_t length = std::strlen(path);
    if (length == 0 || length >= sizeof buffer) return false;
    std::memcpy(buffer, path, length + 1);
    for (std::size_t i = 1; i <= length; ++i) {
        if (buffer[i] != '/' && buffer[i] != '\0') continue;
        const char saved = buffer[i];
        buffer[i] = '\0';
        if (mkdir(buffer, mode) != 0 && errno != EEXIST) return false;
        buffer[i] = saved;
    }
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool write_all(int fd, const void* data, std::size_t size) {
    const auto* bytes = static_cast<const char*>(data);
    while (size > 0) {
        const ssize_t n = IOSIG_REAL(write)(fd, bytes, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        if (n == 0) {
            errno = EIO;
            return false;
        }
        bytes += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

} // namespace iosig::shim
