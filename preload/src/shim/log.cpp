#include "log.hpp"

#include "io_util.hpp"
#include "real.h"
#include "shim.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace iosig::shim {
namespace {

constexpr const char* cause_names[] = {
    "bad-rules",      "no-config",   "bad-config",       "bad-signature", "no-mount",
    "staging",        "destination", "destination-full", "journal",       "fd-limit",
    "too-many-files", "relocation",  "report",           "internal",
};
static_assert(sizeof cause_names / sizeof cause_names[0] == static_cast<unsigned>(Cause::count));

constinit std::atomic<unsigned> warned_causes{0};
constinit char log_file[PATH_MAX] = {};
constinit char marker_dir[PATH_MAX] = {};
constinit bool verbose_log = false;

void emit(const char* text, std::size_t length) {
    int fd = 2;
    if (log_file[0] != '\0') {
        fd = IOSIG_REAL(open)(log_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) fd = 2;
    }
    std::size_t done = 0;
    while (done < length) {
        const ssize_t n = IOSIG_REAL(write)(fd, text + done, length - done);
        if (n <= 0) break;
        done += static_cast<std::size_t>(n);
    }
    if (fd != 2) IOSIG_REAL(close)(fd);
}

// true if no other process of the job printed this cause yet (or if that cannot be known).
bool first_in_job(Cause cause) {
    if (marker_dir[0] == '\0') return true;
    char path[PATH_MAX];
    const int n = std::snprintf(path, sizeof path, "%s/%s", marker_dir,
                                cause_names[static_cast<unsigned>(cause)]);
    if (n <= 0 || static_cast<std::size_t>(n) >= sizeof path) return true;
    make_directories(marker_dir, 0700);
    const int fd =
        IOSIG_REAL(open)(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0) {
        IOSIG_REAL(close)(fd);
        return true;
    }
    return errno != EEXIST;
}

void vformat_and_emit(const char* prefix, const char* format, va_list args) {
    char text[2048];
    int length =
        std::snprintf(text, sizeof text, "iosig[%d]: %s", static_cast<int>(getpid()), prefix);
    if (length < 0) return;
    const int body = std::vsnprintf(
        text + length, sizeof text - static_cast<std::size_t>(length) - 1, format, args);
    if (body < 0) return;
    length = std::min<int>(length + body, static_cast<int>(sizeof text) - 2);
    text[length++] = '\n';
    emit(text, static_cast<std::size_t>(length));
}

} // namespace

void configure_log(const char* log_path, const char* warned_dir, bool verbose) {
    std::snprintf(log_file, sizeof log_file, "%s", log_path ? log_path : "");
    std::snprintf(marker_dir, sizeof marker_dir, "%s", warned_dir ? warned_dir : "");
    verbose_log = verbose;
}

void reset_log_after_fork() {}

void warn(Cause cause, const char* format, ...) {
    const int saved_errno = errno;
    const unsigned bit = 1U << static_cast<unsigned>(cause);
    if ((warned_causes.fetch_or(bit, std::memory_order_relaxed) & bit) == 0 &&
        first_in_job(cause)) {
        ++iosig_reentry;
        va_list args;
        va_start(args, format);
        vformat_and_emit("warning: ", format, args);
        va_end(args);
        --iosig_reentry;
    }
    errno = saved_errno;
}

void note(const char* format, ...) {
    if (!verbose_log) return;
    const int saved_errno = errno;
    ++iosig_reentry;
    va_list args;
    va_start(args, format);
    vformat_and_emit("", format, args);
    va_end(args);
    --iosig_reentry;
    errno = saved_errno;
}

} // namespace iosig::shim
