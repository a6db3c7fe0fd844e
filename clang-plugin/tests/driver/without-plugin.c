// Annotated sources build with any compiler without the plugin: the pragmas are only unknown pragmas
// (a warning under -Wunknown-pragmas / -Wall), and nothing is rewritten.
// RUN: %clang -Wall -O0 -S -emit-llvm %s -o - 2>%t.err | FileCheck --check-prefix=IR %s
// RUN: FileCheck --check-prefix=CLANG --input-file=%t.err %s
// RUN: %clang -Werror -O0 -c %s -o %t.o
// RUN: %if gcc %{ %gcc -Wall -O2 -c %s -o %t.gcc.o 2>%t.gcc.err %}
// RUN: %if gcc %{ FileCheck --check-prefix=GCC --input-file=%t.gcc.err %s %}
// CLANG: warning: unknown pragma ignored [-Wunknown-pragmas]
// CLANG-NOT: error
// GCC: warning: ignoring '#pragma sig
// GCC-NOT: error
// IR-NOT: iosig

#include <fcntl.h>
#pragma sigdef scratch random temp

int f(const char *p) {
#pragma sig scratch size-per-IO(4K)
    return open(p, O_RDONLY);
}
