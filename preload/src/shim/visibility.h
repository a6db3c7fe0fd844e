/* Symbols of libiosig.so are hidden unless they are an interposed libc function or the runtime ABI
 * (exports.map); IOSIG_HIDDEN also lets the compiler use direct, PLT-free calls between our files.
 */
#ifndef IOSIG_SHIM_VISIBILITY_H
#define IOSIG_SHIM_VISIBILITY_H

#define IOSIG_HIDDEN __attribute__((visibility("hidden")))
#define IOSIG_EXPORT __attribute__((visibility("default")))
#define IOSIG_INITIAL_EXEC __attribute__((tls_model("initial-exec")))
#define IOSIG_LIKELY(x) __builtin_expect(!!(x), 1)
#define IOSIG_UNLIKELY(x) __builtin_expect(!!(x), 0)

#endif
