// Templates: the pattern is not rewritten; every instantiation is, including member functions of
// class templates, generic lambdas and templates instantiated before the enclosing function ends.
// RUN: %clangxx_plugin -std=c++17 -O0 -S -emit-llvm -fplugin-arg-iosig-remarks -Xclang -verify -o %t.ll %s
// RUN: FileCheck --input-file=%t.ll %s

#include <fcntl.h>

#include <cstdio>
#include <fstream>
#include <string>

template <class Path>
int open_template(Path path) {
#pragma sig random
    return ::open(path, O_RDONLY); // expected-remark 2 {{'open' opens with signature "random"}}
}
int use_template() {
    char buffer[] = "b";
    return open_template("a") + open_template(static_cast<char *>(buffer));
}
// CHECK-LABEL: define {{.*}}@_Z13open_templateIPKcEiT_(
// CHECK: @iosig_open(
// CHECK-LABEL: define {{.*}}@_Z13open_templateIPcEiT_(
// CHECK: @iosig_open(

template <class T>
struct Writer {
    std::FILE *open_log(const char *path) {
#pragma sig persist sequential
        return std::fopen(path, "a"); // expected-remark {{'fopen' opens}}
    }
    template <class Path>
    void open_stream(const Path &path) {
#pragma sig temp
        stream.open(path); // expected-remark {{'open' opens}}
    }
    std::ofstream stream;
};
void use_writer() {
    Writer<int> writer;
    std::fclose(writer.open_log("log"));
    writer.open_stream(std::string("s"));
}
// CHECK-LABEL: define {{.*}}@_ZN6WriterIiE8open_logEPKc(
// CHECK: @iosig_fopen(
// CHECK-LABEL: define {{.*}}@_ZN6WriterIiE11open_streamINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEEEvRKT_(
// CHECK: @iosig_prepare_path(

int use_generic_lambda(const char *p) {
    auto opener = [](auto path) {
#pragma sig random
        return ::open(path, O_RDONLY); // expected-remark {{'open' opens}}
    };
    return opener(p);
}
// CHECK-LABEL: define {{.*}}@"_ZZ18use_generic_lambdaPKcENK3$_0clIS0_EEDaT_"(
// CHECK: @iosig_open(
