/* The write family. The untracked path is one load of iosig_slots[fd] and a tail call; the tracked
 * path samples the clock one call in IOSIG_TIME_SAMPLE and counts without locks or allocation. */
#include "real.h"
#include "shim.h"

#include <errno.h>

/* After ENOSPC on a redirected descriptor, retry once on the descriptor the file was moved to. */
#define IOSIG_RETRY_ON_ENOSPC(file, fd, result, call)                                              \
    if (IOSIG_UNLIKELY(result < 0) && errno == ENOSPC) {                                           \
        const int saved_errno = errno;                                                             \
        if (iosig_relocate_after_enospc(file, fd) >= 0) {                                          \
            file = iosig_tracked_fd(fd);                                                           \
            result = call;                                                                         \
        } else {                                                                                   \
            errno = saved_errno;                                                                   \
        }                                                                                          \
    }

#define IOSIG_FD_WRITE(ret, name, params, fd, family, offset, call)                                \
    IOSIG_EXPORT ret name params {                                                                 \
        struct iosig_file* file = iosig_tracked_fd(fd);                                            \
        if (IOSIG_LIKELY(file == 0)) return IOSIG_REAL(name) call;                                 \
        const uint64_t started = iosig_clock_sample(file);                                         \
        ret result = IOSIG_REAL(name) call;                                                        \
        IOSIG_RETRY_ON_ENOSPC(file, fd, result, IOSIG_REAL(name) call)                             \
        if (file) iosig_count_write(file, family, offset, (long long)result, started);             \
        return result;                                                                             \
    }

IOSIG_FD_WRITE(ssize_t, write, (int fd, const void* buf, size_t n), fd, IOSIG_FAMILY_WRITE,
               IOSIG_AT_CURSOR, (fd, buf, n))
IOSIG_FD_WRITE(ssize_t, __write, (int fd, const void* buf, size_t n), fd, IOSIG_FAMILY_WRITE,
               IOSIG_AT_CURSOR, (fd, buf, n))
IOSIG_FD_WRITE(ssize_t, pwrite, (int fd, const void* buf, size_t n, off_t offset), fd,
               IOSIG_FAMILY_PWRITE, (long long)offset, (fd, buf, n, offset))
IOSIG_FD_WRITE(ssize_t, pwrite64, (int fd, const void* buf, size_t n, off64_t offset), fd,
               IOSIG_FAMILY_PWRITE, (long long)offset, (fd, buf, n, offset))
IOSIG_FD_WRITE(ssize_t, writev, (int fd, const struct iovec* iov, int count), fd,
               IOSIG_FAMILY_VECTOR, IOSIG_AT_CURSOR, (fd, iov, count))
IOSIG_FD_WRITE(ssize_t, pwritev, (int fd, const struct iovec* iov, int count, off_t offset), fd,
               IOSIG_FAMILY_VECTOR, (long long)offset, (fd, iov, count, offset))
IOSIG_FD_WRITE(ssize_t, pwritev64, (int fd, const struct iovec* iov, int count, off64_t offset), fd,
               IOSIG_FAMILY_VECTOR, (long long)offset, (fd, iov, count, offset))
/* pwritev2 with offset -1 writes at the file position, like writev. */
IOSIG_FD_WRITE(ssize_t, pwritev2,
               (int fd, const struct iovec* iov, int count, off_t offset, int flags), fd,
               IOSIG_FAMILY_VECTOR, offset == -1 ? IOSIG_AT_CURSOR : (long long)offset,
               (fd, iov, count, offset, flags))
IOSIG_FD_WRITE(ssize_t, pwritev64v2,
               (int fd, const struct iovec* iov, int count, off64_t offset, int flags), fd,
               IOSIG_FAMILY_VECTOR, offset == -1 ? IOSIG_AT_CURSOR : (long long)offset,
               (fd, iov, count, offset, flags))

/* Copies into a tracked file: counted at the destination. */
#define IOSIG_COPY_OFFSET(pointer) ((pointer) ? (long long)*(pointer) : IOSIG_AT_CURSOR)

