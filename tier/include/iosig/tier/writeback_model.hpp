// How many line write-backs the engine makes for a request sequence: the write-back part of n_i,m
// in the queueing model's Eq. 2 (queueing.hpp). The engine never evicts a dirty line; its flusher
// writes a line home once the line has been dirty for TierConfig::writeback_delay, or sooner,
// oldest first, while more than half of max_dirty_lines are dirty (engine_flush.cpp, flusher_loop),
// and close writes the rest. A write to a clean line starts a new dirty period, so a line written
// again and again costs one write-back per period, not one in all.
#pragma once

#include "iosig/tier/trace.hpp"

#include <cstdint>

namespace iosig::tier {

struct WritebackModelConfig {
    std::uint64_t line_size = 4096;
    std::uint64_t max_dirty_lines = 64; // the engine's bound (TierConfig: 0 means lines / 4)
    double writeback_delay = 0.5;       // s (TierConfig::writeback_delay)
    unsigned queue_depth = 32;          // lines per flusher batch (TierConfig::queue_depth)
};

// Write-backs when the requests of `trace` (kind blocks) are spread evenly over `seconds`.
std::uint64_t expected_writebacks(const Trace& trace, double seconds,
                                  const WritebackModelConfig& config);

} // namespace iosig::tier
