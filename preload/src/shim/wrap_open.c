/* The open family, fortified and 64-bit forms included (glibc 2.36: -D_FORTIFY_SOURCE=2 binaries
 * call
 * __open_2/__openat_2, -D_FILE_OFFSET_BITS=64 ones open64/openat64/__open64_2/fopen64/freopen64).
 * Everything here only unpacks the arguments; iosig_open_call decides. */
#include "real.h"
#include "shim.h"

#include <stdarg.h>

static int needs_mode(int flags) {
    return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE;
}

#define IOSIG_MODE_ARG(flags, last, mode)                                                          \
    mode_t mode = 0;                                                                               \
    if (needs_mode(flags)) {                                                                       \
        va_list ap;                                                                                \
        va_start(ap, last);                                                                        \
        mode = (mode_t)va_arg(ap, int);                                                            \
        va_end(ap);                                                                                \
    }

IOSIG_EXPORT int open(const char* path, int flags, ...) {
    IOSIG_MODE_ARG(flags, flags, mode)
    if (iosig_reentry) return IOSIG_REAL(open)(path, flags, mode);
    return iosig_open_call(IOSIG_API_OPEN, 0, AT_FDCWD, path, flags, mode);
}

IOSIG_EXPORT int open64(const char* path, int flags, ...) {
    IOSIG_MODE_ARG(flags, flags, mode)
    if (iosig_reentry) return IOSIG_REAL(open64)(path, flags, mode);
    return iosig_open_call(IOSIG_API_OPEN64, 0, AT_FDCWD, path, flags, mode);
}

IOSIG_EXPORT int openat(int dirfd, const char* path, int flags, ...) {
    IOSIG_MODE_ARG(flags, flags, mode)
    if (iosig_reentry) return IOSIG_REAL(openat)(dirfd, path, flags, mode);
    return iosig_open_call(IOSIG_API_OPENAT, 0, dirfd, path, flags, mode);
}

IOSIG_EXPORT int openat64(int dirfd, const char* path, int flags, ...) {
    IOSIG_MODE_ARG(flags, flags, mode)
    if (iosig_reentry) return IOSIG_REAL(openat64)(dirfd, path, flags, mode);
    return iosig_open_call(IOSIG_API_OPENAT64, 0, dirfd, path, flags, mode);
}

/* Fortified forms: the caller passed no mode; glibc's own versions abort on O_CREAT, so do we not
 * redirect those (iosig_open_call hands them to the real function unchanged). */
IOSIG_EXPORT int __open_2(const char* path, int flags) {
    if (iosig_reentry) return IOSIG_REAL(__open_2)(path, flags);
    return iosig_open_call(IOSIG_API_OPEN_2, 0, AT_FDCWD, path, flags, 0);
}

IOSIG_EXPORT int __open64_2(const char* path, int flags) {
    if (iosig_reentry) return IOSIG_REAL(__open64_2)(path, flags);
    return iosig_open_call(IOSIG_API_OPEN64_2, 0, AT_FDCWD, path, flags, 0);
}

IOSIG_EXPORT int __openat_2(int dirfd, const char* path, int flags) {
    if (iosig_reentry) return IOSIG_REAL(__openat_2)(dirfd, path, flags);
    return iosig_open_call(IOSIG_API_OPENAT_2, 0, dirfd, path, flags, 0);
}

IOSIG_EXPORT int __openat64_2(int dirfd, const char* path, int flags) {
    if (iosig_reentry) return IOSIG_REAL(__openat64_2)(dirfd, path, flags);
    return iosig_open_call(IOSIG_API_OPENAT64_2, 0, dirfd, path, flags, 0);
}

IOSIG_EXPORT int creat(const char* path, mode_t mode) {
    if (iosig_reentry) return IOSIG_REAL(creat)(path, mode);
    return iosig_open_call(IOSIG_API_CREAT, 0, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

IOSIG_EXPORT int creat64(const char* path, mode_t mode) {
    if (iosig_reentry) return IOSIG_REAL(creat64)(path, mode);
    return iosig_open_call(IOSIG_API_CREAT64, 0, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC,
                           mode);
}

IOSIG_EXPORT FILE* fopen(const char* path, const char* mode) {
    if (iosig_reentry) return IOSIG_REAL(fopen)(path, mode);
    return iosig_fopen_call(0, 0, path, mode);
}

IOSIG_EXPORT FILE* fopen64(const char* path, const char* mode) {
    if (iosig_reentry) return IOSIG_REAL(fopen64)(path, mode);
    return iosig_fopen_call(1, 0, path, mode);
}

IOSIG_EXPORT FILE* freopen(const char* path, const char* mode, FILE* stream) {
    if (iosig_reentry) return IOSIG_REAL(freopen)(path, mode, stream);
    return iosig_freopen_call(0, 0, path, mode, stream);
}

IOSIG_EXPORT FILE* freopen64(const char* path, const char* mode, FILE* stream) {
    if (iosig_reentry) return IOSIG_REAL(freopen64)(path, mode, stream);
    return iosig_freopen_call(1, 0, path, mode, stream);
}

IOSIG_EXPORT FILE* fdopen(int fd, const char* mode) {
    if (iosig_reentry) return IOSIG_REAL(fdopen)(fd, mode);
    return iosig_fdopen_call(fd, mode);
}

IOSIG_EXPORT int fclose(FILE* stream) {
    if (iosig_reentry) return IOSIG_REAL(fclose)(stream);
    return iosig_fclose_call(stream);
}

IOSIG_EXPORT int fcloseall(void) {
    /* Streams closed here are not seen one by one; forget every tracked descriptor of a stream by
     * letting the report show them as open until exit. Rare enough not to track precisely. */
    return IOSIG_REAL(fcloseall)();
}

/* mkstemp and friends: the real call picks the name and creates the file; a matching name is then
 * redirected by replacing that still-empty file (nobody else knows its name yet). */
#define IOSIG_MKSTEMP(name, params, args, flags)                                                   \
    IOSIG_EXPORT int name params {                                                                 \
        const int fd = IOSIG_REAL(name) args;                                                      \
        if (fd < 0 || iosig_reentry) return fd;                                                    \
        return iosig_mkstemp_done(fd, path, flags);                                                \
    }
IOSIG_MKSTEMP(mkstemp, (char* path), (path), 0)
IOSIG_MKSTEMP(mkstemp64, (char* path), (path), 0)
IOSIG_MKSTEMP(mkostemp, (char* path, int flags), (path, flags), flags)
IOSIG_MKSTEMP(mkostemp64, (char* path, int flags), (path, flags), flags)
IOSIG_MKSTEMP(mkstemps, (char* path, int suffix), (path, suffix), 0)
IOSIG_MKSTEMP(mkostemps, (char* path, int suffix, int flags), (path, suffix, flags), flags)
#undef IOSIG_MKSTEMP