IOSIG_EXPORT ssize_t copy_file_range(int in, off64_t* in_offset, int out, off64_t* out_offset,
                                     size_t n, unsigned int flags) {
    struct iosig_file* file = iosig_tracked_fd(out);
    if (IOSIG_LIKELY(file == 0))
        return IOSIG_REAL(copy_file_range)(in, in_offset, out, out_offset, n, flags);
    const long long offset = IOSIG_COPY_OFFSET(out_offset);
    const uint64_t started = iosig_clock_sample(file);
    const ssize_t result = IOSIG_REAL(copy_file_range)(in, in_offset, out, out_offset, n, flags);
    iosig_count_write(file, IOSIG_FAMILY_COPY, offset, result, started);
    return result;
}

IOSIG_EXPORT ssize_t sendfile(int out, int in, off_t* in_offset, size_t n) {
    struct iosig_file* file = iosig_tracked_fd(out);
    if (IOSIG_LIKELY(file == 0)) return IOSIG_REAL(sendfile)(out, in, in_offset, n);
    const uint64_t started = iosig_clock_sample(file);
    const ssize_t result = IOSIG_REAL(sendfile)(out, in, in_offset, n);
    iosig_count_write(file, IOSIG_FAMILY_COPY, IOSIG_AT_CURSOR, result, started);
    return result;
}

IOSIG_EXPORT ssize_t sendfile64(int out, int in, off64_t* in_offset, size_t n) {
    struct iosig_file* file = iosig_tracked_fd(out);
    if (IOSIG_LIKELY(file == 0)) return IOSIG_REAL(sendfile64)(out, in, in_offset, n);
    const uint64_t started = iosig_clock_sample(file);
    const ssize_t result = IOSIG_REAL(sendfile64)(out, in, in_offset, n);
    iosig_count_write(file, IOSIG_FAMILY_COPY, IOSIG_AT_CURSOR, result, started);
    return result;
}

IOSIG_EXPORT ssize_t splice(int in, off64_t* in_offset, int out, off64_t* out_offset, size_t n,
                            unsigned int flags) {
    struct iosig_file* file = iosig_tracked_fd(out);
    if (IOSIG_LIKELY(file == 0))
        return IOSIG_REAL(splice)(in, in_offset, out, out_offset, n, flags);
    const long long offset = IOSIG_COPY_OFFSET(out_offset);
    const uint64_t started = iosig_clock_sample(file);
    const ssize_t result = IOSIG_REAL(splice)(in, in_offset, out, out_offset, n, flags);
    iosig_count_write(file, IOSIG_FAMILY_COPY, offset, result, started);
    return result;
}

IOSIG_EXPORT int fsync(int fd) {
    struct iosig_file* file = iosig_tracked_fd(fd);
    if (IOSIG_LIKELY(file == 0)) return IOSIG_REAL(fsync)(fd);
    const uint64_t started = iosig_clock_now();
    const int result = IOSIG_REAL(fsync)(fd);
    if (result == 0) iosig_count_fsync(file, fd, started);
    return result;
}

IOSIG_EXPORT int fdatasync(int fd) {
    struct iosig_file* file = iosig_tracked_fd(fd);
    if (IOSIG_LIKELY(file == 0)) return IOSIG_REAL(fdatasync)(fd);
    const uint64_t started = iosig_clock_now();
    const int result = IOSIG_REAL(fdatasync)(fd);
    if (result == 0) iosig_count_fsync(file, fd, started);
    return result;
}

IOSIG_EXPORT off_t lseek(int fd, off_t offset, int whence) {
    struct iosig_file* file = iosig_tracked_fd(fd);
    const off_t result = IOSIG_REAL(lseek)(fd, offset, whence);
    if (IOSIG_UNLIKELY(file != 0) && result >= 0) iosig_note_seek(file, (long long)result);
    return result;
}

IOSIG_EXPORT off64_t lseek64(int fd, off64_t offset, int whence) {
    struct iosig_file* file = iosig_tracked_fd(fd);
    const off64_t result = IOSIG_REAL(lseek64)(fd, offset, whence);
    if (IOSIG_UNLIKELY(file != 0) && result >= 0) iosig_note_seek(file, (long long)result);
    return result;
}
