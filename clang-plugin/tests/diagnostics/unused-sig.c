// -Wiosig-unused-sig: a `#pragma sig` whose next statement contains no supported open call, or that
// no statement follows, or that stands before something other than a statement.
// RUN: %clang_plugin -fsyntax-only -Xclang -verify %s
// The switches Clang uses for its own warnings (Clang 19 also says "unknown warning option" for the
// -W spelling, because it checks before loading plugins; the plugin-argument spelling avoids that).
// RUN: %clang_plugin -fsyntax-only -fplugin-arg-iosig-Wno-unused-sig -Xclang -verify=off %s
// RUN: %clang_plugin -fsyntax-only -Wno-unknown-warning-option -Wno-iosig-unused-sig -Xclang -verify=off %s
// RUN: %clang_plugin -fsyntax-only -w -Xclang -verify=off %s
// RUN: not %clang_plugin -fsyntax-only -Werror -fno-caret-diagnostics %s 2>&1 | FileCheck --check-prefix=WERROR %s
// RUN: not %clang_plugin -fsyntax-only -Wno-unknown-warning-option -Werror=iosig-unused-sig %s 2>&1 \
// RUN:     | FileCheck --check-prefix=WERROR %s
// RUN: not %clang_plugin -fsyntax-only -fplugin-arg-iosig-Werror=unused-sig %s 2>&1 \
// RUN:     | FileCheck --check-prefix=WERROR %s
// RUN: %clang_plugin -fsyntax-only -Werror -fplugin-arg-iosig-Wno-error=unused-sig %s 2>&1 \
// RUN:     | FileCheck --check-prefix=WARN %s
// RUN: %clang_plugin -fsyntax-only -fno-caret-diagnostics -fno-diagnostics-show-option %s 2>&1 \
// RUN:     | FileCheck --check-prefix=NOFLAG %s
// off-no-diagnostics
// WERROR: error: '#pragma sig' has no effect: the next statement contains no supported open call [-Werror,-Wiosig-unused-sig]
// WARN: warning: '#pragma sig' has no effect: the next statement contains no supported open call [-Wiosig-unused-sig]
// WARN-NOT: error:
// NOFLAG: warning: '#pragma sig' has no effect: the next statement contains no supported open call{{$}}

extern int open(const char *path, int flags, ...);
extern int close(int fd);
static int open_local(const char *path) { return path != 0; }

int statements(const char *path, int fd) {
// expected-warning@+1 {{the next statement contains no supported open call}}
#pragma sig random
    close(fd);  // expected-note {{the next statement is here}}

// The next statement only: the open after it is not annotated.
// expected-warning@+1 {{the next statement contains no supported open call}}
#pragma sig random
    fd = open_local(path);  // expected-note {{the next statement is here}}
    fd = open(path, 0);

// An if statement's own expressions are its condition (and init); its branches are statements of
// their own.
// expected-warning@+1 {{the next statement contains no supported open call}}
#pragma sig random
    if (fd > 0) {  // expected-note {{the next statement is here}}
        fd = open(path, 0);
    }

    {
        fd = open(path, 0);
// expected-warning@+1 {{no statement follows it in the same block}}
#pragma sig temp
    }
    fd = open(path, 0);

// A pragma before a block annotates the block's first statement: no warning.
#pragma sig temp
    {
        fd = open(path, 0);
    }
    return fd;
// expected-warning@+1 {{no statement follows it in the same block}}
#pragma sig temp
}

// At namespace scope a pragma can only annotate a variable's initialiser.
// expected-warning@+1 {{it must precede a statement, or a variable whose initialiser opens a file}}
#pragma sig random
int after_function(const char *path) {  // expected-note {{the next statement is here}}
    return open(path, 0);
}

struct record {
    int a;
// expected-warning@+1 {{no statement follows it in the same block}}
#pragma sig random
    int b;
};

// expected-warning@+1 {{no statement follows it in the same block}}
#pragma sig persist
