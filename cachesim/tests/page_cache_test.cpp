// The block-based page-cache model of Alg. 1: overlaps, splits, LRU lists, write-back, expiry, and
// the inputs that made the published model abort.
#include "iosig/cachesim/page_cache.hpp"

#include <cmath>
#include <gtest/gtest.h>
#include <utility>
#include <vector>

namespace iosig::cachesim {
namespace {

struct B {
    std::uint64_t offset, size;
    double time;
    bool active;
};

void expect_blocks(const PageCacheModel& cache, std::initializer_list<B> expected,
                   FileId file = 1) {
    std::vector<DirtyBlock> got;
    for (const DirtyBlock& b : cache.blocks())
        if (b.file == file) got.push_back(b);
    ASSERT_EQ(got.size(), expected.size());
    std::size_t i = 0;
    for (const B& e : expected) {
        EXPECT_EQ(got[i].offset, e.offset) << "block " << i;
        EXPECT_EQ(got[i].size, e.size) << "block " << i;
        EXPECT_EQ(got[i].time, e.time) << "block " << i;
        EXPECT_EQ(got[i].active, e.active) << "block " << i;
        ++i;
    }
}

TEST(PageCache, NewDataIsOneInactiveBlock) {
    PageCacheModel cache;
    EXPECT_EQ(cache.insert(1, 0, 100, 1.0), 100u);
    expect_blocks(cache, {{0, 100, 1.0, false}});
    EXPECT_EQ(cache.dirty_bytes(), 100);
    EXPECT_EQ(cache.active_bytes(), 0u);
}

TEST(PageCache, OverlapBecomesActiveAndOnlyNewBytesCount) {
    PageCacheModel cache;
    cache.insert(1, 0, 100, 1.0);
    EXPECT_EQ(cache.insert(1, 50, 100, 2.0), 50u); // 50 rewritten, 50 new
    expect_blocks(cache, {{0, 50, 1.0, false}, {50, 50, 2.0, true}, {100, 50, 2.0, false}});
    EXPECT_EQ(cache.dirty_bytes(), 150);
    EXPECT_EQ(cache.active_bytes(), 50u);
}

TEST(PageCache, RewriteInsideABlockSplitsItInThree) {
    PageCacheModel cache;
    cache.insert(1, 0, 100, 1.0);
    EXPECT_EQ(cache.insert(1, 20, 10, 3.0), 0u);
    expect_blocks(cache, {{0, 20, 1.0, false}, {20, 10, 3.0, true}, {30, 70, 1.0, false}});
    EXPECT_EQ(cache.dirty_bytes(), 100);
}

TEST(PageCache, WriteSpanningSeveralBlocksAndGaps) {
    PageCacheModel cache;
    cache.insert(1, 0, 10, 1.0);
    cache.insert(1, 20, 10, 1.0);
    cache.insert(1, 40, 10, 1.0);
    EXPECT_EQ(cache.new_bytes(1, 5, 40), 20u); // [10,20) and [30,40) are clean
    EXPECT_EQ(cache.insert(1, 5, 40, 2.0), 20u);
    expect_blocks(cache, {{0, 5, 1.0, false},
                          {5, 5, 2.0, true},
                          {10, 10, 2.0, false},
                          {20, 10, 2.0, true},
                          {30, 10, 2.0, false},
                          {40, 5, 2.0, true},
                          {45, 5, 1.0, false}});
    EXPECT_EQ(cache.dirty_bytes(), 50);
}

TEST(PageCache, ReportsEachRewrittenRunWithWhenItWasLastWritten) {
    PageCacheModel cache;
    cache.insert(1, 0, 10, 1.0);
    cache.insert(1, 20, 10, 3.0);
    cache.insert(1, 40, 10, 5.0);
    std::vector<std::pair<std::uint64_t, double>> seen;
    const PageCacheModel::RewriteObserver observe = [&](std::uint64_t bytes, double written_at) {
        seen.emplace_back(bytes, written_at);
    };
    // [5, 45): the tail of the first block, the whole second, the head of the third.
    EXPECT_EQ(cache.insert(1, 5, 40, 9.0, &observe), 20u);
    const std::vector<std::pair<std::uint64_t, double>> expected = {{5, 1.0}, {10, 3.0}, {5, 5.0}};
    EXPECT_EQ(seen, expected);
    seen.clear();
    // Inside one block: only the middle, written at 9.0 now.
    cache.insert(1, 22, 4, 10.0, &observe);
    EXPECT_EQ(seen, (std::vector<std::pair<std::uint64_t, double>>{{4, 9.0}}));
}

TEST(PageCache, FilesDoNotOverlapEachOther) {
    PageCacheModel cache;
    cache.insert(1, 0, 100, 1.0);
    EXPECT_EQ(cache.insert(2, 0, 100, 1.0), 100u);
    EXPECT_EQ(cache.dirty_bytes(), 200);
}

TEST(PageCache, WriteBackTakesTheOldestInactiveDataFirstInOffsetOrder) {
    PageCacheModel cache;
    cache.insert(1, 0, 100, 1.0);
    cache.insert(1, 200, 100, 2.0);
    cache.insert(1, 20, 10, 3.0); // splits [0,100): remnants keep t=1
    EXPECT_EQ(cache.write_back(25), 25);
    // [0,20) went first, then 5 bytes of [30,100)
    expect_blocks(cache, {{20, 10, 3.0, true}, {35, 65, 1.0, false}, {200, 100, 2.0, false}});
    EXPECT_EQ(cache.dirty_bytes(), 175);
}

TEST(PageCache, AllActiveCacheIsDemotedInsteadOfRunningDry) {
    PageCacheModel cache;
    cache.insert(1, 0, 100, 1.0);
    cache.insert(1, 0, 100, 2.0); // everything active, the inactive list is empty
    EXPECT_EQ(cache.inactive_bytes(), 0u);
    EXPECT_EQ(cache.write_back(10), 10);
    expect_blocks(cache, {{10, 90, 2.0, false}});
}

TEST(PageCache, WritingBackMoreThanIsDirtyDrainsTheCache) {
    PageCacheModel cache;
    EXPECT_EQ(cache.write_back(1000), 0); // empty: nothing to do, no failure
    cache.insert(1, 0, 100, 1.0);
    EXPECT_EQ(cache.write_back(1000), 100);
    EXPECT_TRUE(cache.empty());
    EXPECT_EQ(cache.dirty_bytes(), 0);
    EXPECT_TRUE(std::isinf(cache.oldest_time()));
}

TEST(PageCache, BackgroundFlushStopsAtTheThreshold) {
    PageCacheModel cache;
    cache.insert(1, 0, 150, 0.0);
    // 10 B/s for up to 100 s, background threshold 100 B: 50 B in 5 s, then it stops.
    const FlushResult r = cache.flush(0.0, 100.0, 10.0, 100.0, 1e9);
    EXPECT_DOUBLE_EQ(r.written, 50);
    EXPECT_DOUBLE_EQ(r.busy, 5);
    EXPECT_EQ(cache.dirty_bytes(), 100);
}

TEST(PageCache, ExpiredDataIsWrittenAtTheFlushersWakeUp) {
    PageCacheModel cache;
    cache.insert(1, 0, 50, 1.0);
    // Below the threshold; expires at 31 s, noticed at the 35 s wake-up (interval 5 s).
    EXPECT_DOUBLE_EQ(cache.flush(0.0, 20.0, 10.0, 100.0, 30.0, 5.0).written, 0);
    EXPECT_EQ(cache.dirty_bytes(), 50);
    std::vector<std::pair<double, double>> progress;
    const FlushResult r = cache.flush(20.0, 80.0, 10.0, 100.0, 30.0, 5.0,
                                      [&](double t, double d) { progress.emplace_back(t, d); });
    EXPECT_DOUBLE_EQ(r.written, 50);
    EXPECT_EQ(cache.dirty_bytes(), 0);
    ASSERT_FALSE(progress.empty());
    EXPECT_DOUBLE_EQ(progress.front().first, 35.0); // idle until the wake-up
    EXPECT_DOUBLE_EQ(progress.back().first, 40.0);  // 50 B at 10 B/s
}

TEST(PageCache, LongIdleGapAfterTheCacheDrainedIsHarmless) {
    PageCacheModel cache;
    cache.insert(1, 0, 4096, 0.0);
    cache.flush(0.0, 86400.0, 1e6, 0.0, 30.0, 5.0);
    EXPECT_TRUE(cache.empty());
    // The published model aborted here: flushing again with nothing left.
    EXPECT_DOUBLE_EQ(cache.flush(86400.0, 86400.0, 1e6, 0.0, 30.0, 5.0).written, 0);
    EXPECT_EQ(cache.insert(1, 0, 4096, 172800.0), 4096u);
}

TEST(PageCache, ZeroBandwidthOrDurationFlushesNothing) {
    PageCacheModel cache;
    cache.insert(1, 0, 100, 0.0);
    EXPECT_DOUBLE_EQ(cache.flush(0, 10, 0, 0, 1, 0).written, 0);
    EXPECT_DOUBLE_EQ(cache.flush(0, 0, 10, 0, 1, 0).written, 0);
    EXPECT_EQ(cache.dirty_bytes(), 100);
}

} // namespace
} // namespace iosig::cachesim
