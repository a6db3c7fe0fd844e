// A `#pragma sig NAME` whose NAME is not defined (yet) is an error at NAME, with a fix-it when a
// defined name is close. sigdefs are visible from their definition to the end of the translation unit.
// RUN: %clang_plugin -fsyntax-only -Xclang -verify %s
// RUN: not %clang_plugin -fsyntax-only -fdiagnostics-parseable-fixits %s 2>&1 \
// RUN:     | FileCheck %s

extern int open(const char *path, int flags, ...);

int before_definition(void) {
// expected-error@+1 {{'checkpoint'}}
#pragma sig checkpoint temp
    return open("x", 0);
}

#pragma sigdef checkpoint sequential persist size-per-IO(16M)
#pragma sigdef scratch random temp

int after_definition(void) {
    int fd = 0;
#pragma sig checkpoint temp
    fd += open("a", 0);
// expected-error@+1 {{did you mean 'checkpoint'}}
#pragma sig chekpoint
// CHECK: undefined-name.c:[[@LINE-1]]:13: error: {{.*}}'chekpoint'{{.*}}did you mean 'checkpoint'
// CHECK: fix-it:"{{.*}}":{[[@LINE-2]]:13-[[@LINE-2]]:22}:"checkpoint"
    fd += open("b", 0);
// expected-error@+1 {{did you mean 'scratch'}}
#pragma sig scrach size-per-IO(4K)
    fd += open("c", 0);
// Nothing close: an error without a fix-it.
// expected-error@+1 {{'nothinglikeit'}}
#pragma sig nothinglikeit
// CHECK: undefined-name.c:[[@LINE-1]]:13: error: {{.*}}'nothinglikeit'
// CHECK-NOT: fix-it:{{.*}}:{[[@LINE-2]]:
    fd += open("d", 0);
    return fd;
}
