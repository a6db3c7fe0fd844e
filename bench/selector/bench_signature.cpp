// The signature language's costs: the runtime parses the canonical text the Clang plugin embeds on
// every redirected open, the shim resolves rule signatures, the plugin parses each pragma once.
// Run: build/bench/bench_signature --benchmark-samples 200   (docs/performance.md, "selector:
// signature language")
#define CATCH_CONFIG_MAIN
#include "iosig/signature.hpp"

#include <catch2/catch.hpp>

namespace {

using namespace iosig;

// The paper's evaluation signatures, as people write them and as the plugin hands them on.
constexpr std::string_view written = "random MTTDL(20y) size-per-IO(512K) totalsize(1G)";
constexpr std::string_view canonical = "random size-per-io(512K) totalsize(1G) mttdl(20y)";
constexpr std::string_view everything =
    "global sequential persist size-per-io(16M) totalsize(6G) mttdl(20y) "
    "availability(1e-6) archive tamperproof";
constexpr std::string_view wrong = "sequental persist size-per-IO(16Q) temp MTTDL(20)";

} // namespace

TEST_CASE("signature parsing", "[signature]") {
    const SigdefTable table = [] {
        SigdefTable t;
        for (int i = 0; i < 20; ++i)
            t.define("def" + std::to_string(i), *parse_signature(everything).value);
        t.define("ckpt", *parse_signature("sequential persist size-per-IO(64M)").value);
        return t;
    }();
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
