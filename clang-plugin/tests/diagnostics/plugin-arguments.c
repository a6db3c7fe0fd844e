// Plugin arguments: unknown ones are errors, `help` lists them, `remarks` reports every rewrite.
// RUN: not %clang_plugin -fsyntax-only -fplugin-arg-iosig-bogus %s 2>&1 | FileCheck --check-prefix=BOGUS %s
// RUN: %clang_plugin -fsyntax-only -fplugin-arg-iosig-help %s 2>&1 | FileCheck --check-prefix=HELP %s
// RUN: %clang_plugin -fsyntax-only -fplugin-arg-iosig-remarks -Xclang -verify %s
// BOGUS: error: iosig plugin: unknown plugin argument 'bogus'
// HELP: -fplugin-arg-iosig-ARG
// HELP: remarks

extern int open(const char *path, int flags, ...);

int f(const char *path) {
#pragma sig random size-per-IO(4096)
    return open(path, 0); // expected-remark {{iosig: 'open' opens with signature "random size-per-io(4K)"}}
}
