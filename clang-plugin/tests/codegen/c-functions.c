// Each supported C function, annotated, calls its runtime entry point with the canonical signature
// followed by exactly the original arguments (the same SSA values: evaluated once), and falls back to
// the original call when the weak entry point is absent.
// RUN: %clang_plugin -D_GNU_SOURCE -O0 -S -emit-llvm -o %t.ll %s
// RUN: FileCheck --input-file=%t.ll %s
// RUN: FileCheck --input-file=%t.ll --check-prefix=DECL %s
// RUN: FileCheck --input-file=%t.ll --check-prefix=STR %s

#include <fcntl.h>
#include <stdio.h>

// STR-DAG: private unnamed_addr constant [28 x i8] c"random temp size-per-io(4K)\00"
// STR-DAG: c"sequential persist size-per-io(16M) totalsize(6G)\00"
// STR-DAG: c"global random size-per-io(512K) totalsize(1G)\00"
// STR-DAG: c"random size-per-io(512K) totalsize(1G) mttdl(20y)\00"

// DECL-DAG: declare extern_weak i32 @iosig_open(ptr noundef, ptr noundef, i32 noundef, ...)
// DECL-DAG: declare extern_weak i32 @iosig_open64(ptr noundef, ptr noundef, i32 noundef, ...)
// DECL-DAG: declare extern_weak i32 @iosig_openat(ptr noundef, i32 noundef, ptr noundef, i32 noundef, ...)
// DECL-DAG: declare extern_weak i32 @iosig_openat64(ptr noundef, i32 noundef, ptr noundef, i32 noundef, ...)
// DECL-DAG: declare extern_weak i32 @iosig_creat(ptr noundef, ptr noundef, i32 noundef)
// DECL-DAG: declare extern_weak i32 @iosig_creat64(ptr noundef, ptr noundef, i32 noundef)
// DECL-DAG: declare extern_weak ptr @iosig_fopen(ptr noundef, ptr noundef, ptr noundef)
// DECL-DAG: declare extern_weak ptr @iosig_fopen64(ptr noundef, ptr noundef, ptr noundef)
// DECL-DAG: declare extern_weak ptr @iosig_freopen(ptr noundef, ptr noundef, ptr noundef, ptr noundef)
// DECL-DAG: declare extern_weak ptr @iosig_freopen64(ptr noundef, ptr noundef, ptr noundef, ptr noundef)

// CHECK-LABEL: define {{.*}}i32 @use_open(
int use_open(const char *p, int flags) {
#pragma sig random temp size-per-IO(4096)
    return open(p, flags | O_CREAT, 0600);
    // CHECK: %[[P:[0-9]+]] = load ptr, ptr %{{.*}}
    // CHECK: %[[F:[0-9]+]] = or i32 %{{.*}}, 64
    // CHECK: icmp ne ptr @iosig_open, null
    // CHECK: call i32 (ptr, ptr, i32, ...) @iosig_open(ptr noundef @{{.*}}, ptr noundef %[[P]], i32 noundef %[[F]], i32 noundef 384)
    // CHECK: call i32 (ptr, i32, ...) @open(ptr noundef %[[P]], i32 noundef %[[F]], i32 noundef 384)
}

// CHECK-LABEL: define {{.*}}i32 @use_open_two_args(
int use_open_two_args(const char *p) {
#pragma sig random
    return open(p, O_RDONLY);
    // CHECK: call i32 (ptr, ptr, i32, ...) @iosig_open(ptr noundef @{{.*}}, ptr noundef %[[P:[0-9]+]], i32 noundef 0)
    // CHECK: call i32 (ptr, i32, ...) @open(ptr noundef %[[P]], i32 noundef 0)
}

