/* Deleting or renaming a redirected file acts on its symlink; iosig_unlink_call/iosig_rename_call
 * keep the staged data and the journal consistent with what the program meant (docs/preload.md). */
#include "real.h"
#include "shim.h"

IOSIG_EXPORT int unlink(const char* path) {
    if (iosig_reentry) return IOSIG_REAL(unlink)(path);
    return iosig_unlink_call(AT_FDCWD, path, 0, IOSIG_UNLINK);
}

IOSIG_EXPORT int unlinkat(int dirfd, const char* path, int flags) {
    if (iosig_reentry) return IOSIG_REAL(unlinkat)(dirfd, path, flags);
    return iosig_unlink_call(dirfd, path, flags, IOSIG_UNLINKAT);
}

IOSIG_EXPORT int remove(const char* path) {
    if (iosig_reentry) return IOSIG_REAL(remove)(path);
    return iosig_unlink_call(AT_FDCWD, path, 0, IOSIG_REMOVE);
}

IOSIG_EXPORT int rename(const char* oldpath, const char* newpath) {
    if (iosig_reentry) return IOSIG_REAL(rename)(oldpath, newpath);
    return iosig_rename_call(AT_FDCWD, oldpath, AT_FDCWD, newpath, 0, IOSIG_RENAME);
}

IOSIG_EXPORT int renameat(int olddirfd, const char* oldpath, int newdirfd, const char* newpath) {
    if (iosig_reentry) return IOSIG_REAL(renameat)(olddirfd, oldpath, newdirfd, newpath);
    return iosig_rename_call(olddirfd, oldpath, newdirfd, newpath, 0, IOSIG_RENAMEAT);
}

IOSIG_EXPORT int renameat2(int olddirfd, const char* oldpath, int newdirfd, const char* newpath,
                           unsigned int flags) {
    if (iosig_reentry) return IOSIG_REAL(renameat2)(olddirfd, oldpath, newdirfd, newpath, flags);
    return iosig_rename_call(olddirfd, oldpath, newdirfd, newpath, flags, IOSIG_RENAMEAT2);
}
