/* _exit and _Exit end a process without exit handlers or destructors (dash ends every shell that
 * way): the report is written here. exit() itself reaches our destructor instead. */
#include "real.h"
#include "shim.h"

#include <stdlib.h>
#include <unistd.h>

IOSIG_EXPORT void _exit(int status) {
    if (!iosig_reentry) iosig_exiting();
    IOSIG_REAL(_exit)(status);
    __builtin_unreachable();
}

IOSIG_EXPORT void _Exit(int status) {
    if (!iosig_reentry) iosig_exiting();
    IOSIG_REAL(_Exit)(status);
    __builtin_unreachable();
}