// CHECK-LABEL: define {{.*}}i32 @use_open64(
int use_open64(const char *p) {
#pragma sig sequential persist size-per-IO(16M) totalsize(6G)
    return open64(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    // CHECK: call i32 (ptr, ptr, i32, ...) @iosig_open64(ptr noundef @{{.*}}, ptr noundef %[[P:[0-9]+]], i32 noundef 577, i32 noundef 420)
    // CHECK: call i32 (ptr, i32, ...) @open64(ptr noundef %[[P]], i32 noundef 577, i32 noundef 420)
}

// CHECK-LABEL: define {{.*}}i32 @use_openat(
int use_openat(int dir, const char *p) {
#pragma sig global random size-per-IO(512K) totalsize(1G)
    return openat(dir, p, O_RDWR);
    // CHECK: call i32 (ptr, i32, ptr, i32, ...) @iosig_openat(ptr noundef @{{.*}}, i32 noundef %[[D:[0-9]+]], ptr noundef %[[P:[0-9]+]], i32 noundef 2)
    // CHECK: call i32 (i32, ptr, i32, ...) @openat(i32 noundef %[[D]], ptr noundef %[[P]], i32 noundef 2)
}

// CHECK-LABEL: define {{.*}}i32 @use_openat64(
int use_openat64(int dir, const char *p) {
#pragma sig random MTTDL(20y) size-per-IO(512K) totalsize(1G)
    return openat64(dir, p, O_CREAT | O_WRONLY, 0600);
    // CHECK: call i32 (ptr, i32, ptr, i32, ...) @iosig_openat64(ptr noundef @{{.*}}, i32 noundef %[[D:[0-9]+]], ptr noundef %[[P:[0-9]+]], i32 noundef 65, i32 noundef 384)
    // CHECK: call i32 (i32, ptr, i32, ...) @openat64(i32 noundef %[[D]], ptr noundef %[[P]], i32 noundef 65, i32 noundef 384)
}

// CHECK-LABEL: define {{.*}}i32 @use_creat(
int use_creat(const char *p) {
#pragma sig temp
    return creat(p, 0640);
    // CHECK: call i32 @iosig_creat(ptr noundef @{{.*}}, ptr noundef %[[P:[0-9]+]], i32 noundef 416)
    // CHECK: call i32 @creat(ptr noundef %[[P]], i32 noundef 416)
}

// CHECK-LABEL: define {{.*}}i32 @use_creat64(
int use_creat64(const char *p) {
#pragma sig temp
    return creat64(p, 0640);
    // CHECK: call i32 @iosig_creat64(ptr noundef @{{.*}}, ptr noundef %[[P:[0-9]+]], i32 noundef 416)
    // CHECK: call i32 @creat64(ptr noundef %[[P]], i32 noundef 416)
}

// CHECK-LABEL: define {{.*}}ptr @use_fopen(
FILE *use_fopen(const char *p, const char *mode) {
#pragma sig random temp size-per-IO(4K)
    return fopen(p, mode);
    // CHECK: call ptr @iosig_fopen(ptr noundef @{{.*}}, ptr noundef %[[P:[0-9]+]], ptr noundef %[[M:[0-9]+]])
    // CHECK: call {{.*}}ptr @fopen(ptr noundef %[[P]], ptr noundef %[[M]])
}

// CHECK-LABEL: define {{.*}}ptr @use_fopen64(
FILE *use_fopen64(const char *p) {
#pragma sig persist
    return fopen64(p, "w");
    // CHECK: call ptr @iosig_fopen64(ptr noundef @{{.*}}, ptr noundef %[[P:[0-9]+]], ptr noundef @[[W:.*]])
    // CHECK: call {{.*}}ptr @fopen64(ptr noundef %[[P]], ptr noundef @[[W]])
}

// CHECK-LABEL: define {{.*}}ptr @use_freopen(
FILE *use_freopen(const char *p, FILE *stream) {
#pragma sig persist
    return freopen(p, "a", stream);
    // CHECK: call ptr @iosig_freopen(ptr noundef @{{.*}}, ptr noundef %[[P:[0-9]+]], ptr noundef @{{.*}}, ptr noundef %[[S:[0-9]+]])
    // CHECK: call ptr @freopen(ptr noundef %[[P]], ptr noundef @{{.*}}, ptr noundef %[[S]])
}

// CHECK-LABEL: define {{.*}}ptr @use_freopen64(
FILE *use_freopen64(const char *p, FILE *stream) {
#pragma sig persist
    return freopen64(p, "a", stream);
    // CHECK: call ptr @iosig_freopen64(ptr noundef @{{.*}}, ptr noundef %[[P:[0-9]+]], ptr noundef @{{.*}}, ptr noundef %[[S:[0-9]+]])
    // CHECK: call ptr @freopen64(ptr noundef %[[P]], ptr noundef @{{.*}}, ptr noundef %[[S]])
}

// Unannotated calls are untouched.
// CHECK-LABEL: define {{.*}}i32 @unannotated(
int unannotated(const char *p) {
    FILE *f = fopen(p, "r");
    return open(p, O_RDONLY) + (f != 0);
    // CHECK-NOT: iosig
    // CHECK: call {{.*}}ptr @fopen(
    // CHECK-NOT: iosig
    // CHECK: call i32 (ptr, i32, ...) @open(
    // CHECK-NOT: iosig
    // CHECK: ret i32
}
