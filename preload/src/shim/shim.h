/* The interface between the C wrappers (wrap_*.c) and the C++ engine of libiosig.so.
 *
 * Hot path: a write-family wrapper looks up the descriptor in iosig_slots (one relaxed load, no
 * lock, no allocation). Untracked descriptors go straight to the real function; tracked ones are
 * counted by iosig_count_* (plain stores into the owning thread's counters or one atomic add, see
 * stats.hpp). */
#ifndef IOSIG_SHIM_H
#define IOSIG_SHIM_H

#include "visibility.h"

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IOSIG_MAX_FD 65536 /* descriptors at or above this are never tracked (documented) */

struct iosig_file;

IOSIG_HIDDEN extern struct iosig_file* iosig_slots[IOSIG_MAX_FD];

/* Non-zero while iosig itself runs on this thread: wrappers then go straight to the real function.
 */
IOSIG_HIDDEN extern __thread int iosig_reentry IOSIG_INITIAL_EXEC;

static inline struct iosig_file* iosig_tracked_fd(int fd) {
    return (unsigned)fd < IOSIG_MAX_FD ? __atomic_load_n(&iosig_slots[fd], __ATOMIC_ACQUIRE) : 0;
}

static inline struct iosig_file* iosig_tracked_stream(FILE* stream) {
    return stream ? iosig_tracked_fd(stream->_fileno) : 0;
}

enum iosig_family {
    IOSIG_FAMILY_WRITE,  /* write */
    IOSIG_FAMILY_PWRITE, /* pwrite, pwrite64 */
    IOSIG_FAMILY_VECTOR, /* writev, pwritev* */
    IOSIG_FAMILY_STDIO,  /* fwrite, fputs, fputc, putc, printf family, puts, putchar */
    IOSIG_FAMILY_COPY,   /* copy_file_range, sendfile, splice (bytes arriving in the file) */
    IOSIG_FAMILY_COUNT
};

/* Offsets passed to iosig_count_write besides a real file offset. */
#define IOSIG_AT_CURSOR (-1LL) /* the descriptor's file position */
#define IOSIG_AT_STREAM (-2LL) /* a stdio stream: sequential unless it was repositioned */

/* Start of a sampled call timing: non-zero for one call in 64 per thread, and for a file's first.
 */
IOSIG_HIDDEN uint64_t iosig_clock_sample(struct iosig_file* file);
/* Stdio calls are tens of nanoseconds and a timed call costs two clock reads (~50 ns here), so they
 * are timed rarely: the first call of each thread and every 1024th after it; the report scales the
 * sampled time to all calls. The decision is a thread-local tick, inline. */
/* Per-thread state the write paths read, kept together so that one TLS offset load reaches both. */
struct iosig_thread_state {
    int tid;             /* gettid() once known, 0 before (and in a fresh fork child) */
    unsigned stdio_tick; /* stdio calls made by this thread */
};
IOSIG_HIDDEN extern __thread struct iosig_thread_state iosig_thread IOSIG_INITIAL_EXEC;
IOSIG_HIDDEN uint64_t iosig_clock_now(void);
static inline uint64_t iosig_stdio_clock_sample(void) {
    return (iosig_thread.stdio_tick++ & 1023u) == 0 ? iosig_clock_now() : 0;
}
/* Unsampled start (rare, slow calls: fsync, flush). */
IOSIG_HIDDEN uint64_t iosig_clock_now(void);
/* A flush of a tracked stream: counted with its time, not its bytes. */
IOSIG_HIDDEN void iosig_count_time(struct iosig_file* file, uint64_t started);
/* Never changes errno. */
IOSIG_HIDDEN void iosig_count_write(struct iosig_file* file, enum iosig_family family,
                                    long long offset, long long result, uint64_t started);
/* A stdio write of `bytes` at the stream's position (fast path for the owning thread). */
IOSIG_HIDDEN void iosig_count_stdio(struct iosig_file* file, uint64_t bytes, uint64_t started);
IOSIG_HIDDEN void iosig_count_fsync(struct iosig_file* file, int fd, uint64_t started);
IOSIG_HIDDEN void iosig_note_seek(struct iosig_file* file, long long position);
IOSIG_HIDDEN void iosig_note_stream_seek(struct iosig_file* file);

/* Descriptor bookkeeping (called before the real close, after a successful dup). */
IOSIG_HIDDEN void iosig_fd_closing(int fd);
IOSIG_HIDDEN void iosig_fd_range_closing(unsigned lowest, unsigned highest);
IOSIG_HIDDEN void iosig_fd_duplicated(int oldfd, int newfd);

/* Opens. `signature` is NULL for intercepted calls, the pragma's text for the runtime ABI. Each
 * either redirects (and returns the staged file's descriptor / stream) or makes the original call.
 */
enum iosig_open_api {
    IOSIG_API_OPEN,
    IOSIG_API_OPEN64,
    IOSIG_API_OPENAT,
    IOSIG_API_OPENAT64,
    IOSIG_API_OPEN_2,
    IOSIG_API_OPEN64_2,
    IOSIG_API_OPENAT_2,
    IOSIG_API_OPENAT64_2,
    IOSIG_API_CREAT,
    IOSIG_API_CREAT64,
};
IOSIG_HIDDEN int iosig_open_call(enum iosig_open_api api, const char* signature, int dirfd,
                                 const char* path, int flags, mode_t mode);
IOSIG_HIDDEN FILE* iosig_fopen_call(int large, const char* signature, const char* path,
                                    const char* mode);
IOSIG_HIDDEN FILE* iosig_freopen_call(int large, const char* signature, const char* path,
                                      const char* mode, FILE* stream);
IOSIG_HIDDEN FILE* iosig_fdopen_call(int fd, const char* mode);
IOSIG_HIDDEN int iosig_fclose_call(FILE* stream);
/* mkstemp family: `real_result` is the descriptor the real call returned for `template_path`. */
IOSIG_HIDDEN int iosig_mkstemp_done(int fd, const char* path, int flags);

/* Paths: the program deletes or renames a file. */
enum { IOSIG_UNLINK, IOSIG_UNLINKAT, IOSIG_REMOVE };
enum { IOSIG_RENAME, IOSIG_RENAMEAT, IOSIG_RENAMEAT2 };
IOSIG_HIDDEN int iosig_unlink_call(int dirfd, const char* path, int flags, int api);
IOSIG_HIDDEN int iosig_rename_call(int olddirfd, const char* oldpath, int newdirfd,
                                   const char* newpath, unsigned flags, int api);

/* The image is about to be replaced by exec: write this process's report now. */
IOSIG_HIDDEN void iosig_before_exec(void);
IOSIG_HIDDEN void iosig_exec_failed(void);
/* The process ends through _exit/_Exit: write its report. */
IOSIG_HIDDEN void iosig_exiting(void);

/* ENOSPC on a redirected descriptor: move the file home and return the descriptor to retry on, or
 * -1 to let the error through (see docs/preload.md, "When a destination fills up"). */
IOSIG_HIDDEN int iosig_relocate_after_enospc(struct iosig_file* file, int fd);

#ifdef __cplusplus
}
#endif

#endif /* IOSIG_SHIM_H */
