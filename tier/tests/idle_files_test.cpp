// Idle files: the engine keeps the descriptors of at most TierConfig::idle_files home files no
// handle has open, and of no deleted one, so that a program opening files one at a time needs no
// descriptor per file it ever opened. A released file keeps its cached lines, and its bytes are as
// durable as if the engine had kept it open.
#include "engine_fixture.hpp"

#include <cstring>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

namespace iosig::tier {
namespace {

using test_support::descriptors_naming;
using test_support::pattern;
using test_support::read_file;
using test_support::read_through;
using test_support::ScratchDir;
using test_support::small_config;
using test_support::write_file;

constexpr std::size_t line = 4096;

int open_descriptors() {
    int count = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd"))
        ++count;
    return count;
}

// Lowers this process's descriptor limit for the test's scope.
class DescriptorLimit {
public:
    explicit DescriptorLimit(rlim_t soft) {
        getrlimit(RLIMIT_NOFILE, &saved_);
        rlimit lowered = saved_;
        lowered.rlim_cur = soft;
        set_ = setrlimit(RLIMIT_NOFILE, &lowered) == 0;
    }
    ~DescriptorLimit() { setrlimit(RLIMIT_NOFILE, &saved_); }
    bool set() const { return set_; }

private:
    rlimit saved_{};
    bool set_ = false;
};

// Files named <prefix>0 .. <prefix><count-1> in `dir`, file i holding pattern(bytes, i).
std::filesystem::path numbered(const ScratchDir& dir, const std::string& prefix, int i) {
    return dir / (prefix + std::to_string(i));
}

// Makes the files one at a time through `tier`: created, written in one call, closed. Returns
// the most home files the engine knew after a close (TierStats::home_files), or 0 when a call
// failed (the failure is reported).
std::uint64_t make_files_one_at_a_time(TierCache& tier, const ScratchDir& dir,
                                       const std::string& prefix, int count, std::size_t bytes) {
    std::uint64_t most = 0;
    for (int i = 0; i < count; ++i) {
        const int h = tier.open_file(numbered(dir, prefix, i), O_CREAT | O_RDWR);
        EXPECT_GE(h, 0) << "file " << i << ": " << std::strerror(-h);
        const std::vector<char> data = pattern(bytes, static_cast<unsigned>(i));
        if (h < 0 ||
            tier.pwrite(h, data.data(), data.size(), 0) != static_cast<ssize_t>(data.size()) ||
            tier.close(h) != 0) {
            ADD_FAILURE() << "file " << i;
            return 0;
        }
        most = std::max(most, tier.stats().home_files);
    }
    return most;
}

// "" when every file holds what make_files_one_at_a_time wrote; else the first that does not.
std::string check_numbered_files(const ScratchDir& dir, const std::string& prefix, int count,
                                 std::size_t bytes) {
    for (int i = 0; i < count; ++i)
        if (read_file(numbered(dir, prefix, i)) != pattern(bytes, static_cast<unsigned>(i)))
            return numbered(dir, prefix, i).filename().string();
    return "";
}

// 300 files written and closed one at a time under a limit of 48 descriptors more than the engine
// started with: every open succeeds and every byte arrives (before session 33 the engine held a
// descriptor or two of every file it had opened, and the open of the 25th failed with
// EMFILE).
TEST(IdleFiles, AProgramOpeningFilesOneAtATimeNeedsNoDescriptorPerFile) {
    ScratchDir dir;
    TierConfig config = small_config(dir);
    config.idle_files = 8;
    auto tier = TierCache::open(config);
    const DescriptorLimit limit(static_cast<rlim_t>(open_descriptors() + 48));
    ASSERT_TRUE(limit.set());
    constexpr int files = 300;
    ASSERT_GT(make_files_one_at_a_time(*tier, dir, "file-", files, line + 100), 0u);
    ASSERT_EQ(tier->flush_all(), 0);
    tier.reset();
    EXPECT_EQ(check_numbered_files(dir, "file-", files, line + 100), "");
}

// A file released for others is found again by its next open, its lines still cached: reading
// them costs no fill.
TEST(IdleFiles, AReleasedFileIsServedFromItsCachedLines) {
    ScratchDir dir;
    TierConfig config = small_config(dir);
    config.idle_files = 1;
    const auto path = dir / "kept.bin";
    const std::vector<char> bytes = pattern(2 * line, 7);
    write_file(path, bytes);
    auto tier = TierCache::open(config);
    int h = tier->open_file(path, O_RDONLY);
    ASSERT_GE(h, 0);
    ASSERT_EQ(read_through(*tier, h, 2 * line), bytes);
    ASSERT_EQ(tier->close(h), 0);
    EXPECT_GT(descriptors_naming(path), 0) << "an idle file within the limit keeps its descriptor";
    for (const char* other : {"b", "c"}) {
        write_file(dir / other, pattern(line, 8));
        const int o = tier->open_file(dir / other, O_RDONLY);
        ASSERT_GE(o, 0);
        ASSERT_EQ(tier->close(o), 0);
    }
    EXPECT_EQ(descriptors_naming(path), 0) << "the longest idle file beyond the limit is released";

    const TierStats before = tier->stats();
    h = tier->open_file(path, O_RDONLY);
    ASSERT_GE(h, 0);
    EXPECT_EQ(read_through(*tier, h, 2 * line), bytes);
    EXPECT_EQ(tier->stats().fills, before.fills);
    EXPECT_EQ(tier->stats().read_hits, before.read_hits + 2);
    ASSERT_EQ(tier->close(h), 0);
}

// The inode of a released file may come to belong to another file (ext4 hands freed inode numbers
// out again): that file is read as it is, not through the released file's cached lines.
TEST(IdleFiles, AFileInTheInodeOfAReleasedOneIsReadAfresh) {
    ScratchDir dir(ScratchDir::On::disk);
    TierConfig config = small_config(dir);
    config.idle_files = 0;
    const auto path = dir / "checkpoint";
    auto tier = TierCache::open(config);
    for (unsigned round = 0; round < 20; ++round) {
        const std::vector<char> bytes = pattern(2 * line, round);
        write_file(path, bytes);
        const int h = tier->open_file(path, O_RDONLY);
        ASSERT_GE(h, 0);
        ASSERT_EQ(read_through(*tier, h, 3 * line), bytes) << "round " << round;
        ASSERT_EQ(tier->close(h), 0);
        std::filesystem::remove(path);
    }
}

// A released file whose lines have all left the cache is forgotten: 400 files of 3 lines made one
// at a time through a 16-line cache leave the engine knowing at most the idle ones and those with
// lines cached, and the journal's rewrites leave the forgotten files' records out (before, the
// engine kept a record of 376 bytes and a FILE record for every file it had opened).
TEST(IdleFiles, AReleasedFileWithNoLineCachedIsForgotten) {
    ScratchDir dir;
    TierConfig config = small_config(dir);
    config.idle_files = 4;
    config.writeback_delay = 0.001;
    config.journal_compaction_bytes = 16 << 10;
    auto tier = TierCache::open(config);
    constexpr int files = 400;
    const std::string name = "a-file-with-a-rather-long-name-";
    const std::uint64_t most_files = make_files_one_at_a_time(*tier, dir, name, files, 3 * line);
    EXPECT_LE(most_files, 4u + 16u + 1u);
    // One more rewrite, made while nothing else happens: what it wrote is the journal's size. A
    // rewrite that kept a FILE record for every file opened (400, about 75 bytes each) would write
    // 30 KB.
    const std::uint64_t rewrites = tier->stats().journal_rewrites;
    const std::vector<char> one = pattern(line, 401);
    for (int i = 0; i < 5000 && tier->stats().journal_rewrites == rewrites; ++i) {
        const int h = tier->open_file(dir / "trigger", O_CREAT | O_RDWR);
        ASSERT_GE(h, 0);
        ASSERT_EQ(tier->pwrite(h, one.data(), line, 0), static_cast<ssize_t>(line));
        ASSERT_EQ(tier->close(h), 0);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_GT(tier->stats().journal_rewrites, rewrites);
    EXPECT_LT(std::filesystem::file_size(dir / "cache.tier.journal"), 8u << 10);
    // A forgotten file opened again is read as it is.
    const int h = tier->open_file(numbered(dir, name, 0), O_RDONLY);
    ASSERT_GE(h, 0);
    EXPECT_EQ(read_through(*tier, h, 4 * line), pattern(3 * line, 0));
    ASSERT_EQ(tier->close(h), 0);
    ASSERT_EQ(tier->flush_all(), 0);
    tier.reset();
    EXPECT_EQ(check_numbered_files(dir, name, files, 3 * line), "");
}

// A process crash after many files were forgotten: recovery writes the dirty lines of the file
// still open into it, and leaves the forgotten ones as their closes left them.
TEST(IdleFiles, RecoveryAfterFilesWereForgottenWritesTheDirtyLinesHome) {
    ScratchDir dir;
    TierConfig config = small_config(dir);
    config.idle_files = 2;
    config.journal_compaction_bytes = 8 << 10; // lines go home when the cache needs their slots
    constexpr int files = 100;
    {
        auto tier = TierCache::open(config);
        ASSERT_GT(make_files_one_at_a_time(*tier, dir, "f", files, 2 * line), 0u);
        ASSERT_LT(tier->stats().home_files, static_cast<std::uint64_t>(files));
        // The flusher rewrites the journal at its next pass (once a second here).
        for (int waited = 0; waited < 300 && tier->stats().journal_rewrites == 0; ++waited)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        ASSERT_GT(tier->stats().journal_rewrites, 0u);
        const int h = tier->open_file(dir / "open.bin", O_CREAT | O_RDWR);
        ASSERT_GE(h, 0);
        const std::vector<char> bytes = pattern(3 * line, 1000);
        ASSERT_EQ(tier->pwrite(h, bytes.data(), bytes.size(), 0),
                  static_cast<ssize_t>(bytes.size()));
        tier->abandon();
    }
    auto tier = TierCache::open(config);
    EXPECT_EQ(tier->recovery().missing_files, 0u);
    EXPECT_EQ(tier->recovery().lines_written_home, 3u);
    tier.reset();
    EXPECT_EQ(read_file(dir / "open.bin"), pattern(3 * line, 1000));
    EXPECT_EQ(check_numbered_files(dir, "f", files, 2 * line), "");
}

// Four threads open, read and close 24 files with prefetching on, while at most two are idle: the
// prefetch worker reads files that are being released. Every read returns the file's bytes.
TEST(IdleFiles, ThreadsOpeningAndClosingManyFilesReadEveryByteRight) {
    ScratchDir dir;
    TierConfig config = small_config(dir, 64);
    config.idle_files = 2;
    config.prefetch = "stream";
    constexpr int files = 24;
    for (int i = 0; i < files; ++i)
        write_file(dir / ("f" + std::to_string(i)), pattern(8 * line, static_cast<unsigned>(i)));
    auto tier = TierCache::open(config);
    std::atomic<int> wrong{0}, failed{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int round = 0; round < 30; ++round) {
                const int i = (t * 7 + round * 5) % files;
                const int h = tier->open_file(dir / ("f" + std::to_string(i)), O_RDONLY);
                if (h < 0) {
                    ++failed;
                    continue;
                }
                const auto expected = pattern(8 * line, static_cast<unsigned>(i));
                std::vector<char> got(line);
                for (std::size_t at = 0; at < expected.size(); at += line) {
                    if (tier->pread(h, got.data(), line, static_cast<off_t>(at)) !=
                            static_cast<ssize_t>(line) ||
                        !std::equal(got.begin(), got.end(), expected.begin() + at))
                        ++wrong;
                }
                if (tier->close(h) != 0) ++failed;
            }
        });
    for (auto& thread : threads)
        thread.join();
    EXPECT_EQ(failed.load(), 0);
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_EQ(tier->flush_all(), 0);
}

} // namespace
} // namespace iosig::tier
