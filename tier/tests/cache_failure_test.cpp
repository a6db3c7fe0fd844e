// The cache file fails (its device is gone) while the program goes on writing and reading. A
// write of a clean line goes home (refused_write_test.cpp, for this file and the journal); a dirty
// line's earlier writes are only in the cache file, so a write to it fails and keeps them. A read
// of a clean line the cache file cannot serve comes from home.
#include "failing_device.hpp"

#include <gtest/gtest.h>

namespace iosig::tier {
namespace {

using test_support::pattern;
using test_support::read_file;
using test_support::slice;

constexpr std::size_t line = test_support::device_test_line;

// FailingDevice with the cache file refusing writes from its next one on.
struct FailingCache : test_support::FailingDevice {
    void fail_cache_writes() { faults->fail_nth_write(1, {FileRole::cache}); }
};

// Line 0 is dirty (its write is only in the cache file). A second write to it that the cache file
// refuses fails, and the first write's bytes stay: they reach the home file once the cache file
// takes writes again.
TEST(CacheFileFailure, AWriteOfADirtyLineItRefusesFailsAndKeepsTheLine) {
    FailingCache t;
    ASSERT_GE(t.h, 0);
    const auto first = pattern(line, 3);
    ASSERT_EQ(t.tier->pwrite(t.h, first.data(), line, 0), static_cast<ssize_t>(line));
    t.fail_cache_writes();
    const std::vector<char> ten(10, 'w');
    EXPECT_EQ(t.tier->pwrite(t.h, ten.data(), ten.size(), 100), -EIO);
    EXPECT_EQ(t.read_line(0), first);
    t.faults->clear_failures();
    ASSERT_EQ(t.tier->fsync(t.h), 0);
    EXPECT_EQ(slice(read_file(t.home), 0, line), first);
    ASSERT_EQ(t.tier->close(t.h), 0);
}

// The cache file no longer reads. A clean line holds the home file's bytes, so its read comes from
// there; a dirty line's bytes are only in the cache file, so its read fails.
TEST(CacheFileFailure, AReadOfACleanLineItCannotReadComesFromHome) {
    FailingCache t;
    ASSERT_GE(t.h, 0);
    std::vector<char> both(2 * line);
    ASSERT_EQ(t.tier->pread(t.h, both.data(), both.size(), 0), static_cast<ssize_t>(both.size()));
    t.faults->fail_reads({FileRole::cache});
    std::vector<char> again(2 * line - 100);
    EXPECT_EQ(t.tier->pread(t.h, again.data(), again.size(), 50),
              static_cast<ssize_t>(again.size()));
    EXPECT_EQ(again, slice(t.initial, 50, again.size()));
}

TEST(CacheFileFailure, AReadOfADirtyLineItCannotReadFails) {
    FailingCache t;
    ASSERT_GE(t.h, 0);
    const auto first = pattern(line, 4);
    ASSERT_EQ(t.tier->pwrite(t.h, first.data(), line, 0), static_cast<ssize_t>(line));
    t.faults->fail_reads({FileRole::cache});
    std::vector<char> got(line);
    EXPECT_EQ(t.tier->pread(t.h, got.data(), line, 0), -EIO);
    t.faults->clear_failures();
    EXPECT_EQ(t.read_line(0), first);
}

// The file is cut inside line 2, clean in the cache, after the cache file stopped taking writes:
// the truncate cannot zero the rest of the line in its slot, so the line leaves the cache (it
// holds nothing the home file lacks), and the truncate succeeds. The file grown again reads zeros
// beyond the cut, from the cache's side and at home.
TEST(CacheFileFailure, ATruncateIntoACleanLineItCannotZeroDropsTheLine) {
    FailingCache t;
    ASSERT_GE(t.h, 0);
    const auto first = pattern(line, 4);
    ASSERT_EQ(t.tier->pwrite(t.h, first.data(), line, 0), static_cast<ssize_t>(line));
    EXPECT_EQ(t.read_line(2), slice(t.initial, 2 * line, line));
    ASSERT_EQ(t.tier->commit(), 0); // the cache file synced: nothing left for the truncate to sync
    t.fail_cache_writes();
    constexpr std::size_t cut = 2 * line + 100;
    EXPECT_EQ(t.tier->ftruncate(t.h, cut), 0);
    EXPECT_EQ(t.tier->ftruncate(t.h, 3 * line), 0);
    std::vector<char> expected = slice(t.initial, 0, cut);
    std::copy(first.begin(), first.end(), expected.begin());
    expected.resize(3 * line, 0);
    std::vector<char> got(3 * line);
    EXPECT_EQ(t.tier->pread(t.h, got.data(), got.size(), 0), static_cast<ssize_t>(got.size()));
    EXPECT_EQ(got, expected);
    t.faults->clear_failures();
    ASSERT_EQ(t.tier->fsync(t.h), 0);
    EXPECT_EQ(read_file(t.home), expected);
}

// A write over lines 0 and 1 while the cache file refuses writes: line 0, clean, goes home; line 1
// is dirty, so its part fails. As write(2) after a partial transfer, the call returns the bytes
// it wrote (before session 43: -EIO, with line 0 written all the same), and line 1 keeps its
// earlier bytes.
TEST(CacheFileFailure, AWriteThatFailsAfterItsFirstLineReturnsTheBytesItWrote) {
    FailingCache t;
    ASSERT_GE(t.h, 0);
    const auto earlier = pattern(line, 5), both = pattern(2 * line, 6);
    ASSERT_EQ(t.tier->pwrite(t.h, earlier.data(), line, line), static_cast<ssize_t>(line));
    t.fail_cache_writes();
    EXPECT_EQ(t.tier->pwrite(t.h, both.data(), both.size(), 0), static_cast<ssize_t>(line));
    EXPECT_EQ(t.read_line(0), slice(both, 0, line));
    EXPECT_EQ(t.read_line(1), earlier);
    EXPECT_EQ(slice(read_file(t.home), 0, line), slice(both, 0, line));
    t.faults->clear_failures();
    ASSERT_EQ(t.tier->fsync(t.h), 0);
    EXPECT_EQ(slice(read_file(t.home), line, line), earlier);
}

// The same for a read: line 0 is clean (read from home when the cache file cannot), line 1 dirty
// (only in the cache file): the read returns line 0's bytes, as read(2) after a partial transfer.
TEST(CacheFileFailure, AReadThatFailsAfterItsFirstLineReturnsTheBytesItRead) {
    FailingCache t;
    ASSERT_GE(t.h, 0);
    EXPECT_EQ(t.read_line(0), slice(t.initial, 0, line));
    const auto dirty = pattern(line, 7);
    ASSERT_EQ(t.tier->pwrite(t.h, dirty.data(), line, line), static_cast<ssize_t>(line));
    t.faults->fail_reads({FileRole::cache});
    std::vector<char> got(2 * line);
    EXPECT_EQ(t.tier->pread(t.h, got.data(), got.size(), 0), static_cast<ssize_t>(line));
    EXPECT_EQ(slice(got, 0, line), slice(t.initial, 0, line));
    t.faults->clear_failures();
    EXPECT_EQ(t.read_line(1), dirty);
}

} // namespace
} // namespace iosig::tier
