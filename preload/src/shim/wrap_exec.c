/* exec replaces the process image without running exit handlers: the report of what this image did
 * is written first. If exec fails the counts already reported are cleared, so nothing counts twice.
 * The new image inherits LD_PRELOAD and IOSIG_* through the environment like any other variable. */
#include "real.h"
#include "shim.h"

#include <errno.h>
#include <stdarg.h>

#define IOSIG_EXEC(name, params, call)                                                             \
    IOSIG_EXPORT int name params {                                                                 \
        if (!iosig_reentry) iosig_before_exec();                                                   \
        const int result = IOSIG_REAL(name) call;                                                  \
        const int saved_errno = errno;                                                             \
        if (!iosig_reentry) iosig_exec_failed();                                                   \
        errno = saved_errno;                                                                       \
        return result;                                                                             \
    }
IOSIG_EXEC(execve, (const char* path, char* const argv[], char* const envp[]), (path, argv, envp))
IOSIG_EXEC(execv, (const char* path, char* const argv[]), (path, argv))
IOSIG_EXEC(execvp, (const char* file, char* const argv[]), (file, argv))
IOSIG_EXEC(execvpe, (const char* file, char* const argv[], char* const envp[]), (file, argv, envp))
IOSIG_EXEC(fexecve, (int fd, char* const argv[], char* const envp[]), (fd, argv, envp))
IOSIG_EXEC(execveat,
           (int dirfd, const char* path, char* const argv[], char* const envp[], int flags),
           (dirfd, path, argv, envp, flags))

/* The list forms collect their arguments like glibc does and use the vector forms above. */
#define IOSIG_COLLECT_ARGS(first, argv, envp_out)                                                  \
    va_list ap;                                                                                    \
    size_t count = 1;                                                                              \
    va_start(ap, first);                                                                           \
    while (va_arg(ap, const char*) != 0)                                                           \
        ++count;                                                                                   \
    va_end(ap);                                                                                    \
    const char* argv[count + 1];                                                                   \
    argv[0] = first;                                                                               \
    va_start(ap, first);                                                                           \
    for (size_t i = 1; i <= count; ++i)                                                            \
        argv[i] = va_arg(ap, const char*);                                                         \
    envp_out;                                                                                      \
    va_end(ap);

IOSIG_EXPORT int execl(const char* path, const char* arg, ...) {
    IOSIG_COLLECT_ARGS(arg, argv, (void)0)
    return execv(path, (char* const*)argv);
}

IOSIG_EXPORT int execlp(const char* file, const char* arg, ...) {
    IOSIG_COLLECT_ARGS(arg, argv, (void)0)
    return execvp(file, (char* const*)argv);
}

IOSIG_EXPORT int execle(const char* path, const char* arg, ...) {
    char* const* envp;
    IOSIG_COLLECT_ARGS(arg, argv, envp = va_arg(ap, char* const*))
    return execve(path, (char* const*)argv, envp);
}
