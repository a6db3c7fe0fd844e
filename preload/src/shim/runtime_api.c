/* The runtime ABI of preload/include/iosig/runtime.h: the calls the Clang plugin rewrites annotated
 * opens into. The signature of the pragma takes precedence over rule files. */
#include "iosig/runtime.h"
#include "real.h"
#include "shim.h"

#include <stdarg.h>

IOSIG_HIDDEN const char* iosig_prepare_path_call(const char* signature, const char* path,
                                                 int flags);
IOSIG_HIDDEN int iosig_active_call(void);

static int needs_mode(int flags) {
    return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE;
}

#define IOSIG_MODE_ARG(flags, last)                                                                \
    mode_t mode = 0;                                                                               \
    if (needs_mode(flags)) {                                                                       \
        va_list ap;                                                                                \
        va_start(ap, last);                                                                        \
        mode = (mode_t)va_arg(ap, int);                                                            \
        va_end(ap);                                                                                \
    }

IOSIG_EXPORT int iosig_open(const char* signature, const char* path, int flags, ...) {
    IOSIG_MODE_ARG(flags, flags)
    return iosig_open_call(IOSIG_API_OPEN, signature, AT_FDCWD, path, flags, mode);
}

IOSIG_EXPORT int iosig_open64(const char* signature, const char* path, int flags, ...) {
    IOSIG_MODE_ARG(flags, flags)
    return iosig_open_call(IOSIG_API_OPEN64, signature, AT_FDCWD, path, flags, mode);
}

IOSIG_EXPORT int iosig_openat(const char* signature, int dirfd, const char* path, int flags, ...) {
    IOSIG_MODE_ARG(flags, flags)
    return iosig_open_call(IOSIG_API_OPENAT, signature, dirfd, path, flags, mode);
}

IOSIG_EXPORT int iosig_openat64(const char* signature, int dirfd, const char* path, int flags,
                                ...) {
    IOSIG_MODE_ARG(flags, flags)
    return iosig_open_call(IOSIG_API_OPENAT64, signature, dirfd, path, flags, mode);
}

IOSIG_EXPORT int iosig_creat(const char* signature, const char* path, mode_t mode) {
    return iosig_open_call(IOSIG_API_CREAT, signature, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC,
                           mode);
}

IOSIG_EXPORT int iosig_creat64(const char* signature, const char* path, mode_t mode) {
    return iosig_open_call(IOSIG_API_CREAT64, signature, AT_FDCWD, path,
                           O_CREAT | O_WRONLY | O_TRUNC, mode);
}

IOSIG_EXPORT FILE* iosig_fopen(const char* signature, const char* path, const char* mode) {
    return iosig_fopen_call(0, signature, path, mode);
}

IOSIG_EXPORT FILE* iosig_fopen64(const char* signature, const char* path, const char* mode) {
    return iosig_fopen_call(1, signature, path, mode);
}

IOSIG_EXPORT FILE* iosig_freopen(const char* signature, const char* path, const char* mode,
                                 FILE* stream) {
    return iosig_freopen_call(0, signature, path, mode, stream);
}

IOSIG_EXPORT FILE* iosig_freopen64(const char* signature, const char* path, const char* mode,
                                   FILE* stream) {
    return iosig_freopen_call(1, signature, path, mode, stream);
}

IOSIG_EXPORT const char* iosig_prepare_path(const char* signature, const char* path,
                                            int open_flags) {
    return iosig_prepare_path_call(signature, path, open_flags);
}

IOSIG_EXPORT int iosig_runtime_active(void) {
    return iosig_active_call();
}
