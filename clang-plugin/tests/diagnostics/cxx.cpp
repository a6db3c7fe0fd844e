// C++: calls that only look like opens are left alone and said so; templates are checked per
// instantiation (a template never instantiated says nothing).
// RUN: %clangxx_plugin -std=c++17 -fsyntax-only -Xclang -verify %s

#include <fcntl.h>
#include <fstream>

namespace mine {
int open(const char *path, int flags);
struct Stream {
    void open(const char *path);
};
} // namespace mine

int lookalikes(const char *path) {
// expected-warning@+1 {{the next statement contains no supported open call}}
#pragma sig random
    int fd = mine::open(path, O_RDONLY);  // expected-note {{the next statement is here}} \
                                          // expected-note {{this 'open' is not the C library's}}
    mine::Stream stream;
// expected-warning@+1 {{the next statement contains no supported open call}}
#pragma sig random
    stream.open(path);  // expected-note {{the next statement is here}}
    return fd;
}

template <class T>
int never_instantiated(T path) {
#pragma sig random
    return path.size();
}

template <class T>
int instantiated_without_open(T value) {
// expected-warning@+1 {{the next statement contains no supported open call}}
#pragma sig random
    return value + 1;  // expected-note {{the next statement is here}}
}
int use_it() { return instantiated_without_open(1) + instantiated_without_open(2L); }

template <class T>
int instantiated_with_open(T path) {
#pragma sig random
    return ::open(path, O_RDONLY);
}
int use_open() { return instantiated_with_open("a") + instantiated_with_open(static_cast<char *>(nullptr)); }

struct Holder {
// expected-warning@+1 {{no statement follows it in the same block}}
#pragma sig random
    std::ofstream out;
};

int generic_lambda_never_called(const char *path) {
    auto opener = [](auto p) {
#pragma sig random
        return ::open(p, O_RDONLY);
    };
    (void)opener;
    return path != nullptr;
}

// Two pragmas for one statement of a template: one error, however many instantiations.
template <class T>
int twice_in_template(T path) {
#pragma sig random // expected-note {{previous '#pragma sig' for this statement is here}}
// expected-error@+1 {{a second '#pragma sig' for the same statement}}
#pragma sig temp
    return ::open(path, O_RDONLY);
}
int use_twice() { return twice_in_template("a") + twice_in_template(static_cast<char *>(nullptr)); }
