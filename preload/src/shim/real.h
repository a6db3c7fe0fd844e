/* The functions libiosig.so wraps, as found further down the library search order (RTLD_NEXT), so
 * that other preloaded libraries keep working. Each pointer is resolved on first use, which may
 * come before our constructor runs (another library's constructor opening a file).
 *
 * IOSIG_REAL(name)(args) calls the next definition of `name`. */
#ifndef IOSIG_SHIM_REAL_H
#define IOSIG_SHIM_REAL_H

#include "visibility.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/sendfile.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Returns the next definition of `name`, stored into *slot; a stub failing with ENOSYS if there is
 * none (or if resolution re-entered itself on this thread). */
IOSIG_HIDDEN void* iosig_resolve(void** slot, const char* name);

#define IOSIG_REAL(name)                                                                           \
    (__builtin_expect(iosig_real_##name != 0, 1)                                                   \
         ? iosig_real_##name                                                                       \
         : (__typeof__(iosig_real_##name))iosig_resolve((void**)&iosig_real_##name, #name))

#define IOSIG_REAL_FUNCTIONS(X)                                                                    \
    X(int, open, (const char*, int, ...))                                                          \
    X(int, open64, (const char*, int, ...))                                                        \
    X(int, openat, (int, const char*, int, ...))                                                   \
    X(int, openat64, (int, const char*, int, ...))                                                 \
    X(int, __open_2, (const char*, int))                                                           \
    X(int, __open64_2, (const char*, int))                                                         \
    X(int, __openat_2, (int, const char*, int))                                                    \
    X(int, __openat64_2, (int, const char*, int))                                                  \
    X(int, creat, (const char*, mode_t))                                                           \
    X(int, creat64, (const char*, mode_t))                                                         \
    X(FILE*, fopen, (const char*, const char*))                                                    \
    X(FILE*, fopen64, (const char*, const char*))                                                  \
    X(FILE*, freopen, (const char*, const char*, FILE*))                                           \
    X(FILE*, freopen64, (const char*, const char*, FILE*))                                         \
    X(FILE*, fdopen, (int, const char*))                                                           \
    X(int, fclose, (FILE*))                                                                        \
    X(int, fcloseall, (void))                                                                      \
    X(int, mkstemp, (char*))                                                                       \
    X(int, mkstemp64, (char*))                                                                     \
    X(int, mkostemp, (char*, int))                                                                 \
    X(int, mkostemp64, (char*, int))                                                               \
    X(int, mkstemps, (char*, int))                                                                 \
    X(int, mkostemps, (char*, int, int))                                                           \
    X(ssize_t, write, (int, const void*, size_t))                                                  \
    X(ssize_t, __write, (int, const void*, size_t))                                                \
    X(ssize_t, pwrite, (int, const void*, size_t, off_t))                                          \
    X(ssize_t, pwrite64, (int, const void*, size_t, off64_t))                                      \
    X(ssize_t, writev, (int, const struct iovec*, int))                                            \
    X(ssize_t, pwritev, (int, const struct iovec*, int, off_t))                                    \
    X(ssize_t, pwritev64, (int, const struct iovec*, int, off64_t))                                \
    X(ssize_t, pwritev2, (int, const struct iovec*, int, off_t, int))                              \
    X(ssize_t, pwritev64v2, (int, const struct iovec*, int, off64_t, int))                         \
    X(ssize_t, copy_file_range, (int, off64_t*, int, off64_t*, size_t, unsigned int))              \
    X(ssize_t, sendfile, (int, int, off_t*, size_t))                                               \
    X(ssize_t, sendfile64, (int, int, off64_t*, size_t))                                           \
    X(ssize_t, splice, (int, off64_t*, int, off64_t*, size_t, unsigned int))                       \
    X(size_t, fwrite, (const void*, size_t, size_t, FILE*))                                        \
    X(size_t, fwrite_unlocked, (const void*, size_t, size_t, FILE*))                               \
    X(int, fputs, (const char*, FILE*))                                                            \
    X(int, fputs_unlocked, (const char*, FILE*))                                                   \
    X(int, fputc, (int, FILE*))                                                                    \
    X(int, fputc_unlocked, (int, FILE*))                                                           \
    X(int, putc, (int, FILE*))                                                                     \
    X(int, putc_unlocked, (int, FILE*))                                                            \
    X(int, _IO_putc, (int, FILE*))                                                                 \
    X(int, puts, (const char*))                                                                    \
    X(int, putchar, (int))                                                                         \
    X(int, putchar_unlocked, (int))                                                                \
    X(int, vfprintf, (FILE*, const char*, va_list))                                                \
    X(int, __vfprintf_chk, (FILE*, int, const char*, va_list))                                     \
    X(int, vprintf, (const char*, va_list))                                                        \
    X(int, __vprintf_chk, (int, const char*, va_list))                                             \
    X(int, vdprintf, (int, const char*, va_list))                                                  \
    X(int, __vdprintf_chk, (int, int, const char*, va_list))                                       \
    X(int, fflush, (FILE*))                                                                        \
    X(int, fflush_unlocked, (FILE*))                                                               \
    X(int, fseek, (FILE*, long, int))                                                              \
    X(int, fseeko, (FILE*, off_t, int))                                                            \
    X(int, fseeko64, (FILE*, off64_t, int))                                                        \
    X(int, fsetpos, (FILE*, const fpos_t*))                                                        \
    X(int, fsetpos64, (FILE*, const fpos64_t*))                                                    \
    X(void, rewind, (FILE*))                                                                       \
    X(off_t, lseek, (int, off_t, int))                                                             \
    X(off64_t, lseek64, (int, off64_t, int))                                                       \
    X(int, fsync, (int))                                                                           \
    X(int, fdatasync, (int))                                                                       \
    X(int, close, (int))                                                                           \
    X(int, close_range, (unsigned int, unsigned int, int))                                         \
    X(void, closefrom, (int))                                                                      \
    X(int, dup, (int))                                                                             \
    X(int, dup2, (int, int))                                                                       \
    X(int, dup3, (int, int, int))                                                                  \
    X(int, fcntl, (int, int, ...))                                                                 \
    X(int, fcntl64, (int, int, ...))                                                               \
    X(int, unlink, (const char*))                                                                  \
    X(int, unlinkat, (int, const char*, int))                                                      \
    X(int, remove, (const char*))                                                                  \
    X(int, rename, (const char*, const char*))                                                     \
    X(int, renameat, (int, const char*, int, const char*))                                         \
    X(int, renameat2, (int, const char*, int, const char*, unsigned int))                          \
    X(int, execve, (const char*, char* const[], char* const[]))                                    \
    X(int, execv, (const char*, char* const[]))                                                    \
    X(int, execvp, (const char*, char* const[]))                                                   \
    X(int, execvpe, (const char*, char* const[], char* const[]))                                   \
    X(int, fexecve, (int, char* const[], char* const[]))                                           \
    X(int, execveat, (int, const char*, char* const[], char* const[], int))                        \
    X(void, _exit, (int))                                                                          \
    X(void, _Exit, (int))

#define IOSIG_DECLARE_REAL(ret, name, params) IOSIG_HIDDEN extern ret(*iosig_real_##name) params;
IOSIG_REAL_FUNCTIONS(IOSIG_DECLARE_REAL)
#undef IOSIG_DECLARE_REAL

#ifdef __cplusplus
}
#endif

#endif /* IOSIG_SHIM_REAL_H */
