// Prefetchers (docs/tier.md, "Prefetchers"): the stream identifier cuts misses on strided traffic,
// the Markov predictor on Markov-patterned traffic, and neither costs more than 1 % of misses on
// random traffic; their buffer is memory beside the cache, as in the paper and the engine.
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

// The stream prefetcher fed one reference of the miss stream at a time.
class StreamFeed {
public:
    // The keys proposed for reference `key`.
    std::vector<Key> proposed(Key key) {
        std::vector<Key> out;
        prefetcher_->on_miss_stream(key, out);
        return out;
    }
    // Whether references first, first + stride, ... up to last propose nothing.
    bool silent(Key first, Key last, Key stride = 1) {
        bool none = true;
        for (Key k = first; k <= last; k += stride)
            none = proposed(k).empty() && none;
        return none;
    }
    void reject(Key first, Key last) {
        for (Key k = first; k <= last; ++k)
            prefetcher_->on_rejected(k);
    }

private:
    std::unique_ptr<Prefetcher> prefetcher_ = make_prefetcher("stream");
};

// Keys first, first + stride, ... up to last.
std::vector<Key> keys(Key first, Key last, Key stride = 1) {
    std::vector<Key> out;
    for (Key k = first; k <= last; k += stride)
        out.push_back(k);
    return out;
}

// A stream keeps a window of lines ahead, refilled in halves: at confirmation the whole window of
// `depth` (8) lines, then nothing while more than half of it is ahead, then the rest at once. An
// adjacent stream doubles its window at every refill up to `max_depth` (64), so its batches, one
// home read each, grow as a scan goes on (readahead ramp-up).
TEST(Prefetch, AnAdjacentStreamsWindowDoublesAtEveryRefill) {
    StreamFeed feed;
    EXPECT_TRUE(feed.silent(0, 1));
    EXPECT_EQ(feed.proposed(2), keys(3, 10)) << "confirmed: the first window, 8 lines";
    EXPECT_TRUE(feed.silent(3, 5));
    EXPECT_EQ(feed.proposed(6), keys(11, 22)) << "half of it used: the window is now 16 lines";
    EXPECT_TRUE(feed.silent(7, 13));
    EXPECT_EQ(feed.proposed(14), keys(23, 46)) << "32 lines";
    EXPECT_TRUE(feed.silent(15, 29));
    EXPECT_EQ(feed.proposed(30), keys(47, 94)) << "64 lines: max_depth";
    EXPECT_TRUE(feed.silent(31, 61));
    EXPECT_EQ(feed.proposed(62), keys(95, 126)) << "the window stays at 64 lines";
}

// Strided streams keep their window: growth only makes adjacent lines one larger read.
TEST(Prefetch, AStridedStreamsWindowDoesNotGrow) {
    StreamFeed feed;
    EXPECT_TRUE(feed.silent(0, 3, 3));
    EXPECT_EQ(feed.proposed(6), keys(9, 30, 3));
    EXPECT_TRUE(feed.silent(9, 15, 3));
    EXPECT_EQ(feed.proposed(18), keys(33, 42, 3)) << "the refill of a window of 8";
}

// Lines the owner has no room for go back to their stream: it proposes them again at its next
// refill, and its window halves instead of growing.
TEST(Prefetch, ARejectedLineIsProposedAgainAndTheWindowShrinks) {
    StreamFeed feed;
    EXPECT_TRUE(feed.silent(0, 1));
    EXPECT_EQ(feed.proposed(2), keys(3, 10));
    EXPECT_EQ(feed.proposed(6), keys(11, 22));
    EXPECT_EQ(feed.proposed(14), keys(23, 46)) << "a window of 32";
    feed.reject(40, 46); // the buffer took 23..39 only: the window is 16 again
    EXPECT_TRUE(feed.silent(15, 30));
    EXPECT_EQ(feed.proposed(31), keys(40, 47))
        << "from the first rejected line to 16 ahead, without growing";
    EXPECT_TRUE(feed.silent(32, 38));
    EXPECT_EQ(feed.proposed(39), keys(48, 71))
        << "that batch was taken whole: the window grows again, to 32";
}

