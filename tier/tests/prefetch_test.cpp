// Prefetchers (docs/tier.md, "Prefetchers"): the stream identifier cuts misses on strided traffic,
// the Markov predictor on Markov-patterned traffic, and neither costs more than 1 % of misses on
// random traffic although their buffer is carved out of the cache.
#include "iosig/tier/prefetch.hpp"
#include "iosig/tier/simulator.hpp"
#include "iosig/tier/synthetic.hpp"

#include <gtest/gtest.h>

namespace iosig::tier {
namespace {

SimResult run(const Trace& trace, const std::string& prefetch,
              std::uint64_t cache_size = 16 << 20) {
    SimConfig config;
    config.policy = "lru";
    config.cache_size = cache_size;
    config.prefetch = prefetch;
    return simulate(trace, config);
}

TEST(Prefetch, StreamIdentifierCutsMissesOnStridedTraffic) {
    for (const std::uint64_t stride : {1, 3, 16}) {
        const Trace trace = generate(Strided{100000, 4, stride, 4096}, 1);
        const SimResult plain = run(trace, ""), stream = run(trace, "stream");
        EXPECT_EQ(plain.misses, plain.references)
            << "every line is new: no cache helps without prefetch";
        EXPECT_LT(stream.misses * 10, plain.misses) << "stride " << stride;
        EXPECT_GT(stream.prefetch_accuracy(), 0.9) << "stride " << stride;
    }
}

TEST(Prefetch, StreamIdentifierFollowsDescendingAndInterleavedStreams) {
    auto prefetcher = make_prefetcher("stream");
    std::vector<Key> out;
    for (Key k : {1000, 998, 996}) {
        out.clear();
        prefetcher->on_miss_stream(k, out);
    }
    ASSERT_FALSE(out.empty());
    EXPECT_EQ(out.front(), 994u);
    for (Key k : {5000, 7000, 5001, 7002, 5002, 7004}) {
        out.clear();
        prefetcher->on_miss_stream(k, out);
    }
    ASSERT_FALSE(out.empty());
    EXPECT_EQ(out.front(), 7006u) << "the second of two interleaved streams keeps its own stride";
}

// The stream keeps `depth` (8) lines ahead, refilled in halves: at confirmation the whole window,
// then nothing while more than half of it is ahead, then the next half at once. A batch of
// adjacent lines is one home read for the simulator (and the engine's prefetch worker).
TEST(Prefetch, TheStreamWindowIsRefilledInHalvesAndABatchIsOneRead) {
    auto prefetcher = make_prefetcher("stream");
    std::vector<Key> out;
    const auto proposed = [&](Key k) {
        out.clear();
        prefetcher->on_miss_stream(k, out);
        return out;
    };
    proposed(0);
    proposed(1);
    EXPECT_EQ(proposed(2), (std::vector<Key>{3, 4, 5, 6, 7, 8, 9, 10})) << "confirmed: the window";
    EXPECT_TRUE(proposed(3).empty());
    EXPECT_TRUE(proposed(4).empty());
    EXPECT_TRUE(proposed(5).empty());
    EXPECT_EQ(proposed(6), (std::vector<Key>{11, 12, 13, 14})) << "half the window used";
    EXPECT_TRUE(proposed(7).empty());

    const Trace scan = generate(Strided{20000, 1, 1, 20000}, 1);
    const SimResult batched = run(scan, "stream");
    EXPECT_GT(batched.prefetch_hits * 10, batched.references * 9) << "the scan is still served";
    EXPECT_LT(batched.prefetch_reads * 3, batched.prefetches_issued) << "4 lines a read or more";
    SimConfig one_by_one;
    one_by_one.policy = "lru";
    one_by_one.cache_size = 16 << 20;
    one_by_one.prefetch = "stream";
    one_by_one.io_run_bytes = 0; // one read per line
    const SimResult single = simulate(scan, one_by_one);
    EXPECT_EQ(single.prefetches_issued, batched.prefetches_issued);
    EXPECT_EQ(single.prefetch_reads, single.prefetches_issued);
}

TEST(Prefetch, MarkovPredictorCutsMissesOnMarkovTraffic) {
    const Trace trace = generate(MarkovChain{}, 1);
    const SimResult plain = run(trace, ""), markov = run(trace, "markov");
    EXPECT_LT(markov.misses * 100, plain.misses * 80) << plain.misses << " -> " << markov.misses;
    EXPECT_GT(markov.prefetch_accuracy(), 0.4);
}

TEST(Prefetch, NeitherHurtsRandomTrafficByMoreThanOnePercent) {
    const Trace trace = generate(UniformRandom{}, 1);
    const SimResult plain = run(trace, "");
    for (const char* kind : {"stream", "markov"}) {
        const SimResult with = run(trace, kind);
        EXPECT_LE(with.misses * 100, plain.misses * 101)
            << kind << ": " << plain.misses << " -> " << with.misses;
    }
}

TEST(Prefetch, OnlyIntoFreeBufferSlots) {
    SimConfig config;
    config.policy = "lru";
    config.cache_size = 64 << 20;
    config.prefetch = "stream";
    config.prefetch_buffer = 16 * 4096; // 16 lines
    const Trace trace = generate(Strided{20000, 64, 1, 512}, 1);
    const SimResult r = simulate(trace, config);
    // 64 streams compete for 16 slots: prefetching must stop when the buffer is full, so fewer
    // prefetches are issued than the streams would ask for, and none is counted twice.
    EXPECT_LE(r.prefetch_hits + r.prefetches_wasted, r.prefetches_issued);
    EXPECT_LT(r.prefetches_issued, r.references);
}

TEST(Prefetch, UnknownPrefetcherIsRejected) {
    EXPECT_THROW(make_prefetcher("oracle"), std::invalid_argument);
}

} // namespace
} // namespace iosig::tier
