// The simulator's object mode reproduces libCacheSim's published miss counts on the cloudPhysics
// trace (NOTES.md "Cache eviction anchors"; libCacheSim test/test_evictionAlgo.c), byte for byte.
#include "iosig/tier/simulator.hpp"
#include "trace_fixture.hpp"

#include <array>
#include <gtest/gtest.h>

namespace iosig::tier {
namespace {

constexpr std::uint64_t MiB = 1024 * 1024;
constexpr std::array<std::uint64_t, 8> sizes_mib{128, 256, 384, 512, 640, 768, 896, 1024};
constexpr const char* oracle_file = "cloudPhysicsIO.oracleGeneral.bin";
constexpr std::uint64_t requests = 113872, request_bytes = 4368040448;

struct Golden {
    const char* policy;
    std::array<std::uint64_t, 8> misses;
    std::array<std::uint64_t, 8> miss_bytes;
};

constexpr Golden lru{"lru",
                     {93374, 89783, 83572, 81722, 72494, 72104, 71972, 71704},
                     {4214303232, 4061242368, 3778040320, 3660569600, 3100927488, 3078128640,
                      3075403776, 3061662720}};
constexpr Golden lfu{"lfu",
                     {91699, 86720, 78578, 76707, 69945, 66221, 64445, 64376},
                     {4158632960, 3917211648, 3536227840, 3455379968, 3035580416, 2801699328,
                      2699456000, 2696345600}};
constexpr Golden arc{"arc",
                     {90252, 85861, 78168, 74297, 67381, 65685, 64439, 64772},
                     {4068098560, 3821026816, 3525644800, 3296890368, 2868538880, 2771180032,
                      2699484672, 2712971264}};
constexpr Golden belady{"belady",
                        {79256, 70724, 65481, 61594, 59645, 57599, 50873, 48974},
                        {3472532480, 2995165696, 2726689792, 2537648128, 2403427840, 2269212672,
                         2134992896, 2029769728}};

SimResult run(const Trace& trace, const std::string& policy, std::uint64_t mib) {
    SimConfig config;
    config.policy = policy;
    config.cache_size = mib * MiB;
    return simulate(trace, config);
}

void expect_golden(const Golden& golden) {
    const Trace* trace = test_support::cloud_physics_oracle();
    IOSIG_REQUIRE_TRACE(trace, oracle_file);
    for (std::size_t i = 0; i < sizes_mib.size(); ++i) {
        const SimResult r = run(*trace, golden.policy, sizes_mib[i]);
        SCOPED_TRACE(::testing::Message() << golden.policy << " at " << sizes_mib[i] << " MiB");
        EXPECT_EQ(r.requests, requests);
        EXPECT_EQ(r.bytes_requested, request_bytes);
        EXPECT_EQ(r.misses, golden.misses[i]);
        EXPECT_EQ(r.bytes_missed, golden.miss_bytes[i]);
    }
}

TEST(GoldenMisses, LruMatchesLibCacheSimExactly) {
    expect_golden(lru);
}
TEST(GoldenMisses, LfuMatchesLibCacheSimExactly) {
    expect_golden(lfu);
}
TEST(GoldenMisses, ArcMatchesLibCacheSimExactly) {
    expect_golden(arc);
}
TEST(GoldenMisses, BeladyMatchesLibCacheSimExactly) {
    expect_golden(belady);
}

TEST(GoldenMisses, NoOnlinePolicyBeatsBelady) {
    const Trace* trace = test_support::cloud_physics_oracle();
    IOSIG_REQUIRE_TRACE(trace, oracle_file);
    for (const char* policy : {"lru", "lfu", "random", "arc", "ws", "lecar"}) {
        for (std::size_t i = 0; i < sizes_mib.size(); ++i) {
            const SimResult r = run(*trace, policy, sizes_mib[i]);
            EXPECT_GE(r.misses, belady.misses[i]) << policy << " at " << sizes_mib[i] << " MiB";
            EXPECT_GE(r.bytes_missed, belady.miss_bytes[i])
                << policy << " at " << sizes_mib[i] << " MiB";
        }
    }
}

} // namespace
} // namespace iosig::tier