// The window an owner lets a stream grow to: max_depth, within the buffer and two of the owner's
// largest home IOs, never below depth.
TEST(Prefetch, TheWindowIsFittedToTheBufferAndTheLargestIo) {
    const PrefetchConfig defaults; // depth 8, max_depth 64
    EXPECT_EQ(fit_prefetch_window(defaults, 1000, 256).max_depth, 64u);
    EXPECT_EQ(fit_prefetch_window(defaults, 16, 256).max_depth, 16u) << "the buffer";
    EXPECT_EQ(fit_prefetch_window(defaults, 1000, 16).max_depth, 32u) << "two IOs of 16 lines";
    EXPECT_EQ(fit_prefetch_window(defaults, 1000, 1).max_depth, 8u) << "a read per line: no growth";
    EXPECT_EQ(fit_prefetch_window(defaults, 4, 256).max_depth, 8u) << "never below depth";
}

// In the simulator a scan's prefetches come in ever larger batches, one read each: 32 lines a
// read once the window has grown, where a window of 8 lines refilled in halves read 4.
TEST(Prefetch, AScansPrefetchesAreReadInBatchesOfTheGrownWindow) {
    const Trace scan = generate(Strided{20000, 1, 1, 20000}, 1);
    const SimResult batched = run(scan, "stream");
    EXPECT_GT(batched.prefetch_hits * 10, batched.references * 9) << "the scan is still served";
    EXPECT_LT(batched.prefetch_reads * 30, batched.prefetches_issued)
        << batched.prefetch_reads << " reads for " << batched.prefetches_issued << " lines";
    SimConfig one_by_one;
    one_by_one.policy = "lru";
    one_by_one.cache_size = 16 << 20;
    one_by_one.prefetch = "stream";
    one_by_one.io_run_bytes = 0; // one read per line: the window stays at 8
    const SimResult single = simulate(scan, one_by_one);
    EXPECT_EQ(single.prefetch_reads, single.prefetches_issued);
    EXPECT_EQ(single.misses, batched.misses) << "either way the prefetcher keeps ahead";
}

// A home file's end stops the stream: the engine reads nothing past it, and the simulator, told
// where it is, proposes nothing there either.
TEST(Prefetch, NothingIsPrefetchedPastTheEndOfTheFile) {
    const Trace scan = generate(Strided{1000, 1, 1, 1000}, 1); // lines r .. r + 999
    const Key first = scan.requests.front().id / 4096;
    SimConfig config;
    config.policy = "lru";
    config.cache_size = 16 << 20;
    config.prefetch = "stream";
    const SimResult unbounded = simulate(scan, config);
    EXPECT_GT(unbounded.prefetches_issued, 1000u) << "the window runs past the scan's last line";
    config.prefetch_limit = (first + 1000) * 4096;
    const SimResult bounded = simulate(scan, config);
    EXPECT_EQ(bounded.prefetches_issued + bounded.misses, 1000u)
        << "every line once, by prefetch or by a miss, and none past the end";
    EXPECT_EQ(bounded.misses, unbounded.misses);
}

TEST(Prefetch, MarkovPredictorCutsMissesOnMarkovTraffic) {
    const Trace trace = generate(MarkovChain{}, 1);
    const SimResult plain = run(trace, ""), markov = run(trace, "markov");
    EXPECT_LT(markov.misses * 100, plain.misses * 80) << plain.misses << " -> " << markov.misses;
    EXPECT_GT(markov.prefetch_accuracy(), 0.4);
}

// On uniform random traffic there is nothing to predict: at every cache size, from a tenth of the
// working set to nine tenths, neither prefetcher costs more than 1 % of misses, and what they read
// in vain (each a home IO the program did not ask for) is under 1 % of the misses.
TEST(Prefetch, NeitherHurtsRandomTrafficByMoreThanOnePercent) {
    const UniformRandom spec;
    const Trace trace = generate(spec, 1);
    for (const std::uint64_t tenths : {1, 3, 5, 7, 9}) {
        const std::uint64_t cache_size = spec.pages * 4096 * tenths / 10;
        const SimResult plain = run(trace, "", cache_size);
        for (const char* kind : {"stream", "markov"}) {
            const SimResult with = run(trace, kind, cache_size);
            EXPECT_LE(with.misses * 100, plain.misses * 101)
                << kind << " at " << tenths << "/10: " << plain.misses << " -> " << with.misses;
            EXPECT_LE(with.prefetches_wasted * 100, plain.misses)
                << kind << " at " << tenths << "/10";
            EXPECT_EQ(with.capacity, plain.capacity) << "the buffer is beside the cache";
            EXPECT_EQ(with.prefetch_buffer, cache_size / 32 / 4096 * 4096) << "whole lines";
        }
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
