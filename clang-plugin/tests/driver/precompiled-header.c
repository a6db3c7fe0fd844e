// A precompiled header built with the plugin carries its sigdefs to every TU that uses it, named
// exactly as in the header (hyphens and underscores included), with redefinitions reported against
// the header's line. A PCH built without the plugin has none: its NAMEs are undefined, and a note says why.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %clang_plugin -x c-header %inputs/pch-sigdefs.h -o %t/with.pch
// RUN: %clang_plugin -include-pch %t/with.pch -O0 -S -emit-llvm %s -o - | FileCheck %s
// RUN: not %clang_plugin -include-pch %t/with.pch -fsyntax-only -DREDEFINE %s 2>&1 \
// RUN:   | FileCheck --check-prefix=REDEF %s
// RUN: %clang -Wno-unknown-pragmas -x c-header %inputs/pch-sigdefs.h -o %t/without.pch
// RUN: not %clang_plugin -include-pch %t/without.pch -fsyntax-only %s 2>&1 \
// RUN:   | FileCheck --check-prefix=WITHOUT %s
// The same header included as source gives the same code.
// RUN: %clang_plugin -include %inputs/pch-sigdefs.h -O0 -S -emit-llvm %s -o - | FileCheck %s

// CHECK-DAG: c"sequential persist size-per-io(4K) totalsize(1G)\00"
// CHECK-DAG: c"random temp\00"

// CHECK-LABEL: define {{.*}}@journal(
int journal(const char *p) {
#pragma sig journal totalsize(1G)
    return open(p, 1);
    // CHECK: @iosig_open(ptr noundef @{{.*}}, ptr
}

// CHECK-LABEL: define {{.*}}@mesh(
int mesh(const char *p) {
#pragma sig mesh-out
    return open(p, 0);
    // CHECK: @iosig_open(ptr noundef @{{.*}}, ptr
}

// CHECK-LABEL: define {{.*}}@empty(
int empty(const char *p) {
#pragma sig _empty
    return open(p, 0);
    // CHECK: @iosig_open(ptr noundef @{{.*}}, ptr
}

#ifdef REDEFINE
#pragma sigdef mesh-out random
// REDEF: precompiled-header.c:[[@LINE-1]]:16: error: redefinition of signature 'mesh-out'
// REDEF: pch-sigdefs.h:3:16: note: previous definition is here
#endif

// WITHOUT: precompiled-header.c:20:13: error: 'journal' is neither a parameter nor a defined signature
// WITHOUT-NEXT: #pragma sig journal totalsize(1G)
// WITHOUT-NEXT: ^~~~~~~
// WITHOUT-NEXT: precompiled-header.c:20:13: note: the sigdefs of precompiled header '{{.*}}without.pch' are seen only if it was built with the iosig plugin
// WITHOUT: precompiled-header.c:27:13: error: 'mesh-out' is neither a parameter nor a defined signature
// WITHOUT: precompiled-header.c:34:13: error: '_empty' is neither a parameter nor a defined signature
