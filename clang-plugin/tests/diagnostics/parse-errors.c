// Every error of the signature parser is a Clang error at the characters it is about; the fix-its the
// parser suggests are attached to the exact source range, even when the pragma is several tokens.
// RUN: %clang_plugin -fsyntax-only -ferror-limit=0 -Xclang -verify %s
// RUN: not %clang_plugin -fsyntax-only -ferror-limit=0 -fdiagnostics-parseable-fixits %s 2>&1 \
// RUN:     | FileCheck %s

// expected-error@+1 {{did you mean 'random'}}
#pragma sig radnom persist
// CHECK: parse-errors.c:[[@LINE-1]]:13: error: {{.*}}did you mean 'random'
// CHECK: fix-it:"{{.*}}parse-errors.c":{[[@LINE-2]]:13-[[@LINE-2]]:19}:"random"

// Tabs and runs of spaces between tokens do not shift the columns (Clang counts bytes).
// expected-error@+1 {{did you mean 'sequential'}}
#pragma   sig	 temp    sequental
// CHECK: parse-errors.c:[[@LINE-1]]:24: error: {{.*}}did you mean 'sequential'
// CHECK: fix-it:"{{.*}}":{[[@LINE-2]]:24-[[@LINE-2]]:33}:"sequential"

// A unit inside size-per-IO(...), eight tokens into the pragma.
// expected-error@+1 {{unknown size unit 'Q'}}
#pragma sig random size-per-IO(16Q)
// CHECK: parse-errors.c:[[@LINE-1]]:34: error: size-per-IO: unknown size unit 'Q'
// CHECK: fix-it:"{{.*}}":{[[@LINE-2]]:34-[[@LINE-2]]:35}:"M"

// expected-error@+1 {{is spelled 'size-per-IO'}}
#pragma sig size_per_io(4K) temp
// CHECK: parse-errors.c:[[@LINE-1]]:13: error: 'size_per_io' is spelled 'size-per-IO'
// CHECK: fix-it:"{{.*}}":{[[@LINE-2]]:13-[[@LINE-2]]:24}:"size-per-IO"

// A typographic hyphen (U+2010, three bytes) pasted from a PDF.
// expected-error@+2 {{U+2010}}
// expected-error@+1 {{U+2010}}
#pragma sig sequential size‐per‐IO(16M)
// CHECK: parse-errors.c:[[@LINE-1]]:28: error: U+2010
// CHECK: fix-it:"{{.*}}":{[[@LINE-2]]:28-[[@LINE-2]]:31}:"-"
// CHECK: parse-errors.c:[[@LINE-3]]:34: error: U+2010
// CHECK: fix-it:"{{.*}}":{[[@LINE-4]]:34-[[@LINE-4]]:37}:"-"

// expected-error@+1 {{contradicts the earlier 'random'}}
#pragma sig random persist sequential
// CHECK: parse-errors.c:[[@LINE-1]]:28: error: 'sequential' contradicts the earlier 'random'

// expected-error@+1 {{contradicts the earlier 'global'}}
#pragma sig global local
// CHECK: parse-errors.c:[[@LINE-1]]:20: error: 'local' contradicts

// expected-error@+1 {{given twice}}
#pragma sig size-per-IO(16M) random size-per-IO(4K)
// CHECK: parse-errors.c:[[@LINE-1]]:37: error: size-per-IO is given twice

// expected-error@+1 {{unterminated 'size-per-IO('}}
#pragma sig size-per-IO(
// expected-error@+1 {{needs a size}}
#pragma sig size-per-IO()
// expected-error@+1 {{takes its value in parentheses}}
#pragma sig size-per-IO 16M
// expected-error@+1 {{unknown duration unit 'x'}}
#pragma sig MTTDL(20x)
// expected-error@+1 {{strictly between 0 and 1}}
#pragma sig availability(2)
// expected-error@+1 {{unexpected '@'}}
#pragma sig random @ persist
// CHECK: parse-errors.c:[[@LINE-1]]:20: error: unexpected '@'
// expected-error@+2 {{unexpected '"'}}
// expected-error@+1 {{unexpected '"'}}
#pragma sig "random"

// sigdef needs a NAME; a value is not a parameter.
// expected-error@+1 {{sigdef needs a NAME}}
#pragma sigdef
// expected-error@+1 {{sigdef needs a NAME}}
#pragma sigdef random persist
// expected-error@+2 {{sigdef needs a NAME}}
// expected-error@+1 {{without its parameter}}
#pragma sigdef 16M
// expected-error@+1 {{did you mean 'persist'}}
#pragma sigdef ckpt sequential presist

// A pragma with errors applies to nothing and says so only once: no -Wiosig-unused-sig here.
int f(void) {
// expected-error@+1 {{did you mean 'temp'}}
#pragma sig tmep
    return 0;
}
// CHECK-NOT: warning:
