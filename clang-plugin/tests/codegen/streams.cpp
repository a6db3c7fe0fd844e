// C++ file streams keep their own open; after the operands are evaluated (each once, in order) and
// before the stream opens, iosig_prepare_path gets the canonical signature, the path and the open(2)
// flags the stream will use (from the openmode: folded when constant, computed when not).
// RUN: %clangxx_plugin -std=c++17 -O0 -S -emit-llvm -fplugin-arg-iosig-remarks -Xclang -verify -o %t.ll %s
// RUN: FileCheck --input-file=%t.ll %s
// RUN: FileCheck --input-file=%t.ll --check-prefix=DECL %s

#include <fcntl.h>

#include <filesystem>
#include <fstream>
#include <string>

// The openmode bits the plugin's flag table assumes (libstdc++ and libc++ agree).
static_assert(std::ios_base::app == 0x01 && std::ios_base::ate == 0x02 && std::ios_base::binary == 0x04 &&
              std::ios_base::in == 0x08 && std::ios_base::out == 0x10 && std::ios_base::trunc == 0x20);
static_assert(O_RDONLY == 0 && O_WRONLY == 1 && O_RDWR == 2 && O_CREAT == 64 && O_TRUNC == 512 &&
              O_APPEND == 1024);

// CHECK-LABEL: define {{.*}}@_Z12constructorsPKc(
void constructors(const char *p) {
#pragma sig random
    std::ofstream out(p); // expected-remark {{'basic_ofstream' opens with signature "random"}}
    // CHECK: %[[P:[0-9]+]] = load ptr
    // CHECK: icmp ne ptr @iosig_prepare_path, null
    // CHECK: call ptr @iosig_prepare_path(ptr noundef @{{.*}}, ptr noundef %[[P]], i32 noundef 577)
    // CHECK: call void @_ZNSt14basic_ofstreamIcSt11char_traitsIcEEC1EPKcSt13_Ios_Openmode(ptr {{.*}}, ptr noundef %[[P]], i32 noundef 16)
#pragma sig random
    std::ifstream in{p}; // expected-remark {{'basic_ifstream' opens}}
    // CHECK: call ptr @iosig_prepare_path(ptr noundef @{{.*}}, ptr noundef %{{.*}}, i32 noundef 0)
    // CHECK: {{call|invoke}} void @_ZNSt14basic_ifstreamIcSt11char_traitsIcEEC1EPKcSt13_Ios_Openmode(
#pragma sig random
    std::fstream both(p); // expected-remark {{'basic_fstream' opens}}
    // CHECK: call ptr @iosig_prepare_path(ptr noundef @{{.*}}, ptr noundef %{{.*}}, i32 noundef 2)
#pragma sig random
    std::ofstream appending(p, std::ios::app | std::ios::binary); // expected-remark {{'basic_ofstream' opens}}
    // CHECK: call ptr @iosig_prepare_path(ptr noundef @{{.*}}, ptr noundef %{{.*}}, i32 noundef 1089)
#pragma sig random
    std::ofstream updating(p, std::ios::in); // expected-remark {{'basic_ofstream' opens}}
    // CHECK: call ptr @iosig_prepare_path(ptr noundef @{{.*}}, ptr noundef %{{.*}}, i32 noundef 2)
#pragma sig random
    auto temporary = std::ofstream(p, std::ios::out | std::ios::trunc); // expected-remark {{'basic_ofstream' opens}}
    // CHECK: call ptr @iosig_prepare_path(ptr noundef @{{.*}}, ptr noundef %{{.*}}, i32 noundef 577)
#pragma sig random
    delete new std::fstream(p, std::ios::in | std::ios::out | std::ios::trunc); // expected-remark {{'basic_fstream' opens}}
    // CHECK: call ptr @iosig_prepare_path(ptr noundef @{{.*}}, ptr noundef %{{.*}}, i32 noundef 578)
    // CHECK: ret void
}

