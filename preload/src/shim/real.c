/* Lazy RTLD_NEXT resolution. dlsym is never reached from a malloc-related path: iosig wraps no
 * allocator function, and a wrapper re-entered while dlsym runs on the same thread gets an ENOSYS
 * stub instead of recursing. */
#include "real.h"

#include <dlfcn.h>
#include <errno.h>

#define IOSIG_DEFINE_REAL(ret, name, params) ret(*iosig_real_##name) params = 0;
IOSIG_REAL_FUNCTIONS(IOSIG_DEFINE_REAL)
#undef IOSIG_DEFINE_REAL

static __thread int resolving IOSIG_INITIAL_EXEC;

/* Returned as the "real" function when there is none: int/ssize_t/void results all read -1/ENOSYS.
 */
static long missing_function(void) {
    errno = ENOSYS;
    return -1;
}

void* iosig_resolve(void** slot, const char* name) {
    if (resolving) return (void*)missing_function;
    resolving = 1;
    const int saved_errno = errno;
    void* found = dlsym(RTLD_NEXT, name);
    errno = saved_errno;
    resolving = 0;
    if (found == 0) return (void*)missing_function; /* not cached: a later call may find it */
    __atomic_store_n(slot, found, __ATOMIC_RELEASE);
    return found;
}
