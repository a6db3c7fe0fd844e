// The directive keywords are case-insensitive; a misspelt one whose rest is a valid signature is a
// typo (an error with a fix-it, then read as what it meant); any other unknown pragma is Clang's
// business as usual (-Wunknown-pragmas).
// RUN: %clang_plugin -fsyntax-only -Wunknown-pragmas -fplugin-arg-iosig-remarks -Xclang -verify %s
// RUN: not %clang_plugin -fsyntax-only -fdiagnostics-parseable-fixits %s 2>&1 | FileCheck %s
// RUN: cp %s %t.c && not %clang_plugin -fsyntax-only -Xclang -fixit %t.c
// RUN: FileCheck --check-prefix=FIXED --input-file=%t.c %s

extern int open(const char *path, int flags, ...);

// expected-error@+1 {{unknown pragma 'sigdeff'; did you mean 'sigdef'?}}
#pragma sigdeff ckpt sequential persist
// CHECK: pragma-name.c:[[@LINE-1]]:9: error: unknown pragma 'sigdeff'; did you mean 'sigdef'?
// CHECK: fix-it:"{{.*}}":{[[@LINE-2]]:9-[[@LINE-2]]:16}:"sigdef"
// FIXED: #pragma sigdef ckpt sequential persist
#pragma SIGDEF journal random

int f(const char *p) {
    int fd = 0;
// expected-error@+1 {{unknown pragma 'sgi'; did you mean 'sig'?}}
#pragma sgi random temp
    fd += open(p, 0);
// CHECK: pragma-name.c:[[@LINE-2]]:9: error: unknown pragma 'sgi'; did you mean 'sig'?
// CHECK: fix-it:"{{.*}}":{[[@LINE-3]]:9-[[@LINE-3]]:12}:"sig"
// FIXED: #pragma sig random temp
// The sigdef recovered from the typo is defined: no cascade of "unknown signature".
#pragma SIG ckpt temp
    fd += open(p, 0); // expected-remark {{'open' opens with signature "sequential temp"}}
#pragma Sig journal
    fd += open(p, 0); // expected-remark {{'open' opens with signature "random"}}
// Close to 'sig' but not followed by a signature: not ours.
#pragma six 1 // expected-warning {{unknown pragma ignored}}
#pragma big endian // expected-warning {{unknown pragma ignored}}
#pragma unrelated random // expected-warning {{unknown pragma ignored}}
    return fd;
}
