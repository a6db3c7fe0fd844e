// The paper's weight-sharing learner (docs/tier.md, "The learner"): never more than 1 % of misses
// worse than the better of LRU and LFU on the shared trace and on the paper's synthetic traffic
// models, and better than both when the traffic switches between the two models. Seeds are fixed.
#include "iosig/tier/simulator.hpp"
#include "iosig/tier/synthetic.hpp"
#include "learner_compare.hpp"
#include "trace_fixture.hpp"

#include <algorithm>
#include <array>
#include <gtest/gtest.h>

namespace iosig::tier {
namespace {

using test_support::Misses;

Misses compare(const Trace& trace, std::uint64_t cache_size, std::uint64_t line_size = 4096) {
    return test_support::compare_learner(trace, cache_size, line_size);
}

// The paper's configuration: 8 KiB lines; 64 lines as in its tables, and larger caches.
constexpr std::uint32_t page = 8192;
constexpr std::array<std::uint64_t, 4> lines{64, 256, 1024, 4096};
constexpr std::array<std::uint64_t, 5> seeds{1, 2, 3, 4, 5};

TEST(Learner, WithinOnePercentOfTheBetterExpertOnTheSharedTrace) {
    const Trace* trace = test_support::cloud_physics_oracle();
    IOSIG_REQUIRE_TRACE(trace, "cloudPhysicsIO.oracleGeneral.bin");
    for (std::uint64_t mib = 128; mib <= 1024; mib += 128) {
        const Misses m = compare(*trace, mib << 20);
        EXPECT_LE(m.ws * 100, m.best() * 101)
            << mib << " MiB: lru " << m.lru << " lfu " << m.lfu << " ws " << m.ws;
    }
}

TEST(Learner, MatchesLruOnPoissonTemporalLocality) {
    for (const std::uint64_t seed : seeds) {
        const Trace trace = generate(PoissonLocality{}, seed, page);
        for (const std::uint64_t n : lines) {
            const Misses m = compare(trace, n * page, page);
            ASSERT_LT(m.lru, m.lfu) << "the Poisson model must favour LRU";
            EXPECT_LE(m.ws * 100, m.best() * 101) << "seed " << seed << ", " << n << " lines: lru "
                                                  << m.lru << " lfu " << m.lfu << " ws " << m.ws;
        }
    }
}

TEST(Learner, MatchesLfuOnIrmZipf) {
    for (const std::uint64_t seed : seeds) {
        const Trace trace = generate(IrmZipf{}, seed, page);
        for (const std::uint64_t n : lines) {
            const Misses m = compare(trace, n * page, page);
            ASSERT_LT(m.lfu, m.lru) << "IRM with Zipf popularity must favour LFU";
            EXPECT_LE(m.ws * 100, m.best() * 101) << "seed " << seed << ", " << n << " lines: lru "
                                                  << m.lru << " lfu " << m.lfu << " ws " << m.ws;
        }
    }
}

TEST(Learner, BeatsBothWhenTheTrafficSwitchesModels) {
    for (const std::uint64_t seed : seeds) {
        const Trace trace = generate(RegimeSwitching{}, seed, page);
        for (const std::uint64_t n : lines) {
            const Misses m = compare(trace, n * page, page);
            EXPECT_LT(m.ws, m.best()) << "seed " << seed << ", " << n << " lines: lru " << m.lru
                                      << " lfu " << m.lfu << " ws " << m.ws;
        }
    }
}

TEST(Learner, SwitchesExpertWithTheRegime) {
    SimConfig config;
    config.policy = "ws";
    config.cache_size = 256 * page;
    config.line_size = page;
    const auto poisson = simulate(generate(PoissonLocality{}, 1, page), config).learner;
    const auto irm = simulate(generate(IrmZipf{}, 1, page), config).learner;
    ASSERT_TRUE(poisson && irm);
    EXPECT_EQ(poisson->current, Expert::lru);
    EXPECT_EQ(irm->current, Expert::lfu);
    EXPECT_GT(poisson->epochs, 10u);
}

TEST(Learner, IsDeterministic) {
    const Trace trace = generate(RegimeSwitching{}, 3, page);
    SimConfig config;
    config.policy = "ws";
    config.cache_size = 256 * page;
    config.line_size = page;
    const SimResult a = simulate(trace, config), b = simulate(trace, config);
    EXPECT_EQ(a.misses, b.misses);
    EXPECT_EQ(a.learner->switches, b.learner->switches);
}

} // namespace
} // namespace iosig::tier
