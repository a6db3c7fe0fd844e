// The engines the kernel reference runs on (kernel_reference_test.cpp,
// kernel_reference_faults_test.cpp): each exercises other parts of the engine.
#pragma once

#include "engine_fixture.hpp"

#include <cstdint>
#include <cstdlib>
#include <gtest/gtest.h>
#include <string>
#include <utility>
#include <vector>

namespace iosig::tier::test_support {

using Counter = std::uint64_t TierStats::*;

struct Variant {
    const char* name;
    ScratchDir::On on;
    void (*configure)(TierConfig&);
    // What the variant is there to exercise: these counters, summed over the seeds, are not 0
    // (besides evictions and write-backs, which every variant needs).
    std::vector<std::pair<const char*, Counter>> exercised;
};

inline const Variant variants[] = {
    {"lru, 8 lines of 4 KiB, one idle file",
     ScratchDir::On::tmpfs_if_any,
     [](TierConfig& c) {
         c.cache_size = 8 * c.line_size;
         c.idle_files = 1;
     },
     {}},
    {"the learner, stream prefetch, sequential bypass after 16 KiB, runs of 4 lines",
     ScratchDir::On::tmpfs_if_any,
     [](TierConfig& c) {
         c.policy = "ws";
         c.prefetch = "stream";
         c.prefetch_lines = 4;
         c.sequential_cutoff = 16 << 10;
         c.io_run_bytes = 16 << 10;
     },
     {{"bypassed bytes", &TierStats::bypassed_bytes},
      {"prefetch hits", &TierStats::prefetch_hits}}},
    {"arc, 4 lines of 64 KiB, markov prefetch, written bytes only, immediate write-back",
     ScratchDir::On::tmpfs_if_any,
     [](TierConfig& c) {
         c.policy = "arc";
         c.line_size = 64 << 10;
         c.cache_size = 4 * c.line_size;
         c.prefetch = "markov";
         c.dirty_bytes_only = true;
         c.writeback_delay = 0;
     },
     // Home reads for prefetches: a prefetched line a write made stale before it landed is not
     // counted in prefetches_issued, and on a loaded machine 3 seeds once issued none.
     {{"prefetch reads", &TierStats::prefetch_reads}}},
    {"random, 4 file ids, no idle files, 2 dirty lines at most",
     ScratchDir::On::tmpfs_if_any,
     [](TierConfig& c) {
         c.policy = "random";
         c.file_ids = 4;
         c.idle_files = 0;
         c.max_dirty_lines = 2;
         c.writeback_delay = 0.001;
     },
     {{"file ids reused", &TierStats::file_ids_reused}}},
    {"lfu on a disk file system (O_DIRECT where it allows), stream prefetch, sequential bypass "
     "after 8 KiB, runs of 16 lines",
     ScratchDir::On::disk,
     [](TierConfig& c) {
         c.policy = "lfu";
         c.prefetch = "stream";
         c.sequential_cutoff = 8 << 10;
         c.io_run_bytes = 64 << 10;
     },
     {{"bypassed bytes", &TierStats::bypassed_bytes},
      {"prefetches", &TierStats::prefetches_issued}}},
    {"lecar, 16 lines of 8 KiB, journal rewritten often, written bytes only",
     ScratchDir::On::tmpfs_if_any,
     [](TierConfig& c) {
         c.policy = "lecar";
         c.line_size = 8 << 10;
         c.cache_size = 16 * c.line_size;
         c.journal_compaction_bytes = 4096;
         c.dirty_bytes_only = true; // parts of lines stay dirty until a sync or an eviction
     },
     {{"journal rewrites", &TierStats::journal_rewrites}}},
};

// The seeds a test runs: 1..by_default; IOSIG_REFERENCE_SEEDS=N runs N of them, to hunt further,
// and IOSIG_REFERENCE_FIRST_SEED=S starts at S (to make one seed again: both, N=1).
inline std::vector<std::uint64_t> reference_seeds(std::uint64_t by_default) {
    const char* count = std::getenv("IOSIG_REFERENCE_SEEDS");
    const char* first = std::getenv("IOSIG_REFERENCE_FIRST_SEED");
    const std::uint64_t from = first ? std::strtoull(first, nullptr, 10) : 1;
    std::vector<std::uint64_t> seeds(count ? std::strtoull(count, nullptr, 10) : by_default);
    for (std::size_t i = 0; i < seeds.size(); ++i)
        seeds[i] = from + i;
    return seeds;
}

inline std::string variant_name(const ::testing::TestParamInfo<int>& info) {
    static const char* const short_names[] = {"Lru",          "LearnerStream", "ArcMarkov",
                                              "RandomFewIds", "LfuDirect",     "Lecar"};
    return short_names[info.param];
}

} // namespace iosig::tier::test_support
