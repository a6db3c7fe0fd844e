// The replay expands a trace into references a chunk of whole requests at a time
// (SimConfig::replay_chunk), so that a simulation's memory does not grow with the trace. Where the
// chunks end must not change any count: fill runs, the sequential bypass, prefetch lifetimes and
// the learner's epochs all cross chunk boundaries.
#include "iosig/tier/simulator.hpp"

#include <gtest/gtest.h>
#include <random>

namespace iosig::tier {
namespace {

constexpr std::uint64_t line = 4096;

// Random reads of 1-24 lines, partial and whole-line writes, and sequential runs long enough to
// bypass a cache with a cutoff, over 64 MiB; fixed seed.
Trace mixed_block_trace() {
    Trace t;
    t.kind = TraceKind::blocks;
    t.source = "mixed";
    std::mt19937_64 rng(7);
    const std::uint64_t lines = (64u << 20) / line;
    while (t.requests.size() < 40'000) {
        const std::uint64_t at = rng() % lines * line;
        switch (rng() % 5) {
        case 0: // a sequential run of 48 lines in 8 requests
            for (std::uint64_t k = 0; k < 8; ++k)
                t.requests.push_back(
                    {at + k * 6 * line, static_cast<std::uint32_t>(6 * line), false});
            break;
        case 1: // part of a line written
            t.requests.push_back({at + 512, 1024, true});
            break;
        case 2: // whole lines written
            t.requests.push_back({at, static_cast<std::uint32_t>(line * (1 + rng() % 4)), true});
            break;
        default: // a read of 1-24 lines, not aligned
            t.requests.push_back(
                {at + rng() % line, static_cast<std::uint32_t>(line * (1 + rng() % 24)), false});
        }
    }
    return t;
}

void expect_same(const SimResult& a, const SimResult& b, const std::string& what) {
    EXPECT_EQ(a.references, b.references) << what;
    EXPECT_EQ(a.hits, b.hits) << what;
    EXPECT_EQ(a.misses, b.misses) << what;
    EXPECT_EQ(a.read_misses, b.read_misses) << what;
    EXPECT_EQ(a.write_misses, b.write_misses) << what;
    EXPECT_EQ(a.partial_write_misses, b.partial_write_misses) << what;
    EXPECT_EQ(a.bytes_requested, b.bytes_requested) << what;
    EXPECT_EQ(a.bytes_missed, b.bytes_missed) << what;
    EXPECT_EQ(a.request_fills, b.request_fills) << what;
    EXPECT_EQ(a.request_fill_reads, b.request_fill_reads) << what;
    EXPECT_EQ(a.prefetches_issued, b.prefetches_issued) << what;
    EXPECT_EQ(a.prefetch_reads, b.prefetch_reads) << what;
    EXPECT_EQ(a.prefetch_hits, b.prefetch_hits) << what;
    EXPECT_EQ(a.prefetches_wasted, b.prefetches_wasted) << what;
    EXPECT_EQ(a.bypassed_references, b.bypassed_references) << what;
    EXPECT_EQ(a.bypassed_bytes, b.bypassed_bytes) << what;
    EXPECT_EQ(a.bypass_reads.ios, b.bypass_reads.ios) << what;
    EXPECT_EQ(a.bypass_reads.bytes, b.bypass_reads.bytes) << what;
    EXPECT_EQ(a.request_bypass_ios, b.request_bypass_ios) << what;
    EXPECT_EQ(a.request_bypass_bytes, b.request_bypass_bytes) << what;
    ASSERT_EQ(a.learner.has_value(), b.learner.has_value()) << what;
    if (a.learner) {
        EXPECT_EQ(a.learner->epochs, b.learner->epochs) << what;
        EXPECT_EQ(a.learner->switches, b.learner->switches) << what;
    }
}

void expect_chunks_change_nothing(const Trace& trace, SimConfig config, const std::string& name) {
    config.replay_chunk = trace.requests.size() * 64; // the whole trace in one chunk
    const SimResult whole = simulate(trace, config);
    ASSERT_GT(whole.misses, 0u) << name;
    for (const std::size_t chunk : {1, 2, 5, 63, 4096, 0}) {
        config.replay_chunk = chunk;
        expect_same(simulate(trace, config), whole, name + ", chunks of " + std::to_string(chunk));
    }
}

TEST(ReplayChunks, BlockReplayWithFillRunsCountsTheSameWhereverChunksEnd) {
    const Trace trace = mixed_block_trace();
    SimConfig config;
    config.cache_size = 16u << 20;
    config.fills_per_request = true;
    config.io_run_bytes = 64 * 1024;
    expect_chunks_change_nothing(trace, config, "lru");
    config.policy = "belady"; // its next uses run backwards over requests of several lines
    expect_chunks_change_nothing(trace, config, "belady");
}

TEST(ReplayChunks, BypassPrefetchAndLearnerCountTheSameWhereverChunksEnd) {
    const Trace trace = mixed_block_trace();
    SimConfig config;
    config.policy = "ws";
    config.cache_size = 8u << 20;
    config.fills_per_request = true;
    config.sequential_cutoff = 32 * line;
    config.prefetch = "stream";
    const SimResult r = simulate(trace, config);
    ASSERT_GT(r.bypassed_references, 0u) << "the trace must exercise the bypass";
    ASSERT_GT(r.prefetches_issued, 0u) << "... and the prefetcher";
    expect_chunks_change_nothing(trace, config, "ws with bypass and stream prefetch");
    config.prefetch = "markov";
    config.sequential_cutoff = 0;
    expect_chunks_change_nothing(trace, config, "ws with markov prefetch");
}

TEST(ReplayChunks, ObjectReplayAndBeladyCountTheSameWhereverChunksEnd) {
    Trace objects = mixed_block_trace();
    objects.kind = TraceKind::objects;
    SimConfig config;
    config.cache_size = 32u << 20;
    for (const char* policy : {"arc", "lecar", "belady"}) {
        config.policy = policy;
        expect_chunks_change_nothing(objects, config, policy);
    }
}

} // namespace
} // namespace iosig::tier
