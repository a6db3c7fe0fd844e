// What a line's key can name (line_meta.hpp: 24 bits of file id, 40 bits of line number): a file
// the engine met after it had handed out every id gets a forgotten file's id, and nothing of that
// file reaches it (cached lines, prefetched lines, journal records); bytes past line 2^40 are out
// of reach (EFBIG) and never land in another file's line.
#include "engine_fixture.hpp"

#include <atomic>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <thread>

namespace iosig::tier {
namespace {

using test_support::pattern;
using test_support::read_file;
using test_support::read_through;
using test_support::ScratchDir;
using test_support::small_config;
using test_support::write_file;

constexpr std::size_t line = 4096;

// Waits up to 10 s until the engine knows at most `files` home files.
bool wait_for_home_files(TierCache& tier, std::uint64_t files) {
    for (int waited_ms = 0; waited_ms < 10'000; waited_ms += 10) {
        if (tier.stats().home_files <= files) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

// Reads every line of `path` through `tier` (all of them miss: a cache of 16 lines), so that the
// lines of files the engine released leave the cache and those files are forgotten.
void read_whole(TierCache& tier, const std::filesystem::path& path, std::size_t bytes) {
    const int h = tier.open_file(path, O_RDONLY);
    ASSERT_GE(h, 0);
    EXPECT_EQ(read_through(tier, h, bytes).size(), bytes);
    ASSERT_EQ(tier.close(h), 0);
}

// 60 files of 5 lines made and read back one at a time by an engine with 7 file ids and 16 lines,
// while one file stays open and is read after each: each new file takes the id of one the engine
// has forgotten, never the open file's nor one whose lines are cached (the two would share
// lines), and every file reads and ends up with its own bytes.
TEST(FileIds, AnEngineOutOfIdsGivesNewFilesTheIdsOfForgottenOnes) {
    ScratchDir dir;
    TierConfig config = small_config(dir);
    config.file_ids = 7;
    config.idle_files = 0;
    config.writeback_delay = 0.001;
    write_file(dir / "open", pattern(2 * line, 1000));
    auto tier = TierCache::open(config);
    const int open = tier->open_file(dir / "open", O_RDONLY);
    ASSERT_GE(open, 0);
    constexpr int files = 60;
    const auto name = [&](int i) { return dir / ("f" + std::to_string(i)); };
    for (int i = 0; i < files; ++i) {
        SCOPED_TRACE("file " + std::to_string(i));
        // The open file, and at most 4 with lines cached (2 + 3 x 5 + 1 lines).
        ASSERT_TRUE(wait_for_home_files(*tier, 6)) << "no file was forgotten";
        const int h = tier->open_file(name(i), O_CREAT | O_RDWR);
        ASSERT_GE(h, 0) << std::strerror(-h);
        const std::vector<char> bytes = pattern(5 * line, static_cast<unsigned>(i));
        ASSERT_EQ(tier->pwrite(h, bytes.data(), bytes.size(), 0),
                  static_cast<ssize_t>(bytes.size()));
        ASSERT_EQ(tier->close(h), 0);
        EXPECT_EQ(read_through(*tier, open, 2 * line), pattern(2 * line, 1000));
        if (i > 0) { // the file before it, read through the engine
            ASSERT_TRUE(wait_for_home_files(*tier, 6));
            const int before = tier->open_file(name(i - 1), O_RDONLY);
            ASSERT_GE(before, 0) << std::strerror(-before);
            EXPECT_EQ(read_through(*tier, before, 5 * line),
                      pattern(5 * line, static_cast<unsigned>(i - 1)));
            ASSERT_EQ(tier->close(before), 0);
        }
        EXPECT_LE(tier->stats().home_files, 7u);
    }
    EXPECT_GE(tier->stats().file_ids_reused, static_cast<std::uint64_t>(files + 1 - 7));
    ASSERT_EQ(tier->close(open), 0);
    ASSERT_EQ(tier->flush_all(), 0);
    tier.reset();
    for (int i = 0; i < files; ++i)
        EXPECT_EQ(read_file(name(i)), pattern(5 * line, static_cast<unsigned>(i))) << "file " << i;
}

// While every id names a file the engine holds, opening another fails with ENFILE before the file
// is made (the caller's own open(2), O_EXCL or not, finds it as it was); once one is forgotten,
// the open succeeds.
TEST(FileIds, WhileEveryIdNamesAFileHeldOpeningAnotherFailsWithoutMakingIt) {
    ScratchDir dir;
    TierConfig config = small_config(dir);
    config.file_ids = 2;
    config.idle_files = 0;
    auto tier = TierCache::open(config);
    const int a = tier->open_file(dir / "a", O_CREAT | O_RDWR);
    const int b = tier->open_file(dir / "b", O_CREAT | O_RDWR);
    ASSERT_GE(a, 0);
    ASSERT_GE(b, 0);
    EXPECT_EQ(tier->open_file(dir / "c", O_CREAT | O_EXCL | O_RDWR), -ENFILE);
    EXPECT_FALSE(std::filesystem::exists(dir / "c"));
    // A file the engine holds opens as before.
    const int a_again = tier->open_file(dir / "a", O_RDONLY);
    EXPECT_GE(a_again, 0);
    ASSERT_EQ(tier->close(a_again), 0);
    ASSERT_EQ(tier->close(a), 0); // no line cached: released and forgotten
    ASSERT_TRUE(wait_for_home_files(*tier, 1));
    const int c = tier->open_file(dir / "c", O_CREAT | O_EXCL | O_RDWR);
    EXPECT_GE(c, 0) << std::strerror(-c);
    ASSERT_EQ(tier->close(c), 0);
    ASSERT_EQ(tier->close(b), 0);
}

// Two threads each open a new file (O_CREAT | O_EXCL) at once while one id is free, 300 times:
// one gets a handle, the other ENFILE, and the file of that one is not made (its caller's own
// open(2) with O_EXCL then succeeds). Before session 42 both could see the id free, both made
// their files, and the second failed with ENFILE after making its file.
TEST(FileIds, TwoOpensRacingForTheLastIdMakeOnlyTheFileThatGetsIt) {
    ScratchDir dir;
    TierConfig config = small_config(dir);
    config.file_ids = 1;
    config.idle_files = 0;
    auto tier = TierCache::open(config);
    for (int round = 0; round < 300; ++round) {
        SCOPED_TRACE("round " + std::to_string(round));
        const std::filesystem::path paths[2] = {dir / ("a" + std::to_string(round)),
                                                dir / ("b" + std::to_string(round))};
        int handles[2] = {0, 0};
        std::atomic<int> ready{0};
        const auto open = [&](int i) {
            ready.fetch_add(1);
            while (ready.load() < 2) {
            }
            handles[i] = tier->open_file(paths[i], O_CREAT | O_EXCL | O_RDWR);
        };
        std::thread first(open, 0), second(open, 1);
        first.join();
        second.join();
        ASSERT_NE(handles[0] >= 0, handles[1] >= 0)
            << "handles " << handles[0] << " and " << handles[1] << ": one id, one handle";
        const int winner = handles[0] >= 0 ? 0 : 1, loser = 1 - winner;
        EXPECT_EQ(handles[loser], -ENFILE);
        EXPECT_FALSE(std::filesystem::exists(paths[loser])) << "the file that got no id was made";
        ASSERT_EQ(tier->close(handles[winner]), 0);
        ASSERT_TRUE(wait_for_home_files(*tier, 0)); // forgotten: its id is free again
    }
}

// The journal still holds the records of the forgotten file whose id a new file takes. A crash
// before a rewrite drops them: recovery writes the new file's dirty line up to the new file's
// size (100 bytes), not up to the size the old file's records gave the id (64 KiB), which would
// have grown the new file to a whole line of zeros.
TEST(FileIds, RecoveryReadsNoRecordOfTheForgottenFileWhoseIdANewFileHas) {
    ScratchDir dir;
    TierConfig config = small_config(dir);
    config.file_ids = 2;
    config.idle_files = 0;
    write_file(dir / "other", pattern(16 * line, 2));
    const std::vector<char> small = pattern(100, 3);
    {
        auto tier = TierCache::open(config);
        const int old = tier->open_file(dir / "old", O_CREAT | O_RDWR);
        ASSERT_GE(old, 0);
        const std::vector<char> bytes = pattern(16 * line, 1);
        ASSERT_EQ(tier->pwrite(old, bytes.data(), bytes.size(), 0),
                  static_cast<ssize_t>(bytes.size()));
        ASSERT_EQ(tier->close(old), 0); // its lines go home, and the journal says 64 KiB
        read_whole(*tier, dir / "other", 16 * line);
        ASSERT_TRUE(wait_for_home_files(*tier, 1)) << "the old file was not forgotten";
        const int h = tier->open_file(dir / "new", O_CREAT | O_RDWR); // the old file's id
        ASSERT_GE(h, 0) << std::strerror(-h);
        ASSERT_EQ(tier->stats().journal_rewrites, 0u);
        ASSERT_EQ(tier->pwrite(h, small.data(), small.size(), 0),
                  static_cast<ssize_t>(small.size()));
        tier->abandon();
    }
    auto tier = TierCache::open(config);
    EXPECT_EQ(tier->recovery().lines_written_home, 1u);
    tier.reset();
    EXPECT_EQ(read_file(dir / "new"), small);
    EXPECT_EQ(read_file(dir / "old"), pattern(16 * line, 1));
}

// The prefetch buffer may still hold lines a stream read ahead in a file that was then forgotten.
// A file that takes its id reads its own bytes there, not the old file's.
TEST(FileIds, AFileWithAForgottenFilesIdReadsNoneOfItsPrefetchedLines) {
    ScratchDir dir;
    TierConfig config = small_config(dir);
    config.file_ids = 2;
    config.idle_files = 0;
    config.prefetch = "stream";
    write_file(dir / "old", pattern(32 * line, 1));
    write_file(dir / "new", pattern(32 * line, 2));
    write_file(dir / "other", pattern(16 * line, 3));
    auto tier = TierCache::open(config);
    const int old = tier->open_file(dir / "old", O_RDONLY);
    ASSERT_GE(old, 0);
    std::vector<char> got(line);
    for (int i = 0; i < 4; ++i) // a stream: the lines after it are read ahead
        ASSERT_EQ(tier->pread(old, got.data(), line, static_cast<off_t>(i * line)),
                  static_cast<ssize_t>(line));
    for (int waited = 0; waited < 1000 && tier->stats().prefetches_issued < 4; ++waited)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_GE(tier->stats().prefetches_issued, 4u) << "nothing was read ahead";
    ASSERT_EQ(tier->close(old), 0);
    // Another file's lines push the old file's out of the cache, and the old file is forgotten.
    read_whole(*tier, dir / "other", 16 * line);
    ASSERT_TRUE(wait_for_home_files(*tier, 1)) << "the old file was not forgotten";
    const int h = tier->open_file(dir / "new", O_RDONLY); // the old file's id
    ASSERT_GE(h, 0) << std::strerror(-h);
    const std::vector<char> expected = pattern(32 * line, 2);
    for (int i = 0; i < 32; ++i) {
        ASSERT_EQ(tier->pread(h, got.data(), line, static_cast<off_t>(i * line)),
                  static_cast<ssize_t>(line));
        EXPECT_TRUE(std::equal(got.begin(), got.end(), expected.begin() + i * line))
            << "line " << i << " is not the new file's";
    }
    ASSERT_EQ(tier->close(h), 0);
}

// The first byte a key cannot name: line 2^40.
constexpr off_t cacheable_end = static_cast<off_t>(line) << 40;

// A write at line 2^40 of the file with id 1 would have the key of line 0 of the file with id 2
// (before session 41 it landed there). It fails with EFBIG, and so does a truncate beyond it.
TEST(KeySpace, AWritePastTheLinesAKeyCanNameFailsAndTouchesNoOtherFile) {
    ScratchDir dir;
    auto tier = TierCache::open(small_config(dir));
    const int first = tier->open_file(dir / "first", O_CREAT | O_RDWR);
    const int second = tier->open_file(dir / "second", O_CREAT | O_RDWR);
    ASSERT_GE(first, 0);
    ASSERT_GE(second, 0);
    const std::vector<char> bytes = pattern(line, 5);
    ASSERT_EQ(tier->pwrite(second, bytes.data(), line, 0), static_cast<ssize_t>(line));
    const std::vector<char> stray = pattern(line, 6);
    EXPECT_EQ(tier->pwrite(first, stray.data(), line, cacheable_end), -EFBIG);
    EXPECT_EQ(tier->pwrite(first, stray.data(), line, cacheable_end + 7 * line), -EFBIG);
    EXPECT_EQ(tier->ftruncate(first, cacheable_end + 1), -EFBIG);
    EXPECT_EQ(tier->file_size(first), 0);
    EXPECT_EQ(read_through(*tier, second, line), bytes);
    ASSERT_EQ(tier->close(first), 0);
    ASSERT_EQ(tier->close(second), 0);
    ASSERT_EQ(tier->flush_all(), 0);
    tier.reset();
    EXPECT_EQ(read_file(dir / "second"), bytes);
    EXPECT_EQ(std::filesystem::file_size(dir / "first"), 0u);
}

// On a file system that holds files that large (tmpfs, xfs, btrfs; not ext4), a write ending past
// the reach is cut short there, and a read is too; reading from there fails with EFBIG.
TEST(KeySpace, CallsReachingPastTheLinesAKeyCanNameAreShort) {
    ScratchDir dir;
    const auto probe = dir / "probe";
    write_file(probe, {});
    if (::truncate(probe.c_str(), cacheable_end + static_cast<off_t>(line)) != 0)
        GTEST_SKIP() << dir.path() << " holds no file of 4 PiB (" << std::strerror(errno)
                     << "): the short calls there need tmpfs, xfs or btrfs";
    std::filesystem::remove(probe);
    auto tier = TierCache::open(small_config(dir));
    const int h = tier->open_file(dir / "huge", O_CREAT | O_RDWR);
    ASSERT_GE(h, 0);
    const std::vector<char> bytes = pattern(line, 7);
    EXPECT_EQ(tier->pwrite(h, bytes.data(), line, cacheable_end - 100), 100);
    EXPECT_EQ(tier->file_size(h), cacheable_end);
    EXPECT_EQ(tier->append(h, bytes.data(), line), -EFBIG);
    std::vector<char> got(2 * line);
    EXPECT_EQ(tier->pread(h, got.data(), line, cacheable_end - 100), 100);
    EXPECT_TRUE(std::equal(got.begin(), got.begin() + 100, bytes.begin()));
    ASSERT_EQ(tier->close(h), 0);
    ASSERT_EQ(tier->flush_all(), 0);
    // The home file grown past the reach by another program: the engine reads up to it.
    ASSERT_EQ(::truncate((dir / "huge").c_str(), cacheable_end + 8 * static_cast<off_t>(line)), 0);
    const int again = tier->open_file(dir / "huge", O_RDONLY);
    ASSERT_GE(again, 0);
    EXPECT_EQ(tier->pread(again, got.data(), line, cacheable_end), -EFBIG);
    EXPECT_EQ(tier->pread(again, got.data(), 2 * line, cacheable_end - 100), 100);
    EXPECT_TRUE(std::equal(got.begin(), got.begin() + 100, bytes.begin()));
    ASSERT_EQ(tier->close(again), 0);
    tier.reset();
    const int fd = ::open((dir / "huge").c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(::pread(fd, got.data(), 100, cacheable_end - 100), 100);
    ::close(fd);
    EXPECT_TRUE(std::equal(got.begin(), got.begin() + 100, bytes.begin()));
}

} // namespace
} // namespace iosig::tier
