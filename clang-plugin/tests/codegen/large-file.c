// _FILE_OFFSET_BITS=64 makes glibc's open/fopen/... link to open64/fopen64/... (asm labels): the
// rewrite follows the symbol the call really links to.
// RUN: %clang_plugin -D_FILE_OFFSET_BITS=64 -O0 -S -emit-llvm -o - %s | FileCheck %s
// RUN: %clang_plugin -D_FILE_OFFSET_BITS=64 -O2 -D_FORTIFY_SOURCE=2 -S -emit-llvm -o - %s \
// RUN:     | FileCheck --check-prefix=OPT %s

#include <fcntl.h>
#include <stdio.h>

// CHECK-LABEL: define {{.*}}@annotated(
// OPT-LABEL: define {{.*}}@annotated(
int annotated(const char *p, int dir, FILE *s) {
    int total = 0;
#pragma sig random
    total += open(p, O_RDONLY);
    // CHECK: @iosig_open64(ptr noundef @{{.*}}, ptr noundef %[[P:[0-9]+]], i32 noundef 0)
    // CHECK: @open64(ptr noundef %[[P]], i32 noundef 0)
    // OPT: @iosig_open64(
    // OPT: @open64(
#pragma sig random
    total += openat(dir, p, O_RDONLY);
    // CHECK: @iosig_openat64(
    // CHECK: @openat64(
#pragma sig random
    total += creat(p, 0600);
    // CHECK: @iosig_creat64(
    // CHECK: @creat64(
#pragma sig random
    total += fopen(p, "r") != 0;
    // CHECK: @iosig_fopen64(
    // CHECK: @fopen64(
#pragma sig random
    total += freopen(p, "r", s) != 0;
    // CHECK: @iosig_freopen64(
    // CHECK: @freopen64(
    return total;
}
