// When an idle file is released: a deleted file at once (at its last close, or within a second of
// its deletion, with its cached lines); one the prefetch worker is reading after the read. One
// with bytes to sync: idle_release_sync_test.cpp. The rest of idle files: idle_files_test.cpp.
#include "engine_fixture.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <thread>

namespace iosig::tier {
namespace {

using test_support::descriptors_naming;
using test_support::pattern;
using test_support::read_through;
using test_support::ScratchDir;
using test_support::small_config;
using test_support::write_file;

constexpr std::size_t line = 4096;

// Waits up to 10 s until the engine knows no file and holds no descriptor naming `path`.
void wait_until_forgotten(TierCache& tier, const std::filesystem::path& path) {
    for (int waited_ms = 0;
         waited_ms < 10'000 && (descriptors_naming(path) > 0 || tier.stats().home_files > 0);
         waited_ms += 10)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

// A file deleted while open is released at its last close, however few files are idle: its blocks
// are free then, as they would be without the engine (before session 33 they stayed allocated until
// the engine closed).
TEST(IdleFiles, AFileDeletedWhileOpenIsReleasedAtItsLastClose) {
    ScratchDir dir;
    auto tier = TierCache::open(small_config(dir));
    const auto path = dir / "scratch.bin";
    const int h = tier->open_file(path, O_CREAT | O_RDWR);
    ASSERT_GE(h, 0);
    const std::vector<char> bytes = pattern(3 * line, 9);
    ASSERT_EQ(tier->pwrite(h, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
    std::filesystem::remove(path);
    ASSERT_EQ(tier->close(h), 0);
    EXPECT_EQ(descriptors_naming(path), 0);
}

// A file deleted after its last close, while it waits among the idle files, gives its blocks and
// its cache lines back within seconds: the engine looks at its idle files once a second, releases a
// deleted one and drops its lines, which nobody can ask for again, so it forgets the file (before
// session 34 the engine held the descriptor, and the blocks, until 64 other files had gone idle,
// and the lines until they were evicted). A file deleted while open gives its lines back at its
// last close.
TEST(IdleFiles, AFileDeletedAfterItsLastCloseGivesItsBlocksAndLinesBack) {
    ScratchDir dir;
    auto tier = TierCache::open(small_config(dir));
    const std::vector<char> bytes = pattern(3 * line, 11);
    for (const bool deleted_while_open : {false, true}) {
        SCOPED_TRACE(deleted_while_open ? "deleted while open" : "deleted after its last close");
        const auto path = dir / (deleted_while_open ? "deleted-while-open" : "deleted-after-close");
        const int h = tier->open_file(path, O_CREAT | O_RDWR);
        ASSERT_GE(h, 0);
        ASSERT_EQ(tier->pwrite(h, bytes.data(), bytes.size(), 0),
                  static_cast<ssize_t>(bytes.size()));
        if (deleted_while_open) std::filesystem::remove(path);
        ASSERT_EQ(tier->close(h), 0);
        if (!deleted_while_open) {
            ASSERT_GE(descriptors_naming(path), 1) << "an idle file keeps its descriptors";
            ASSERT_EQ(tier->stats().home_files, 1u);
            std::filesystem::remove(path);
        }
        wait_until_forgotten(*tier, path);
        EXPECT_EQ(descriptors_naming(path), 0);
        EXPECT_EQ(tier->stats().home_files, 0u) << "its lines stayed in the cache";
    }
}

// A 64-line cache whose prefetch worker follows streams, with home reads of 50 ms each.
TierConfig slow_prefetching(const ScratchDir& dir, std::uint64_t idle_files) {
    TierConfig config = small_config(dir, 64);
    config.idle_files = idle_files;
    config.prefetch = "stream";
    config.prefetch_lines = 16;
    config.faults = std::make_shared<IoFaults>();
    config.faults->slow_down_reads(FileRole::home, std::chrono::milliseconds(50));
    return config;
}

// Writes `bytes` to `path` and reads its first three lines through `tier` (made with a
// slow_prefetching config): returns the open handle once the worker is reading lines ahead, or -1
// (the failure reported).
int open_while_the_worker_reads(TierCache& tier, const TierConfig& config,
                                const std::filesystem::path& path, const std::vector<char>& bytes) {
    write_file(path, bytes);
    const int h = tier.open_file(path, O_RDONLY);
    EXPECT_GE(h, 0);
    std::vector<char> got(line);
    for (std::size_t at = 0; h >= 0 && at < 3 * line; at += line) { // the third confirms the stream
        if (tier.pread(h, got.data(), line, static_cast<off_t>(at)) != static_cast<ssize_t>(line) ||
            !std::equal(got.begin(), got.end(), bytes.begin() + static_cast<long>(at))) {
            ADD_FAILURE() << "the read at " << at;
            return -1;
        }
    }
    // The worker is reading once a home read that no demand fill made has begun (IoFaults counts
    // a read, then waits).
    const std::uint64_t demand_reads = tier.stats().fill_reads;
    for (int waited = 0; waited < 2000 && config.faults->reads(FileRole::home) == demand_reads;
         ++waited)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (config.faults->reads(FileRole::home) == demand_reads) {
        ADD_FAILURE() << "the worker read nothing ahead: the test does not test what it says";
        return -1;
    }
    return h;
}

// The last handle of a file closes while the prefetch worker reads lines ahead of its stream
// (50 ms a read): the release waits for the read (it gives up, and a later close releases the
// file), so the worker never reads through a closed descriptor. The ASan tree sees a release that
// did not wait as a use after free.
TEST(IdleFiles, AFileThePrefetcherIsReadingIsReleasedAfterTheRead) {
    ScratchDir dir;
    const TierConfig config = slow_prefetching(dir, 0);
    const auto path = dir / "scan.bin";
    const std::vector<char> bytes = pattern(32 * line, 13);
    write_file(dir / "other", pattern(line, 14));
    auto tier = TierCache::open(config);
    int h = open_while_the_worker_reads(*tier, config, path, bytes);
    ASSERT_GE(h, 0);
    ASSERT_EQ(tier->close(h), 0);
    EXPECT_GT(descriptors_naming(path), 0) << "released under the worker's read";
    bool released = false;
    for (int attempt = 0; attempt < 200 && !released; ++attempt) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        const int o = tier->open_file(dir / "other", O_RDONLY);
        ASSERT_GE(o, 0);
        ASSERT_EQ(tier->close(o), 0);
        released = descriptors_naming(path) == 0;
    }
    EXPECT_TRUE(released) << "a close after the read did not release the file";
    h = tier->open_file(path, O_RDONLY);
    ASSERT_GE(h, 0);
    EXPECT_EQ(read_through(*tier, h, 33 * line), bytes);
    ASSERT_EQ(tier->close(h), 0);
}

// The same with the file deleted before its last close: no close of it will come again, so the
// engine's check of its idle files, once a second, retries the release.
TEST(IdleFiles, ADeletedFileThePrefetcherIsReadingIsReleasedAfterTheRead) {
    ScratchDir dir;
    const TierConfig config = slow_prefetching(dir, 64);
    const auto path = dir / "scan.bin";
    auto tier = TierCache::open(config);
    const int h = open_while_the_worker_reads(*tier, config, path, pattern(32 * line, 15));
    ASSERT_GE(h, 0);
    std::filesystem::remove(path);
    ASSERT_EQ(tier->close(h), 0);
    EXPECT_GT(descriptors_naming(path), 0) << "released under the worker's read";
    wait_until_forgotten(*tier, path);
    EXPECT_EQ(descriptors_naming(path), 0);
    EXPECT_EQ(tier->stats().home_files, 0u) << "its lines stayed in the cache";
}

} // namespace
} // namespace iosig::tier
