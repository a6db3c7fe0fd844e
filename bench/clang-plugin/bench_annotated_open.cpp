// What an annotated open costs in a program built with the plugin: the same open+close of an
// existing file, plain and annotated. Without a runtime the annotation adds one test of a weak
// reference; run under LD_PRELOAD=libiosig.so it measures the runtime's path for a file it leaves
// where it is.
//   build/bench/bench_annotated_open                                       (no runtime)
//   LD_PRELOAD=build/lib/libiosig.so IOSIG_CONFIG=... build/bench/bench_annotated_open
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <string>
#include <unistd.h>

namespace {

std::string existing_file() {
    const std::string path = "/tmp/iosig-bench-annotated-open";
    std::ofstream(path) << "x";
    return path;
}

} // namespace

TEST_CASE("open and close an existing file") {
    const std::string path = existing_file();
    const char* name = path.c_str();

    BENCHMARK("open+close, not annotated") {
        const int fd = open(name, O_RDONLY);
        return close(fd);
    };
    BENCHMARK("open+close, #pragma sig random size-per-IO(4K)") {
        // clang-format off
#pragma sig random size-per-IO(4K)
        // clang-format on
        const int fd = open(name, O_RDONLY);
        return close(fd);
    };
    BENCHMARK("fopen+fclose, not annotated") {
        std::FILE* file = std::fopen(name, "r");
        return std::fclose(file);
    };
    BENCHMARK("fopen+fclose, #pragma sig random size-per-IO(4K)") {
        // clang-format off
#pragma sig random size-per-IO(4K)
        // clang-format on
        std::FILE* file = std::fopen(name, "r");
        return std::fclose(file);
    };
    BENCHMARK("ifstream, not annotated") {
        std::ifstream in(path);
        return in.good();
    };
    BENCHMARK("ifstream, #pragma sig random size-per-IO(4K)") {
        // clang-format off
#pragma sig random size-per-IO(4K)
        // clang-format on
        std::ifstream in(path);
        return in.good();
    };
}
