// Where an annotated open can stand: declarations, if/while/for conditions, assignments, returns,
// expression statements, unbraced bodies, case labels, macros (around the call, or carrying the pragma
// itself through _Pragma), several opens in one statement. The path expression's side effects happen
// once, before the runtime check.
// RUN: %clang_plugin -O0 -S -emit-llvm -fplugin-arg-iosig-remarks -Xclang -verify -o %t.ll %s
// RUN: FileCheck --input-file=%t.ll %s

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

const char *next_path(void);
int next_flags(void);

// CHECK-LABEL: define {{.*}}@declaration(
int declaration(void) {
#pragma sig random
    int fd = open(next_path(), next_flags()), other = 0; // expected-remark {{'open' opens with signature "random"}}
    // CHECK: %[[P:.*]] = call ptr @next_path()
    // CHECK-NOT: @next_path
    // CHECK: %[[F:.*]] = call i32 @next_flags()
    // CHECK-NOT: @next_path
    // CHECK-NOT: @next_flags
    // CHECK: icmp ne ptr @iosig_open, null
    // CHECK: @iosig_open(ptr noundef @{{.*}}, ptr noundef %[[P]], i32 noundef %[[F]])
    // CHECK: @open(ptr noundef %[[P]], i32 noundef %[[F]])
    // CHECK-NOT: @next_
    // CHECK: ret i32
    return fd + other;
}

// CHECK-LABEL: define {{.*}}@if_condition(
int if_condition(const char *p) {
    int fd;
#pragma sig temp
    if ((fd = open(p, O_RDONLY)) < 0) // expected-remark {{'open' opens}}
        return -1;
    // CHECK: @iosig_open(
    return fd;
}

// CHECK-LABEL: define {{.*}}@loops(
int loops(const char *const *paths, int n) {
    int total = 0, fd = 0;
#pragma sig temp
    for (int i = open(paths[0], O_RDONLY); i < n; ++i) // expected-remark {{'open' opens}}
        total += i;
    // CHECK: @iosig_open(
#pragma sig temp
    while ((fd = open(paths[1], O_RDONLY)) < 0) // expected-remark {{'open' opens}}
        --n;
    // CHECK: @iosig_open(
    for (int i = 0; i < n; ++i)
#pragma sig temp
        total += open(paths[i], O_RDONLY); // expected-remark {{'open' opens}}
    // CHECK: @iosig_open(
    return total + fd;
}

// CHECK-LABEL: define {{.*}}@assignment_and_statement(
void assignment_and_statement(const char *p, FILE **out) {
#pragma sig persist
    *out = fopen(p, "w"); // expected-remark {{'fopen' opens}}
    // CHECK: @iosig_fopen(
#pragma sig temp
    open(p, O_RDONLY); // expected-remark {{'open' opens}}
    // CHECK: @iosig_open(
}

// CHECK-LABEL: define {{.*}}@switch_case(
int switch_case(int which, const char *p) {
    switch (which) {
    case 1:
#pragma sig random
        return open(p, O_RDONLY); // expected-remark {{'open' opens}}
        // CHECK: @iosig_open(
    default:
        return -1;
    }
}

// Both opens of one statement take its signature.
// CHECK-LABEL: define {{.*}}@two_in_one(
FILE *two_in_one(int c, const char *a, const char *b) {
#pragma sig random temp
    return c ? fopen(a, "r") : fopen(b, "r"); // expected-remark 2 {{'fopen' opens}}
    // CHECK: @iosig_fopen(
    // CHECK: @iosig_fopen(
}

#define OPEN_READ(path) open((path), O_RDONLY)
// CHECK-LABEL: define {{.*}}@through_macro(
int through_macro(const char *p) {
#pragma sig random
    return OPEN_READ(p); // expected-remark {{'open' opens}}
    // CHECK: @iosig_open(
}

// The pragma inside a macro, parameterised by macro arguments (stringised after expansion).
#define IOSIG_STR(x) #x
#define IOSIG_PRAGMA(x) _Pragma(IOSIG_STR(x))
#define SIG(params) IOSIG_PRAGMA(sig params)
#define CHUNK 512K
// CHECK-LABEL: define {{.*}}@pragma_from_macro(
int pragma_from_macro(const char *p) {
    SIG(random size-per-IO(CHUNK))
    return open(p, O_RDONLY); // expected-remark {{'open' opens with signature "random size-per-io(512K)"}}
    // CHECK: @iosig_open(
}
#define OPEN_ANNOTATED(fd, path) \
    _Pragma("sig sequential") fd = open(path, O_RDONLY)
// CHECK-LABEL: define {{.*}}@pragma_and_call_in_one_macro(
int pragma_and_call_in_one_macro(const char *p) {
    int fd;
    OPEN_ANNOTATED(fd, p); // expected-remark {{'open' opens with signature "sequential"}}
    // CHECK: @iosig_open(
    return fd;
}

// Unannotated: untouched.
// CHECK-LABEL: define {{.*}}@after_annotated(
int after_annotated(const char *p) {
    int a, b;
#pragma sig random
    a = open(p, O_RDONLY); // expected-remark {{'open' opens}}
    b = open(p, O_RDONLY);
    // CHECK: @iosig_open(
    // CHECK: @open(
    // CHECK-NOT: iosig
    // CHECK: ret i32
    return a + b;
}
