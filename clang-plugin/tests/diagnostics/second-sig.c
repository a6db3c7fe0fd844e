// Two `#pragma sig` for one statement: an error at the second, a note at the first. (Several opens in
// one statement all take the statement's one signature.)
// RUN: %clang_plugin -fsyntax-only -Xclang -verify %s

extern int open(const char *path, int flags, ...);

int twice(const char *path) {
#pragma sig random // expected-note {{previous '#pragma sig' for this statement is here}}
// expected-error@+1 {{a second '#pragma sig' for the same statement}}
#pragma sig sequential
    return open(path, 0);
}

int both_opens_one_pragma(const char *a, const char *b) {
#pragma sig random temp
    return open(a, 0) + open(b, 0);
}
