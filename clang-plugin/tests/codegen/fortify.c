// Fortifying C libraries put a wrapper in front of open: an always-inline gnu_inline definition of
// `open` (GCC-style glibc, glibc >= 2.40 for Clang) or an asm label to __open_2. The annotated call
// goes to the runtime; without the runtime, the program still runs the (fortified) call it wrote.
// RUN: %clang_plugin -O2 -S -emit-llvm -o - %s | FileCheck %s
// RUN: %clang_plugin -O2 -S -emit-llvm -DLABEL -o - %s | FileCheck --check-prefix=LABEL %s

#ifdef LABEL
// A header that routes the two-argument open to the checking entry point.
extern int open(const char *path, int flags) __asm__("__open_2");
#else
extern int __open_2(const char *path, int flags);
extern int __open_real(const char *path, int flags, ...) __asm__("open");
extern __inline __attribute__((__always_inline__, __gnu_inline__)) int open(const char *path,
                                                                            int flags, ...) {
    return __open_2(path, flags);
}
#endif

// CHECK-LABEL: define {{.*}}@annotated(
// LABEL-LABEL: define {{.*}}@annotated(
int annotated(const char *p) {
#pragma sig random temp
    return open(p, 0);
    // CHECK: icmp eq ptr @iosig_open, null
    // CHECK: call i32 (ptr, ptr, i32, ...) @iosig_open(ptr noundef nonnull @{{.*}}, ptr noundef %0, i32 noundef 0)
    // CHECK: call i32 @__open_2(ptr noundef %0, i32 noundef 0)
    // LABEL: call i32 (ptr, ptr, i32, ...) @iosig_open(ptr noundef nonnull @{{.*}}, ptr noundef %0, i32 noundef 0)
    // LABEL: call i32 @__open_2(ptr noundef %0, i32 noundef 0)
}