// CHECK-LABEL: define {{.*}}@_Z12string_pathsRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERKNSt10filesystem7__cxx114pathE(
void string_paths(const std::string &name, const std::filesystem::path &path) {
#pragma sig temp
    std::ofstream a(name); // expected-remark {{'basic_ofstream' opens}}
    // CHECK: %[[S:.*]] = call {{.*}}ptr @_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE5c_strEv(
    // CHECK: call ptr @iosig_prepare_path(ptr noundef @{{.*}}, ptr noundef %[[S]], i32 noundef 577)
    // CHECK: {{call|invoke}} void @_ZNSt14basic_ofstreamIcSt11char_traitsIcEEC1ERKNSt7__cxx1112basic_stringIcS1_SaIcEEESt13_Ios_Openmode(
#pragma sig temp
    std::ofstream b(name + ".suffix"); // expected-remark {{'basic_ofstream' opens}}
    // CHECK: {{call|invoke}} void @_ZStplIcSt11char_traitsIcESaIcEENSt7__cxx1112basic_stringIT_T0_T1_EERKS8_PKS5_(
    // CHECK-NOT: _ZStpl
    // CHECK: call ptr @iosig_prepare_path(
#pragma sig temp
    std::ifstream c(path); // expected-remark {{'basic_ifstream' opens}}
    // CHECK: %[[F:.*]] = {{call|invoke}} {{.*}}ptr @_ZNKSt10filesystem7__cxx114path5c_strEv(
    // CHECK: call ptr @iosig_prepare_path(ptr noundef @{{.*}}, ptr noundef %[[F]], i32 noundef 0)
    // CHECK: {{call|invoke}} void @_ZNSt14basic_ifstreamIcSt11char_traitsIcEEC1INSt10filesystem7__cxx114pathES6_EERKT_St13_Ios_Openmode(
}

int counter;
// The object expression and the arguments of .open are evaluated once each, in order.
// CHECK-LABEL: define {{.*}}@_Z11member_openPSt13basic_fstreamIcSt11char_traitsIcEEiRKNSt7__cxx1112basic_stringIcS1_SaIcEEESt13_Ios_Openmode(
void member_open(std::fstream *streams, int i, const std::string &name, std::ios_base::openmode mode) {
#pragma sig sequential
    streams[i++].open(name, mode); // expected-remark {{'open' opens with signature "sequential"}}
    // CHECK: add nsw i32 %{{.*}}, 1
    // CHECK-NOT: add nsw i32 %{{.*}}, 1
    // CHECK: %[[OBJ:.*]] = getelementptr inbounds %"class.std::basic_fstream"
    // CHECK: %[[MODE:.*]] = load i32
    // CHECK: icmp ne ptr @iosig_prepare_path, null
    // CHECK: and i32 %{{.*}}, 57
    // CHECK: call ptr @iosig_prepare_path(ptr noundef @{{.*}}, ptr noundef %{{.*}}, i32 noundef %{{.*}})
    // CHECK-NOT: add nsw i32 %{{.*}}, 1
    // CHECK: {{call|invoke}} void @_ZNSt13basic_fstreamIcSt11char_traitsIcEE4openERKNSt7__cxx1112basic_stringIcS1_SaIcEEESt13_Ios_Openmode(ptr {{.*}}%[[OBJ]], ptr {{.*}}, i32 noundef %[[MODE]])
    std::ofstream out;
#pragma sig temp
    out.open("fixed.txt", std::ios::app); // expected-remark {{'open' opens}}
    // CHECK: call ptr @iosig_prepare_path(ptr noundef @{{.*}}, ptr noundef @{{.*}}, i32 noundef 1089)
}

// C functions from C++ (std::fopen is ::fopen).
// CHECK-LABEL: define {{.*}}@_Z10c_from_cxxPKc(
int c_from_cxx(const char *p) {
#pragma sig random
    std::FILE *f = std::fopen(p, "r"); // expected-remark {{'fopen' opens}}
    // CHECK: call ptr @iosig_fopen(
#pragma sig random
    return ::open(p, O_RDONLY) + (f != nullptr); // expected-remark {{'open' opens}}
    // CHECK: call {{.*}}i32 (ptr, ptr, i32, ...) @iosig_open(
}

// Namespace-scope variables: the pragma annotates the dynamic initialiser.
#pragma sig persist
std::FILE *global_log = std::fopen("global.log", "a"); // expected-remark {{'fopen' opens}}
#pragma sig persist
std::ofstream global_stream("global.txt"); // expected-remark {{'basic_ofstream' opens}}
// CHECK-LABEL: define internal void @__cxx_global_var_init
// CHECK: call ptr @iosig_fopen(ptr noundef @{{.*}}, ptr noundef @{{.*}}, ptr noundef @{{.*}})
// CHECK-LABEL: define internal void @__cxx_global_var_init
// CHECK: call ptr @iosig_prepare_path(ptr noundef @{{.*}}, ptr noundef @{{.*}}, i32 noundef 577)

// The runtime's entry points are weak and never throw (no landing pads around them).
// DECL: declare extern_weak ptr @iosig_prepare_path(ptr noundef, ptr noundef, i32 noundef) {{.*}}#[[ATTR:[0-9]+]]
// DECL: attributes #[[ATTR]] = { nounwind
