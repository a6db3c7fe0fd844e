// Applying every fix-it (clang -Xclang -fixit) turns each typo into the intended signature, and the
// fixed file compiles with the plugin without a single diagnostic.
// RUN: %clang_plugin -fsyntax-only -Xclang -verify %s
// RUN: cp %s %t.c
// RUN: not %clang_plugin -fsyntax-only -Xclang -fixit %t.c
// RUN: FileCheck --input-file=%t.c %s
// RUN: %clang_plugin -fsyntax-only -Werror %t.c

extern int open(const char *path, int flags, ...);

#pragma sigdef checkpoint sequential persist size-per-IO(16M)
// CHECK: #pragma sigdef checkpoint sequential persist size-per-IO(16M)

int typos(void) {
    int fd = 0;
// expected-error@+3 {{did you mean 'random'}}
// expected-error@+2 {{spelled 'size-per-IO'}}
// expected-error@+1 {{unknown size unit}}
#pragma sig radnom  size_per_io(512K) totalsize(1Q)
// CHECK: #pragma sig random  size-per-IO(512K) totalsize(1{{[KMGTP]}})
    fd += open("a", 0);
// expected-error@+1 {{did you mean 'checkpoint'}}
#pragma sig chekpoint temp
// CHECK: #pragma sig checkpoint temp
    fd += open("b", 0);
// expected-error@+2 {{U+2013}}
// expected-error@+1 {{unexpected '@'}}
#pragma sig sequential size–per-IO(1G) @ persist
// CHECK: #pragma sig sequential size-per-IO(1G) persist
    fd += open("c", 0);
    return fd;
}
