// The page cache's readahead as the model of the sequential bypass sees it (readahead_model.hpp):
// what the kernel reads from the home device for a program's reads of one file.
#include "iosig/tier/readahead_model.hpp"
#include "loop_device.hpp"

#include <gtest/gtest.h>
#include <limits>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

namespace iosig::tier {
namespace {

constexpr std::uint64_t page = 4096;
constexpr std::uint64_t MiB = 1 << 20;

// The lab's hdd: a loop device reading ahead 2,560 KiB in IOs of at most 1,280 KiB.
ReadaheadConfig lab_hdd() {
    ReadaheadConfig c;
    c.window_bytes = 2560 << 10;
    c.max_io_bytes = 1280 << 10;
    return c;
}

// Reads [from, to) in `request`-byte reads; the device reads of each.
std::vector<HomeReads> scan(PageCacheModel& cache, std::uint64_t from, std::uint64_t to,
                            std::uint64_t request = page) {
    std::vector<HomeReads> reads;
    for (std::uint64_t at = from; at < to; at += request)
        reads.push_back(cache.read(at, request));
    return reads;
}

HomeReads total(const std::vector<HomeReads>& reads) {
    HomeReads sum;
    for (const HomeReads& r : reads) {
        sum.ios += r.ios;
        sum.bytes += r.bytes;
    }
    return sum;
}

TEST(Readahead, AScanFromTheStartOpensAWindowAndDoublesItUpToTheMaximum) {
    ReadaheadConfig c = lab_hdd();
    c.max_io_bytes = 4 * MiB; // one IO per window, to see the windows
    PageCacheModel cache(c, 64 * MiB);
    const std::vector<HomeReads> reads = scan(cache, 0, 8 * MiB);
    std::vector<std::uint64_t> windows; // pages of each device read, in order
    for (const HomeReads& r : reads)
        if (r.ios) windows.push_back(r.bytes / page);
    // 1 page asked: 4 (x4 while <= 1/32 of 640), then x4 below 1/16 of it, x2 up to 1/2, then 640.
    const std::vector<std::uint64_t> expected{4, 16, 64, 128, 256, 512, 640, 640, 640};
    EXPECT_EQ(windows, expected);
    // The first window's marker, the page after the one asked for, reads the next window ahead.
    EXPECT_EQ(reads[0].bytes, 4 * page);
    EXPECT_EQ(reads[1].bytes, 16 * page);
    EXPECT_EQ(reads[2].ios, 0u);
}

// The lab test's bypassed scan: the first MiB went through the cache, the other 15 MiB through the
// page cache. Measured there: 18 reads, 15 MiB (blkio.throttle.io_serviced, io_service_bytes).
TEST(Readahead, AScanFromAnUncachedMiddleReadsAPageAloneThenRampsUp) {
    PageCacheModel cache(lab_hdd(), 16 * MiB);
    const std::vector<HomeReads> reads = scan(cache, 1 * MiB, 16 * MiB);
    EXPECT_EQ(reads[0].ios, 1u);
    EXPECT_EQ(reads[0].bytes, page) << "no sign of a stream yet: the page alone";
    EXPECT_EQ(reads[1].bytes, 4 * page) << "the next page opens the first window";
    const HomeReads sum = total(reads);
    EXPECT_EQ(sum.bytes, 15 * MiB) << "exactly the scanned bytes: nothing past the end";
    EXPECT_EQ(sum.ios, 17u) << "windows of 2,560 KiB go in two IOs of 1,280 KiB";
}

TEST(Readahead, PagesReadOnceAreNotReadAgain) {
    PageCacheModel cache(lab_hdd(), 4 * MiB);
    EXPECT_EQ(total(scan(cache, 0, 4 * MiB)).bytes, 4 * MiB);
    const HomeReads again = total(scan(cache, 0, 4 * MiB));
    EXPECT_EQ(again.ios, 0u);
    EXPECT_EQ(again.bytes, 0u);
    EXPECT_TRUE(cache.cached(0));
    EXPECT_TRUE(cache.cached(4 * MiB / page - 1));
}

TEST(Readahead, ScatteredReadsReadOnlyTheirPages) {
    PageCacheModel cache(lab_hdd(), 64 * MiB);
    for (std::uint64_t i = 1; i <= 100; ++i) {
        const HomeReads r = cache.read((i * 37 % 16000 + 1) * page, page);
        EXPECT_EQ(r.ios, 1u) << "read " << i;
        EXPECT_EQ(r.bytes, page) << "read " << i;
    }
}

TEST(Readahead, LargeRequestsReadAtLeastWhatTheyAskInIosOfTheDevicesLargestSize) {
    ReadaheadConfig c = lab_hdd();
    c.window_bytes = 128 << 10;
    PageCacheModel cache(c, 64 * MiB);
    // 4 MiB at once, past a 128 KiB window: up to the device's largest IO per read-ahead window.
    const HomeReads first = cache.read(8 * MiB, 4 * MiB);
    EXPECT_GE(first.bytes, 4 * MiB);
    EXPECT_EQ(first.ios, (first.bytes + c.max_io_bytes - 1) / c.max_io_bytes);
}

TEST(Readahead, WrittenPagesAreCachedAndAFileGrowsByWrites) {
    PageCacheModel cache(lab_hdd(), 0);
    cache.write(0, 2 * MiB);
    EXPECT_EQ(total(scan(cache, 0, 2 * MiB)).ios, 0u);
    EXPECT_TRUE(cache.cached(2 * MiB / page - 1));
    EXPECT_FALSE(cache.cached(2 * MiB / page));
}

TEST(Readahead, NoReadaheadReadsEachMissingPageAlone) {
    ReadaheadConfig c = lab_hdd();
    c.window_bytes = 0;
    PageCacheModel cache(c, 1 * MiB);
    const HomeReads sum = total(scan(cache, 0, 1 * MiB));
    EXPECT_EQ(sum.ios, 256u);
    EXPECT_EQ(sum.bytes, 1 * MiB);
}

// Two streams in one file take turns: the file's readahead state follows the stream that opened a
// window last, so the other stream's marker comes out of sync (each window keeps its marker, as the
// kernel's PG_readahead flags). Its window is rebuilt from the cached run after the marker and it
// keeps reading ahead: every page of both streams read once, in far fewer IOs than pages.
TEST(Readahead, InterleavedStreamsKeepReadingAhead) {
    PageCacheModel cache(lab_hdd(), 64 * MiB);
    HomeReads sum;
    for (std::uint64_t i = 0; i < 2048; ++i)
        for (const std::uint64_t base : {std::uint64_t{0}, 32 * MiB}) {
            const HomeReads r = cache.read(base + i * page, page);
            sum.ios += r.ios;
            sum.bytes += r.bytes;
        }
    EXPECT_GE(sum.bytes, 2 * 2048 * page);
    // Each stream is inside one window, and the next is read once it entered it: two ahead at most.
    EXPECT_LE(sum.bytes, 2 * 2048 * page + 4 * (2560 << 10)) << "at most two windows ahead each";
    EXPECT_LT(sum.ios, 2 * 2048 / 16) << sum.ios << " IOs";
    for (const std::uint64_t base : {std::uint64_t{0}, 32 * MiB})
        for (std::uint64_t i = 0; i < 2048; ++i)
            ASSERT_TRUE(cache.cached(base / page + i)) << "page " << i << " after " << base;
}

TEST(Readahead, ABadConfigurationIsRefused) {
    ReadaheadConfig c;
    c.max_io_bytes = 512;
    EXPECT_THROW(PageCacheModel(c, MiB), std::invalid_argument);
    c = ReadaheadConfig{};
    c.page_bytes = 0;
    EXPECT_THROW(PageCacheModel(c, MiB), std::invalid_argument);
}

// The window is the one the kernel uses for the device: set with `blockdev --setra` (the BLKRASET
// ioctl, in 512-byte sectors) on a loop device of our own, and read back from sysfs.
TEST(Readahead, TheDevicesWindowIsTheOneSetOnItsQueue) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to attach a loop device";
    const test_support::LoopDevice loop("ra", 8 * MiB);
    if (loop.path().empty())
        GTEST_SKIP() << "losetup could not attach " << loop.image() << " (no loop devices here)";
    std::vector<std::uint64_t> windows;
    for (const std::uint64_t bytes : {1 * MiB, std::uint64_t{256} << 10}) {
        EXPECT_TRUE(loop.set_readahead(bytes));
        const auto found = readahead_of(loop.path());
        EXPECT_TRUE(found) << loop.path();
        if (found) {
            windows.push_back(found->config.window_bytes);
            EXPECT_GE(found->config.max_io_bytes, page);
            EXPECT_NE(found->source.find("/queue"), std::string::npos) << found->source;
        }
    }
    EXPECT_EQ(windows, (std::vector<std::uint64_t>{1 * MiB, 256 << 10}));
}

// The page cache's pages are kept as ranges: touching and overlapping ranges merge, and runs are
// counted across a range's length, whatever the offsets.
TEST(CachedPages, RangesMergeAndRunsAreCountedWithinThem) {
    CachedPages pages;
    pages.insert(10, 20);
    pages.insert(30, 40);
    EXPECT_FALSE(pages.contains(9));
    EXPECT_TRUE(pages.contains(10));
    EXPECT_FALSE(pages.contains(20));
    EXPECT_EQ(pages.run_from(12, 100), 8u);
    EXPECT_EQ(pages.run_from(20, 100), 0u);
    EXPECT_EQ(pages.run_before(20, 100), 10u);
    EXPECT_EQ(pages.run_before(20, 4), 4u);
    EXPECT_EQ(pages.next_after(20), 30u);
    pages.insert(20, 30); // fills the gap: one range
    EXPECT_EQ(pages.run_from(10, 100), 30u);
    pages.insert(5, 12);
    pages.insert(38, 45);
    EXPECT_EQ(pages.run_from(5, 100), 40u);
    EXPECT_EQ(pages.next_after(5), std::numeric_limits<std::uint64_t>::max());
    const std::uint64_t far = 1ull << 40; // an offset of 4 PiB in pages costs one entry
    pages.insert(far, far + 3);
    EXPECT_TRUE(pages.contains(far + 2));
    EXPECT_EQ(pages.next_after(100), far);
}

TEST(Readahead, AFileOnNoBlockDeviceHasNone) {
    EXPECT_FALSE(readahead_of("/proc/self/status"));
    EXPECT_FALSE(readahead_of("/nonexistent/iosig"));
}

} // namespace
} // namespace iosig::tier
