// What a learner that switches between LRU and LFU could gain on a trace, in hindsight.
//
// The learner (docs/tier.md, "The learner") is judged against the better of LRU and LFU over the
// whole trace. Switching experts pays off only where the trace changes character, and every switch
// costs a refill: the real cache must fetch again what the new expert holds and the old one does
// not. This replays LRU and LFU side by side, cuts the trace into windows of `window` references,
// and finds the best schedule of experts knowing the whole trace (dynamic programming over the
// windows), once with switches free and once charging each switch one miss per entry the new
// expert's cache holds that the old one's does not. Where the charged schedule gains nothing over
// the better single expert, a learner that switches is likely to lose. The charge is an upper
// estimate of a refill: an entry that is never referenced again costs nothing.
#pragma once

#include "iosig/tier/simulator.hpp"
#include "iosig/tier/trace.hpp"

#include <algorithm>
#include <cstdint>

namespace iosig::tier {

struct SwitchingHindsight {
    SimMode mode = SimMode::object;
    std::uint64_t capacity = 0; // bytes (object mode) or lines (block mode)
    std::uint64_t references = 0;
    std::uint64_t windows = 0;
    std::uint64_t lru_misses = 0;
    std::uint64_t lfu_misses = 0;
    // Per window the fewer misses of the two experts: switching at no cost.
    std::uint64_t free_switching_misses = 0;
    // The best schedule with each switch charged its refill, its misses and its switches.
    std::uint64_t charged_switching_misses = 0;
    unsigned charged_switches = 0;

    std::uint64_t best_single() const { return std::min(lru_misses, lfu_misses); }
};

// `config` gives the cache size, line size and mode as for simulate() (its policy and prefetch are
// ignored). Throws std::invalid_argument as simulate() does, and for a zero window.
SwitchingHindsight switching_hindsight(const Trace& trace, const SimConfig& config,
                                       std::uint64_t window);

} // namespace iosig::tier
