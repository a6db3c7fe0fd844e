// A test double of the iosig runtime (preload/include/iosig/runtime.h): every entry point appends
// "function|signature|path|flags" to the file named by $IOSIG_TEST_RECORD, then performs the plain
// call. It lets the plugin's end-to-end tests prove what reaches the runtime (which calls, with
// which canonical signature and arguments) independently of what the real runtime decides to do.
#define _GNU_SOURCE
#include "iosig/runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

static void record(const char* function, const char* signature, const char* path, int flags) {
    const char* file = getenv("IOSIG_TEST_RECORD");
    if (!file) return;
    const int saved = errno;
    const int fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) {
        dprintf(fd, "%s|%s|%s|%d\n", function, signature, path ? path : "(null)", flags);
        close(fd);
    }
    errno = saved;
}

static mode_t mode_argument(int flags, va_list arguments) {
    return (flags & (O_CREAT | O_TMPFILE)) ? va_arg(arguments, mode_t) : 0;
}

int iosig_open(const char* signature, const char* path, int flags, ...) {
    va_list arguments;
    va_start(arguments, flags);
    const mode_t mode = mode_argument(flags, arguments);
    va_end(arguments);
    record("open", signature, path, flags);
    return open(path, flags, mode);
}

int iosig_open64(const char* signature, const char* path, int flags, ...) {
    va_list arguments;
    va_start(arguments, flags);
    const mode_t mode = mode_argument(flags, arguments);
    va_end(arguments);
    record("open64", signature, path, flags);
    return open64(path, flags, mode);
}

int iosig_openat(const char* signature, int dirfd, const char* path, int flags, ...) {
    va_list arguments;
    va_start(arguments, flags);
    const mode_t mode = mode_argument(flags, arguments);
    va_end(arguments);
    record("openat", signature, path, flags);
    return openat(dirfd, path, flags, mode);
}

int iosig_openat64(const char* signature, int dirfd, const char* path, int flags, ...) {
    va_list arguments;
    va_start(arguments, flags);
    const mode_t mode = mode_argument(flags, arguments);
    va_end(arguments);
    record("openat64", signature, path, flags);
    return openat64(dirfd, path, flags, mode);
}

int iosig_creat(const char* signature, const char* path, mode_t mode) {
    record("creat", signature, path, (int)mode);
    return creat(path, mode);
}

int iosig_creat64(const char* signature, const char* path, mode_t mode) {
    record("creat64", signature, path, (int)mode);
    return creat64(path, mode);
}

FILE* iosig_fopen(const char* signature, const char* path, const char* mode) {
    record("fopen", signature, path, mode[0]);
    return fopen(path, mode);
}

FILE* iosig_fopen64(const char* signature, const char* path, const char* mode) {
    record("fopen64", signature, path, mode[0]);
    return fopen64(path, mode);
}

FILE* iosig_freopen(const char* signature, const char* path, const char* mode, FILE* stream) {
    record("freopen", signature, path, mode[0]);
    return freopen(path, mode, stream);
}

FILE* iosig_freopen64(const char* signature, const char* path, const char* mode, FILE* stream) {
    record("freopen64", signature, path, mode[0]);
    return freopen64(path, mode, stream);
}

const char* iosig_prepare_path(const char* signature, const char* path, int open_flags) {
    record("prepare", signature, path, open_flags);
    return path;
}

int iosig_runtime_active(void) {
    return 1;
}
