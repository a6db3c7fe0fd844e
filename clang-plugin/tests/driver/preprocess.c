// The plugin registers its pragma handlers only when an AST is built, so `clang -E` with the plugin
// loaded passes `#pragma sig` through untouched, and compiling the preprocessed output (ccache,
// distcc, -save-temps) still rewrites.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %clang_plugin -E %s -o %t/pre.i
// RUN: FileCheck --check-prefix=PRE --input-file=%t/pre.i %s
// RUN: %clang_plugin -O0 -S -emit-llvm %t/pre.i -o - | FileCheck %s
// RUN: cd %t && %clang_plugin -save-temps -O0 -S -emit-llvm %s -o %t/saved.ll
// RUN: FileCheck --input-file=%t/saved.ll %s
// RUN: FileCheck --input-file=%t/saved.ll --check-prefix=STR %s
// PRE: #pragma sigdef scratch random temp
// PRE: #pragma sig scratch size-per-IO(4K)
// PRE: #pragma sig sequential persist

#pragma sigdef scratch random temp
extern int open(const char *path, int flags, ...);
extern int creat(const char *path, unsigned mode);

// CHECK-LABEL: define {{.*}}@f(
int f(const char *p) {
#pragma sig scratch size-per-IO(4K)
    int fd = open(p, 0);
    // CHECK: @iosig_open(ptr noundef @{{.*}}, ptr
#pragma sig sequential persist
    return fd + creat(p, 0600);
    // CHECK: @iosig_creat(ptr noundef @{{.*}}, ptr
}
// STR-DAG: c"random temp size-per-io(4K)\00"
// STR-DAG: c"sequential persist\00"
