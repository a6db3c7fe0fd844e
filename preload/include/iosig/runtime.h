/* iosig runtime entry points: the stable C ABI that calls rewritten by the Clang plugin use.
 *
 * Each function takes the canonical signature text (from `#pragma sig`, see docs/signatures.md)
 * followed by exactly the arguments of the call it replaces, and returns exactly what that call
 * would return, with the same errno behaviour. A signature given here takes precedence over rule
 * files. When iosig cannot or need not redirect (file exists, no config, any internal failure) the
 * call is performed unchanged.
 *
 * The symbols are defined by libiosig.so (LD_PRELOAD or linked with -liosig). Code built by the
 * plugin references them weakly and falls back to the plain call when they are absent, so the
 * program also runs with no iosig runtime at all.
 *
 * ABI version: IOSIG_RUNTIME_ABI. Additions only; nothing here changes meaning once released.
 */
#ifndef IOSIG_RUNTIME_H
#define IOSIG_RUNTIME_H

#include <stdio.h>
#include <sys/types.h>

#define IOSIG_RUNTIME_ABI 1

#ifdef __cplusplus
extern "C" {
#endif

/* `mode` is read only when flags contain O_CREAT or O_TMPFILE, as for open(2). */
int iosig_open(const char* signature, const char* path, int flags, ...);
int iosig_open64(const char* signature, const char* path, int flags, ...);
int iosig_openat(const char* signature, int dirfd, const char* path, int flags, ...);
int iosig_openat64(const char* signature, int dirfd, const char* path, int flags, ...);
int iosig_creat(const char* signature, const char* path, mode_t mode);
int iosig_creat64(const char* signature, const char* path, mode_t mode);
FILE* iosig_fopen(const char* signature, const char* path, const char* mode);
FILE* iosig_fopen64(const char* signature, const char* path, const char* mode);
FILE* iosig_freopen(const char* signature, const char* path, const char* mode, FILE* stream);
FILE* iosig_freopen64(const char* signature, const char* path, const char* mode, FILE* stream);

/* For opens the runtime cannot wrap call-for-call (C++ fstreams): if `path` does not exist yet and
 * the signature selects another mount, create the staged file and plant the symlink at `path` now,
 * so the caller's own open follows it. `open_flags` describe the caller's intent
 * (O_CREAT|O_TRUNC|O_WRONLY...). Returns `path` itself in every case; never fails. */
const char* iosig_prepare_path(const char* signature, const char* path, int open_flags);

/* Non-zero when a runtime is present and active in this process (config loaded, not disabled). */
int iosig_runtime_active(void);

#ifdef __cplusplus
}
#endif

#endif /* IOSIG_RUNTIME_H */
