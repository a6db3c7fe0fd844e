// The learner's yardstick in tests: its misses against LRU's and LFU's on the same trace and cache.
#pragma once

#include "iosig/tier/simulator.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

namespace iosig::tier::test_support {

struct Misses {
    std::uint64_t lru, lfu, ws;
    std::uint64_t ws_switches; // how often the learner changed expert
    std::uint64_t best() const { return std::min(lru, lfu); }
};

// `line_size` matters in block mode only; `learner` tunes the ws policy.
inline Misses compare_learner(const Trace& trace, std::uint64_t cache_size,
                              std::uint64_t line_size = 4096, const PolicyConfig& learner = {}) {
    Misses m{};
    for (const char* policy : {"lru", "lfu", "ws"}) {
        SimConfig config;
        config.policy = policy;
        config.cache_size = cache_size;
        config.line_size = line_size;
        config.policy_config = learner;
        const SimResult result = simulate(trace, config);
        (policy[1] == 'r' ? m.lru : policy[1] == 'f' ? m.lfu : m.ws) = result.misses;
        if (result.learner) m.ws_switches = result.learner->switches;
    }
    return m;
}

// ws <= (1 + percent / 100) * min(lru, lfu), in integers.
inline bool within(const Misses& m, std::uint64_t percent) {
    return m.ws * 100 <= m.best() * (100 + percent);
}

inline std::string show(const Misses& m) {
    return "lru " + std::to_string(m.lru) + " lfu " + std::to_string(m.lfu) + " ws " +
           std::to_string(m.ws);
}

} // namespace iosig::tier::test_support
