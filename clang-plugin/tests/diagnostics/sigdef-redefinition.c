// Redefining a sigdef is an error at the new NAME with a note at the first definition, also across
// headers; a definition in a header is visible to the rest of the translation unit. Include guards keep
// a header's sigdefs from being defined twice.
// RUN: %clang_plugin -fsyntax-only -I %inputs -Xclang -verify %s
// RUN: not %clang_plugin -fsyntax-only -fno-caret-diagnostics -I %inputs %s 2>&1 | FileCheck %s

#include "sigdefs.h"
#include "sigdefs.h"

extern int open(const char *path, int flags, ...);

int uses_header_names(void) {
#pragma sig journal size-per-IO(64K)
    int fd = open("log", 0);
#pragma sig table temp
    return fd + open("tab", 0);
}

// expected-note@sigdefs.h:4 {{previous definition is here}}
// expected-error@+1 {{redefinition of signature 'journal'}}
#pragma sigdef journal random
// CHECK: sigdef-redefinition.c:[[@LINE-1]]:16: error: redefinition of signature 'journal'
// CHECK-NEXT: sigdefs.h:4:16: note: previous definition is here

#pragma sigdef local_scratch local temp
// expected-note@-1 {{previous definition is here}}
// expected-error@redefines.h:2 {{redefinition of signature 'journal'}}
// expected-note@sigdefs.h:4 {{previous definition is here}}
#include "redefines.h"
// expected-error@+1 {{redefinition of signature 'local_scratch'}}
#pragma sigdef local_scratch local temp
// CHECK: redefines.h:2:16: error: redefinition of signature 'journal'
// CHECK-NEXT: sigdefs.h:4:16: note: previous definition is here
// CHECK: sigdef-redefinition.c:[[@LINE-3]]:16: error: redefinition of signature 'local_scratch'
// CHECK-NEXT: sigdef-redefinition.c:[[@LINE-10]]:16: note: previous definition is here
