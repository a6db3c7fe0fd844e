/* Descriptor lifetime: the slot of a descriptor is cleared before the real close (so a racing open
 * that reuses the number is never mistaken for the old file) and copied after a successful dup. */
#include "real.h"
#include "shim.h"

#include <stdarg.h>

IOSIG_EXPORT int close(int fd) {
    if (IOSIG_UNLIKELY(iosig_tracked_fd(fd) != 0)) iosig_fd_closing(fd);
    return IOSIG_REAL(close)(fd);
}

IOSIG_EXPORT int close_range(unsigned int first, unsigned int last, int flags) {
    /* CLOSE_RANGE_CLOEXEC only marks them: they stay open (and tracked) until exec. */
    const int result = IOSIG_REAL(close_range)(first, last, flags);
    if (result == 0 && (flags & 4 /* CLOSE_RANGE_CLOEXEC */) == 0)
        iosig_fd_range_closing(first, last);
    return result;
}

IOSIG_EXPORT void closefrom(int lowest) {
    if (lowest >= 0) iosig_fd_range_closing((unsigned)lowest, ~0U);
    IOSIG_REAL(closefrom)(lowest);
}

IOSIG_EXPORT int dup(int fd) {
    const int result = IOSIG_REAL(dup)(fd);
    if (result >= 0) iosig_fd_duplicated(fd, result);
    return result;
}

IOSIG_EXPORT int dup2(int fd, int target) {
    if (fd != target && iosig_tracked_fd(target)) iosig_fd_closing(target);
    const int result = IOSIG_REAL(dup2)(fd, target);
    if (result >= 0 && fd != target) iosig_fd_duplicated(fd, result);
    return result;
}

IOSIG_EXPORT int dup3(int fd, int target, int flags) {
    if (fd != target && iosig_tracked_fd(target)) iosig_fd_closing(target);
    const int result = IOSIG_REAL(dup3)(fd, target, flags);
    if (result >= 0) iosig_fd_duplicated(fd, result);
    return result;
}

/* The third argument is an int or a pointer; on x86-64 and aarch64 both travel in one register, so
 * reading it as a pointer-sized integer and passing it on is exact for every command. */
#define IOSIG_FCNTL(name)                                                                          \
    IOSIG_EXPORT int name(int fd, int command, ...) {                                              \
        va_list ap;                                                                                \
        va_start(ap, command);                                                                     \
        const unsigned long argument = va_arg(ap, unsigned long);                                  \
        va_end(ap);                                                                                \
        const int result = IOSIG_REAL(name)(fd, command, argument);                                \
        if (result >= 0 && (command == F_DUPFD || command == F_DUPFD_CLOEXEC))                     \
            iosig_fd_duplicated(fd, result);                                                       \
        return result;                                                                             \
    }
IOSIG_FCNTL(fcntl)
IOSIG_FCNTL(fcntl64)
