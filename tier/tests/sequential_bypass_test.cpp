// The simulator's sequential bypass (SimConfig::sequential_cutoff): a stream longer than the cutoff
// goes past the cache, as the engine's does (BypassOnDisk.TheSimulatorBypassesTheLinesTheEngine-
// Bypasses checks the two agree), and its reads cost the home device what the page cache's
// readahead reads (readahead_model.hpp).
#include "iosig/tier/simulator.hpp"
#include "iosig/tier/synthetic.hpp"

#include <gtest/gtest.h>
#include <numeric>
#include <stdexcept>

namespace iosig::tier {
namespace {

constexpr std::uint64_t line = 4096;
constexpr std::uint64_t MiB = 1 << 20;

Trace scan(std::uint64_t bytes, int passes = 1, bool write = false) {
    Trace t;
    t.kind = TraceKind::blocks;
    for (int p = 0; p < passes; ++p)
        for (std::uint64_t at = 0; at < bytes; at += line)
            t.requests.push_back(Request{at, static_cast<std::uint32_t>(line), write});
    return t;
}

SimConfig bypassing(std::uint64_t cutoff, std::uint64_t cache = 32 * MiB) {
    SimConfig c;
    c.policy = "lru";
    c.cache_size = cache;
    c.line_size = line;
    c.sequential_cutoff = cutoff;
    c.readahead.window_bytes = 2560 << 10; // the lab's hdd
    c.readahead.max_io_bytes = 1280 << 10;
    c.fills_per_request = true;
    return c;
}

// The lab test's workload (Lab.ABypassedScanReadsThroughTheKernelsReadahead): 16 MiB read once,
// the first MiB through the cache.
TEST(SequentialBypass, AScanPastTheCutoffGoesThroughThePageCache) {
    const SimResult r = simulate(scan(16 * MiB), bypassing(1 * MiB));
    EXPECT_EQ(r.misses, 256u) << "the first MiB fills the cache";
    EXPECT_EQ(r.hits, 0u);
    EXPECT_EQ(r.bypassed_references, 3840u);
    EXPECT_EQ(r.bypassed_bytes, 15 * MiB);
    EXPECT_EQ(r.bypassed_write_bytes, 0u);
    EXPECT_EQ(r.bypass_reads.bytes, 15 * MiB);
    EXPECT_EQ(r.bypass_reads.ios, 17u);
    EXPECT_EQ(std::accumulate(r.request_bypass_ios.begin(), r.request_bypass_ios.end(), 0ull),
              r.bypass_reads.ios);
    EXPECT_EQ(std::accumulate(r.request_bypass_bytes.begin(), r.request_bypass_bytes.end(), 0ull),
              r.bypass_reads.bytes);
    EXPECT_EQ(r.request_bypass_ios[255], 0u) << "the last cached request";
    EXPECT_EQ(r.request_bypass_bytes[256], line) << "the first bypassed page is read alone";
}

// A second pass restarts the stream: its first MiB hits the cache, and the page cache holds the
// rest from the first pass.
TEST(SequentialBypass, ASecondPassFindsTheCacheAndThePageCache) {
    const SimResult r = simulate(scan(16 * MiB, 2), bypassing(1 * MiB));
    EXPECT_EQ(r.misses, 256u);
    EXPECT_EQ(r.hits, 256u);
    EXPECT_EQ(r.bypassed_references, 2 * 3840u);
    EXPECT_EQ(r.bypass_reads.bytes, 15 * MiB) << "nothing is read twice";
}

TEST(SequentialBypass, RandomReadsNeverBypass) {
    const Trace t = generate(UniformRandom{20000, 4096}, 7);
    SimConfig with = bypassing(64 * line, 256 * line);
    SimConfig without = with;
    without.sequential_cutoff = 0;
    const SimResult a = simulate(t, with), b = simulate(t, without);
    EXPECT_EQ(a.bypassed_references, 0u);
    EXPECT_EQ(a.misses, b.misses);
    EXPECT_EQ(a.hits, b.hits);
}

// Bypassed writes land in the page cache (write-back is the kernel's): reading them back costs the
// home device nothing.
TEST(SequentialBypass, BypassedWritesAreCountedAndCachedByThePageCache) {
    Trace t = scan(8 * MiB, 1, true);
    const Trace reads = scan(8 * MiB);
    t.requests.insert(t.requests.end(), reads.requests.begin(), reads.requests.end());
    const SimResult r = simulate(t, bypassing(1 * MiB));
    EXPECT_EQ(r.bypassed_write_bytes, 7 * MiB);
    EXPECT_EQ(r.bypassed_bytes, 14 * MiB);
    EXPECT_EQ(r.hits, 256u) << "the written first MiB is in the cache";
    EXPECT_EQ(r.bypass_reads.ios, 0u);
    // Which lines of which write requests went past the cache, for the write-back model's syncs.
    ASSERT_EQ(r.bypassed_write_lines.size(), 1792u);
    for (std::uint32_t i = 0; i < 1792; ++i) {
        EXPECT_EQ(r.bypassed_write_lines[i].first, 256 + i) << "request";
        EXPECT_EQ(r.bypassed_write_lines[i].second, 256 + i) << "line";
    }
}

TEST(SequentialBypass, NeedsBlockMode) {
    Trace t;
    t.kind = TraceKind::objects;
    t.requests.push_back(Request{1, 100, false});
    SimConfig c = bypassing(1 * MiB);
    EXPECT_THROW(simulate(t, c), std::invalid_argument);
}

} // namespace
} // namespace iosig::tier
