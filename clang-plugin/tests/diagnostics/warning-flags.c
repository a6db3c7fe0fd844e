// What docs/plugin.md says about -Wiosig-unused-sig on Clang 19, which gives plugins no warning
// groups: the plugin obeys the -W spellings itself, Clang first reports them as unknown (an error
// under -Werror) unless -Wno-unknown-warning-option is given, `#pragma clang diagnostic` cannot
// control it, and the plugin-argument spelling works without side effects.
// RUN: %clang_plugin -fsyntax-only -fno-caret-diagnostics %s 2>&1 | FileCheck --check-prefix=ON %s
// RUN: %clang_plugin -fsyntax-only -fno-caret-diagnostics -Wno-iosig-unused-sig %s 2>&1 \
// RUN:   | FileCheck --check-prefix=UNKNOWN --implicit-check-not=iosig-unused-sig] %s
// RUN: not %clang_plugin -fsyntax-only -fno-caret-diagnostics -Werror -Wno-iosig-unused-sig %s 2>&1 \
// RUN:   | FileCheck --check-prefix=UNKNOWN-ERROR %s
// RUN: %clang_plugin -fsyntax-only -Werror -Wno-unknown-warning-option -Wno-iosig-unused-sig %s 2>&1 \
// RUN:   | FileCheck --allow-empty --check-prefix=SILENT %s
// RUN: %clang_plugin -fsyntax-only -Werror -fplugin-arg-iosig-Wno-unused-sig %s 2>&1 \
// RUN:   | FileCheck --allow-empty --check-prefix=SILENT %s
// RUN: %clang_plugin -fsyntax-only -Wno-everything %s 2>&1 | FileCheck --allow-empty --check-prefix=SILENT %s
// RUN: %clang_plugin -fsyntax-only -fno-caret-diagnostics -Wno-everything -Wno-unknown-warning-option \
// RUN:   -Wiosig-unused-sig %s 2>&1 | FileCheck --check-prefix=ON %s
// RUN: %clang_plugin -fsyntax-only -fno-caret-diagnostics -DPRAGMA_DIAGNOSTIC %s 2>&1 \
// RUN:   | FileCheck --check-prefixes=PRAGMA,ON %s

// PRAGMA: warning-flags.c:[[@LINE+6]]:34: warning: unknown warning group '-Wiosig-unused-sig', ignored
// ON: warning-flags.c:[[@LINE+8]]:9: warning: '#pragma sig' has no effect: the next statement contains no supported open call [-Wiosig-unused-sig]
// UNKNOWN: warning: unknown warning option '-Wno-iosig-unused-sig'{{.*}}[-Wunknown-warning-option]
// UNKNOWN-ERROR: error: unknown warning option '-Wno-iosig-unused-sig'{{.*}}[-Werror,-Wunknown-warning-option]
// SILENT-NOT: {{.}}
#ifdef PRAGMA_DIAGNOSTIC
#pragma clang diagnostic ignored "-Wiosig-unused-sig"
#endif
int add_one(int x) {
#pragma sig random
    return x + 1;
}
