// The signature language's costs: the runtime parses the canonical text the Clang plugin embeds on
// every redirected open, the shim resolves rule signatures, the plugin parses each pragma once.
// Run: build/bench/bench_signature --benchmark-samples 200   (docs/performance.md, "selector:
// signature language"). On a loaded machine, build/bench/bench_signature "[minimum]" prints the
// minimum time per call over 300 batches of 200 calls, which other load can only make larger.
#define CATCH_CONFIG_MAIN
#include "iosig/signature.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>

namespace {

using namespace iosig;

// The paper's evaluation signatures, as people write them and as the plugin hands them on.
constexpr std::string_view written = "random MTTDL(20y) size-per-IO(512K) totalsize(1G)";
constexpr std::string_view canonical = "random size-per-io(512K) totalsize(1G) mttdl(20y)";
constexpr std::string_view everything =
    "global sequential persist size-per-io(16M) totalsize(6G) mttdl(20y) "
    "availability(1e-6) archive tamperproof";
constexpr std::string_view wrong = "sequental persist size-per-IO(16Q) temp MTTDL(20)";

SigdefTable table_of_21() {
    SigdefTable t;
    for (int i = 0; i < 20; ++i)
        t.define("def" + std::to_string(i), *parse_signature(everything).value);
    t.define("ckpt", *parse_signature("sequential persist size-per-IO(64M)").value);
    return t;
}

template <class F>
void print_minimum(const char* what, F&& call) {
    double best = 1e300;
    for (int batch = 0; batch < 300; ++batch) {
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < 200; ++i) {
            auto result = call();
            asm volatile("" : : "r"(&result) : "memory"); // keep the call
        }
        const std::chrono::duration<double, std::nano> took =
            std::chrono::steady_clock::now() - start;
        best = std::min(best, took.count() / 200);
    }
    std::printf("%-52s %7.0f ns\n", what, best);
}

} // namespace

TEST_CASE("signature parsing", "[signature]") {
    const SigdefTable table = table_of_21();
    const Signature full = *parse_signature(everything).value;
    REQUIRE(parse_signature(canonical));
    REQUIRE_FALSE(parse_signature(wrong));

    BENCHMARK("parse_signature: canonical, 4 parameters") {
        return parse_signature(canonical);
    };
    BENCHMARK("parse_signature: as written, 4 parameters") {
        return parse_signature(written);
    };
    BENCHMARK("parse_signature: canonical, all 9 parameters") {
        return parse_signature(everything);
    };
    BENCHMARK("parse_signature: 4 errors with suggestions") {
        return parse_signature(wrong);
    };
    BENCHMARK("resolve_sig: NAME among 21 definitions + override") {
        return resolve_sig("sig ckpt temp", table);
    };
    BENCHMARK("resolve_sig: unknown NAME, suggestion among 21") {
        return resolve_sig("sig ckp temp", table);
    };
    BENCHMARK("to_canonical: all 9 parameters") {
        return to_canonical(full);
    };
}

TEST_CASE("signature parsing, minimum per call", "[.][minimum]") {
    const SigdefTable table = table_of_21();
    const Signature full = *parse_signature(everything).value;
    print_minimum("parse_signature: canonical, 4 parameters",
                  [] { return parse_signature(canonical); });
    print_minimum("parse_signature: as written, 4 parameters",
                  [] { return parse_signature(written); });
    print_minimum("parse_signature: canonical, all 9 parameters",
                  [] { return parse_signature(everything); });
    print_minimum("parse_signature: 4 errors with suggestions",
                  [] { return parse_signature(wrong); });
    print_minimum("resolve_sig: NAME among 21 definitions + override",
                  [&] { return resolve_sig("sig ckpt temp", table); });
    print_minimum("resolve_sig: unknown NAME, suggestion among 21",
                  [&] { return resolve_sig("sig ckp temp", table); });
    print_minimum("to_canonical: all 9 parameters", [&] { return to_canonical(full); });
}
