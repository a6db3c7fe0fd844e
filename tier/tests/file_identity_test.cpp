// The engine caches a file, not a path. A path can come to name another file while the engine
// holds lines of the first: a rename over it (the write-a-copy-then-rename pattern of editors and
// checkpoints), or a delete and a create. An open of the path then reaches the file that is there
// now: it reads that file's bytes and its writes land in it, and recovery after a crash never
// writes the first file's lines into it. Handles opened before keep reaching their own file, as a
// descriptor does.
#include "crash_config.hpp"
#include "engine_fixture.hpp"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <thread>

namespace iosig::tier {
namespace {

using test_support::config_for;
using test_support::four_line_config;
using test_support::pattern;
using test_support::read_file;
using test_support::read_through;
using test_support::ScratchDir;
using test_support::small_config;
using test_support::write_file;

constexpr std::size_t line = 4096;

std::uint64_t inode_of(const std::filesystem::path& path) {
    struct stat st{};
    return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

// Opens `path` through `tier`, reads it whole (its lines enter the cache), writes `bytes` at 0 and
// closes it: the engine then holds the file's lines, clean.
void cache_it(TierCache& tier, const std::filesystem::path& path, const std::vector<char>& bytes) {
    const int h = tier.open_file(path, O_RDWR);
    ASSERT_GE(h, 0);
    EXPECT_FALSE(read_through(tier, h, 4 * line).empty());
    ASSERT_EQ(tier.pwrite(h, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
    ASSERT_EQ(tier.close(h), 0);
}

// A copy written beside the file and renamed over it: the next open reads the copy, and a write
// through it lands in the file at that path. Before session 32 the open found the engine's file
// by its path: it read the replaced file's cached lines, and its write went to the replaced file,
// which no path names any more (lost, fsync and all).
TEST(FileIdentity, AFileRenamedOverACachedOneIsReadAndWrittenAsItselfOnTheNextOpen) {
    ScratchDir dir;
    const auto path = dir / "data.bin";
    const auto copy = dir / "data.bin.tmp";
    write_file(path, pattern(4 * line, 1));
    auto tier = TierCache::open(small_config(dir));
    cache_it(*tier, path, pattern(line, 2));
    const std::vector<char> replacement = pattern(3 * line, 3);
    write_file(copy, replacement);
    std::filesystem::rename(copy, path);

    const int h = tier->open_file(path, O_RDWR);
    ASSERT_GE(h, 0);
    EXPECT_EQ(tier->file_size(h), static_cast<off_t>(replacement.size()));
    EXPECT_EQ(read_through(*tier, h, 4 * line), replacement);
    const std::vector<char> written = pattern(100, 4);
    ASSERT_EQ(tier->pwrite(h, written.data(), written.size(), 10), 100);
    ASSERT_EQ(tier->fsync(h), 0);
    std::vector<char> expected = replacement;
    std::copy(written.begin(), written.end(), expected.begin() + 10);
    EXPECT_EQ(read_file(path), expected);
    EXPECT_EQ(tier->close(h), 0);
}

// A file deleted after the engine cached it: an open without O_CREAT fails as the system's would,
// and one with O_CREAT makes a new, empty file whose writes land at its path.
TEST(FileIdentity, ADeletedFileIsNotOpenedFromTheCacheAndOneCreatedAgainStartsEmpty) {
    ScratchDir dir;
    const auto path = dir / "data.bin";
    write_file(path, pattern(4 * line, 1));
    auto tier = TierCache::open(small_config(dir));
    cache_it(*tier, path, pattern(line, 2));
    std::filesystem::remove(path);

    EXPECT_EQ(tier->open_file(path, O_RDWR), -ENOENT);
    const int h = tier->open_file(path, O_RDWR | O_CREAT);
    ASSERT_GE(h, 0);
    EXPECT_EQ(tier->file_size(h), 0);
    EXPECT_TRUE(read_through(*tier, h, 4 * line).empty());
    const std::vector<char> written = pattern(line + 7, 5);
    ASSERT_EQ(tier->pwrite(h, written.data(), written.size(), 0),
              static_cast<ssize_t>(written.size()));
    ASSERT_EQ(tier->close(h), 0);
    EXPECT_EQ(read_file(path), written);
}

// A handle opened before the rename keeps reaching the file it opened, as a descriptor does, while
// a handle opened after it reaches the file now at the path; neither sees the other's bytes.
TEST(FileIdentity, AHandleOpenedBeforeTheRenameKeepsItsOwnFile) {
    ScratchDir dir;
    const auto path = dir / "data.bin";
    const auto copy = dir / "data.bin.tmp";
    const auto moved = dir / "old.bin";
    const std::vector<char> original = pattern(2 * line, 1);
    write_file(path, original);
    auto tier = TierCache::open(small_config(dir));
    const int before = tier->open_file(path, O_RDWR);
    ASSERT_GE(before, 0);
    EXPECT_EQ(read_through(*tier, before, 2 * line), original);
    std::filesystem::rename(path, moved);
    const std::vector<char> replacement = pattern(2 * line, 3);
    write_file(copy, replacement);
    std::filesystem::rename(copy, path);

    const int after = tier->open_file(path, O_RDWR);
    ASSERT_GE(after, 0);
    const std::vector<char> mine = pattern(line, 6);
    ASSERT_EQ(tier->pwrite(before, mine.data(), line, 0), static_cast<ssize_t>(line));
    EXPECT_EQ(read_through(*tier, after, 2 * line), replacement);
    ASSERT_EQ(tier->close(before), 0);
    ASSERT_EQ(tier->close(after), 0);
    std::vector<char> expected = original;
    std::copy(mine.begin(), mine.end(), expected.begin());
    EXPECT_EQ(read_file(moved), expected);
    EXPECT_EQ(read_file(path), replacement);
}

// A line dirty in the cache when its file is replaced by a rename, and the process crashes:
// recovery finds another file at the journaled path and leaves it alone (before session 32 it
// wrote the line into it), and counts the line as one it could not write home.
TEST(FileIdentity, RecoveryNeverWritesALineIntoTheFileThatReplacedItsOwn) {
    ScratchDir dir;
    const auto path = dir / "data.bin";
    const auto copy = dir / "data.bin.tmp";
    write_file(path, pattern(4 * line, 1));
    const std::vector<char> replacement = pattern(3 * line, 3);
    {
        auto tier = TierCache::open(four_line_config(dir, nullptr)); // nothing goes home
        const int h = tier->open_file(path, O_RDWR);
        ASSERT_GE(h, 0);
        const std::vector<char> dirty = pattern(line, 2);
        ASSERT_EQ(tier->pwrite(h, dirty.data(), line, line), static_cast<ssize_t>(line));
        ASSERT_EQ(tier->commit(), 0);
        write_file(copy, replacement);
        std::filesystem::rename(copy, path);
        tier->abandon();
    }
    auto tier = TierCache::open(config_for(dir, nullptr));
    EXPECT_EQ(read_file(path), replacement);
    EXPECT_EQ(tier->recovery().dirty_lines, 1u);
    EXPECT_EQ(tier->recovery().lines_written_home, 0u);
    EXPECT_EQ(tier->recovery().lines_of_replaced_files, 1u);
}

// The same when the file at the path is a new one in the old one's inode: a program that deletes
// its output after the crash and writes it afresh gets the old inode number back on ext4, and
// recovery tells the two apart by their birth times (before session 35 it compared the inode
// number alone, and wrote the old file's line into the new one).
TEST(FileIdentity, RecoveryNeverWritesALineIntoANewFileInTheInodeOfItsOwn) {
    ScratchDir dir(ScratchDir::On::disk);
    const auto path = dir / "data.bin";
    ASSERT_EQ(test_support::leave_a_dirty_line(dir, path, pattern(line, 2)), "");
    const std::uint64_t old_inode = inode_of(path);
    std::filesystem::remove(path); // the engine's descriptors are closed: the inode is free
    const std::vector<char> replacement = pattern(3 * line, 3);
    write_file(path, replacement);
    if (inode_of(path) != old_inode)
        GTEST_SKIP() << "the file system gave the new file another inode than the deleted one's ("
                     << inode_of(path) << ", not " << old_inode << "): nothing to tell apart";
    auto tier = TierCache::open(config_for(dir, nullptr));
    EXPECT_EQ(read_file(path), replacement);
    EXPECT_EQ(tier->recovery().dirty_lines, 1u);
    EXPECT_EQ(tier->recovery().lines_written_home, 0u);
    EXPECT_EQ(tier->recovery().lines_of_replaced_files, 1u);
}

// A file the engine released keeps its lines and its identity, and ext4 may give its inode number
// to a new file at its path: the engine reads the new file afresh, and journals it with its own
// birth time, so that a line written to it and dirty at a crash is recovered into it (with the
// old file's birth time in the journal, recovery would take it for another file and drop the
// line).
TEST(FileIdentity, ALineOfANewFileInAReleasedFilesInodeIsRecoveredIntoIt) {
    ScratchDir dir(ScratchDir::On::disk);
    const auto path = dir / "data.bin";
    write_file(path, pattern(4 * line, 1));
    const std::uint64_t old_inode = inode_of(path);
    TierConfig config = four_line_config(dir, nullptr); // nothing goes home
    config.idle_files = 0;                              // released at its last close
    const std::vector<char> replacement = pattern(3 * line, 3);
    const std::vector<char> dirty = pattern(line, 2);
    {
        auto tier = TierCache::open(config);
        int h = tier->open_file(path, O_RDONLY);
        ASSERT_GE(h, 0);
        ASSERT_EQ(read_through(*tier, h, 4 * line), pattern(4 * line, 1));
        ASSERT_EQ(tier->close(h), 0);
        std::filesystem::remove(path);
        write_file(path, replacement);
        if (inode_of(path) != old_inode)
            GTEST_SKIP() << "the file system gave the new file another inode than the deleted "
                            "one's: nothing to tell apart";
        h = tier->open_file(path, O_RDWR);
        ASSERT_GE(h, 0);
        ASSERT_EQ(read_through(*tier, h, 4 * line), replacement);
        ASSERT_EQ(tier->pwrite(h, dirty.data(), line, line), static_cast<ssize_t>(line));
        ASSERT_EQ(tier->commit(), 0);
        tier->abandon();
    }
    auto tier = TierCache::open(config_for(dir, nullptr));
    std::vector<char> expected = replacement;
    std::copy(dirty.begin(), dirty.end(), expected.begin() + line);
    EXPECT_EQ(read_file(path), expected);
    EXPECT_EQ(tier->recovery().lines_written_home, 1u);
    EXPECT_EQ(tier->recovery().lines_of_replaced_files, 0u);
}

// The same after the journal was rewritten (past 1 KiB) since the file was opened: the rewritten
// journal names the file with its inode too.
TEST(FileIdentity, ARewrittenJournalStillNamesTheFilesInode) {
    ScratchDir dir;
    const auto path = dir / "data.bin";
    const auto other = dir / "other.bin";
    const auto copy = dir / "data.bin.tmp";
    write_file(path, pattern(4 * line, 1));
    write_file(other, pattern(2 * line, 8));
    const std::vector<char> replacement = pattern(3 * line, 3);
    auto faults = std::make_shared<IoFaults>();
    {
        TierConfig config = config_for(dir, faults, 1024);
        config.writeback_delay = 0.001;
        auto tier = TierCache::open(config);
        const int h = tier->open_file(path, O_RDWR);
        const int o = tier->open_file(other, O_RDWR);
        ASSERT_GE(h, 0);
        ASSERT_GE(o, 0);
        // The other file's lines written and written back until the journal was rewritten twice.
        const std::vector<char> two = pattern(2 * line, 9);
        for (int round = 0; round < 200 && tier->stats().journal_rewrites < 2; ++round) {
            ASSERT_EQ(tier->pwrite(o, two.data(), two.size(), 0), static_cast<ssize_t>(two.size()));
            for (int wait = 0; wait < 1000 && tier->stats().dirty_lines > 0; ++wait)
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        ASSERT_GE(tier->stats().journal_rewrites, 2u);
        // A line of the first file dirty at the crash: the home device refuses its write-back.
        faults->fail_now({FileRole::home});
        const std::vector<char> dirty = pattern(line, 2);
        ASSERT_EQ(tier->pwrite(h, dirty.data(), line, line), static_cast<ssize_t>(line));
        ASSERT_EQ(tier->stats().dirty_lines, 1u);
        write_file(copy, replacement);
        std::filesystem::rename(copy, path);
        tier->abandon();
    }
    auto tier = TierCache::open(config_for(dir, nullptr));
    EXPECT_EQ(read_file(path), replacement);
    EXPECT_EQ(tier->recovery().lines_of_replaced_files, 1u);
}

// A file renamed while the engine holds a dirty line of it, and opened again by its new path:
// recovery finds it there (before session 32 it looked only at the first path, found nothing,
// and the line was lost).
TEST(FileIdentity, RecoveryFindsAFileByThePathItWasLastOpenedBy) {
    ScratchDir dir;
    const auto first = dir / "data.bin.tmp";
    const auto last = dir / "data.bin";
    std::vector<char> expected = pattern(2 * line, 1);
    write_file(first, expected);
    const std::vector<char> dirty = pattern(line, 2);
    std::copy(dirty.begin(), dirty.end(), expected.begin() + line);
    {
        auto tier = TierCache::open(four_line_config(dir, nullptr)); // nothing goes home
        const int h = tier->open_file(first, O_RDWR);
        ASSERT_GE(h, 0);
        ASSERT_EQ(tier->pwrite(h, dirty.data(), line, line), static_cast<ssize_t>(line));
        std::filesystem::rename(first, last);
        const int again = tier->open_file(last, O_RDONLY);
        ASSERT_GE(again, 0);
        EXPECT_EQ(read_through(*tier, again, 2 * line), expected);
        tier->abandon();
    }
    auto tier = TierCache::open(config_for(dir, nullptr));
    EXPECT_EQ(read_file(last), expected);
    EXPECT_EQ(tier->recovery().lines_written_home, 1u);
}

// A file opened to read through a symbolic link and closed; then it is moved, and the link made to
// lead to its new name. An open of the link for writing reaches the file, and recovery after a
// crash finds the dirty line's file where it is now. Since session 45 an open by the path a held
// file was opened by last keeps the canonical path the engine has, while that path still leads to
// the file (found by the kernel reference: an open that kept a path the move had made stale
// failed with ENOENT).
TEST(FileIdentity, AFileOpenedThroughALinkThatNowLeadsToItsNewNameIsFoundThere) {
    ScratchDir dir;
    const auto first = dir / "a", moved = dir / "c", link = dir / "b";
    std::vector<char> expected = pattern(2 * line, 1);
    write_file(first, expected);
    std::filesystem::create_symlink("a", link);
    const std::vector<char> dirty = pattern(line, 2);
    std::copy(dirty.begin(), dirty.end(), expected.begin() + line);
    {
        auto tier = TierCache::open(four_line_config(dir, nullptr)); // nothing goes home
        int h = tier->open_file(link, O_RDONLY);
        ASSERT_GE(h, 0);
        EXPECT_EQ(read_through(*tier, h, 2 * line), pattern(2 * line, 1));
        ASSERT_EQ(tier->close(h), 0);
        std::filesystem::rename(first, moved);
        std::filesystem::remove(link);
        std::filesystem::create_symlink("c", link);
        h = tier->open_file(link, O_RDWR);
        ASSERT_GE(h, 0) << "the open of the link failed: " << h;
        ASSERT_EQ(tier->pwrite(h, dirty.data(), line, line), static_cast<ssize_t>(line));
        EXPECT_EQ(read_through(*tier, h, 2 * line), expected);
        tier->abandon();
    }
    auto tier = TierCache::open(config_for(dir, nullptr));
    EXPECT_EQ(read_file(moved), expected);
    EXPECT_EQ(tier->recovery().lines_written_home, 1u);
}

// The same file reached by another path (a hard link) is one file to the engine: a write through
// one path is read through the other, before and after it goes home.
TEST(FileIdentity, TwoPathsToOneFileShareItsLines) {
    ScratchDir dir;
    const auto path = dir / "data.bin";
    const auto link = dir / "link.bin";
    write_file(path, pattern(2 * line, 1));
    std::filesystem::create_hard_link(path, link);
    auto tier = TierCache::open(small_config(dir));
    const int a = tier->open_file(path, O_RDWR);
    const int b = tier->open_file(link, O_RDONLY);
    ASSERT_GE(a, 0);
    ASSERT_GE(b, 0);
    EXPECT_EQ(read_through(*tier, b, 2 * line), pattern(2 * line, 1));
    const std::vector<char> written = pattern(line, 7);
    ASSERT_EQ(tier->pwrite(a, written.data(), line, line), static_cast<ssize_t>(line));
    std::vector<char> expected = pattern(2 * line, 1);
    std::copy(written.begin(), written.end(), expected.begin() + line);
    EXPECT_EQ(read_through(*tier, b, 2 * line), expected);
    ASSERT_EQ(tier->close(a), 0);
    EXPECT_EQ(read_file(link), expected);
    ASSERT_EQ(tier->close(b), 0);
}

// A file opened to read only, then for writing while a thread reads it through the first handle
// (its reads miss, so they read the home file): the engine takes the writing handle's descriptor
// for the file, and the reads in flight on the old one go on (before session 32 the old one was
// closed under them: a use after free that AddressSanitizer and ThreadSanitizer report). Over 20
// files, each read checked.
TEST(FileIdentity, AFileOpenedForWritingWhileItIsReadLosesNoRead) {
    ScratchDir dir;
    const std::vector<char> bytes = pattern(64 * line, 5);
    auto tier = TierCache::open(small_config(dir, 4));
    for (int k = 0; k < 20; ++k) {
        const auto path = dir / ("file" + std::to_string(k));
        write_file(path, bytes);
        const int reader = tier->open_file(path, O_RDONLY);
        ASSERT_GE(reader, 0);
        std::atomic<bool> stop{false};
        std::atomic<int> bad_reads{0};
        std::thread reading([&] {
            std::vector<char> got(line);
            for (std::size_t l = 0; !stop.load(); l = (l + 17) % 64) {
                const auto at = static_cast<off_t>(l * line);
                if (tier->pread(reader, got.data(), line, at) != static_cast<ssize_t>(line) ||
                    !std::equal(got.begin(), got.end(), bytes.begin() + at))
                    ++bad_reads;
            }
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        const int writer = tier->open_file(path, O_RDWR);
        EXPECT_GE(writer, 0);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        stop = true;
        reading.join();
        EXPECT_EQ(bad_reads.load(), 0) << "file " << k;
        EXPECT_EQ(tier->close(writer), 0);
        EXPECT_EQ(tier->close(reader), 0);
    }
}

} // namespace
} // namespace iosig::tier
