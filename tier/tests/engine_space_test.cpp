// The cache file's space is reserved when the engine opens, so that a cache larger than its file
// system fails at open with the sizes named, not with ENOSPC in the middle of a caller's IO.
#include "engine_fixture.hpp"
#include "iosig/tier/io.hpp"

#include <cerrno>
#include <cstring>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>

namespace iosig::tier {
namespace {

using test_support::ScratchDir;
using test_support::small_config;

TEST(EngineSpace, TheCacheFileIsAllocatedWhenTheEngineOpens) {
    ScratchDir dir;
    const TierConfig config = small_config(dir, 256); // 1 MiB
    auto tier = TierCache::open(config);
    struct stat st{};
    ASSERT_EQ(::stat(config.cache_file.c_str(), &st), 0);
    EXPECT_GE(static_cast<std::uint64_t>(st.st_blocks) * 512, config.cache_size)
        << "every block of the cache file is allocated, none left sparse";
}

// Needs root for a file system small enough to overflow (a 1 MiB tmpfs).
class SmallFileSystem : public ::testing::Test {
protected:
    void SetUp() override {
        if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount a 1 MiB tmpfs";
        if (::mount("iosig-tier-test", dir_.path().c_str(), "tmpfs", MS_NOSUID | MS_NODEV,
                    "size=1M") != 0)
            GTEST_SKIP() << "cannot mount a tmpfs on " << dir_.path() << ": "
                         << std::strerror(errno);
        mounted_ = true;
    }
    void TearDown() override {
        if (mounted_) ::umount2(dir_.path().c_str(), MNT_DETACH);
    }
    ScratchDir dir_;
    bool mounted_ = false;
};

TEST_F(SmallFileSystem, ACacheLargerThanItsFileSystemFailsAtOpenNamingBothSizes) {
    const TierConfig config = small_config(dir_, 1024); // 4 MiB on 1 MiB
    try {
        TierCache::open(config);
        FAIL() << "a 4 MiB cache opened on a 1 MiB file system";
    } catch (const TierError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find(config.cache_file.string()), std::string::npos) << message;
        EXPECT_NE(message.find("cannot reserve 4M"), std::string::npos) << message;
        EXPECT_NE(message.find("(1M free)"), std::string::npos) << message;
    }
    // Nothing kept: the failed reservation gave its blocks back, so a cache that fits opens.
    EXPECT_NO_THROW(TierCache::open(small_config(dir_, 128)));
}

// room_for, which the reservation falls back on where posix_fallocate is not supported and
// iosig-tierbench checks before it runs: the free space plus the blocks the file already holds.
TEST_F(SmallFileSystem, RoomForAFileIsTheFreeSpacePlusTheBlocksItAlreadyHolds) {
    std::error_code error;
    EXPECT_EQ(room_for(dir_ / "new", error), 1u << 20);
    EXPECT_FALSE(error);
    test_support::write_file(dir_ / "old", test_support::pattern(256 << 10, 1));
    EXPECT_EQ(room_for(dir_ / "old", error), 1u << 20) << "it may reuse its own 256K";
    EXPECT_EQ(room_for(dir_ / "new", error), 768u << 10);
    EXPECT_EQ(room_for(dir_ / "no-such-dir" / "file", error), 0u);
    EXPECT_TRUE(error);
}

// The journal grows on the cache's file system; when that fills up (here a filler file leaves it
// 16 KiB), its appends fail with ENOSPC. The program must not notice: writes of clean lines go
// home, writes of dirty lines stay in the cache, fsyncs succeed once the lines are home, and the
// home file ends as a serial reference says.
TEST_F(SmallFileSystem, AJournalThatFillsItsFileSystemNeverFailsTheProgram) {
    constexpr std::size_t line = 4096, lines = 256;
    ScratchDir home_dir; // on the ordinary file system
    const auto home = home_dir / "home.dat";
    std::vector<char> reference = test_support::pattern(lines * line, 1);
    test_support::write_file(home, reference);
    TierConfig config = small_config(dir_, 128); // 512 KiB of the 1 MiB
    config.writeback_delay = 0.002;
    auto tier = TierCache::open(config);
    const int h = tier->open_file(home, O_RDWR);
    ASSERT_GE(h, 0);
    std::error_code error;
    const std::uint64_t free_bytes = room_for(dir_ / "filler", error);
    ASSERT_FALSE(error);
    ASSERT_GT(free_bytes, 16u << 10);
    test_support::write_file(dir_ / "filler",
                             std::vector<char>(free_bytes - (16u << 10), 'f')); // 16 KiB left
    std::uint64_t state = 7;
    const auto next = [&] {
        return (state = state * 6364136223846793005ull + 1442695040888963407ull) >> 33;
    };
    std::vector<char> got(line);
    for (int i = 0; i < 3000; ++i) {
        const std::size_t l = next() % lines;
        const off_t at = static_cast<off_t>(l * line);
        if (next() % 4 == 0) {
            ASSERT_EQ(tier->pread(h, got.data(), line, at), static_cast<ssize_t>(line)) << i;
            ASSERT_TRUE(std::equal(got.begin(), got.end(), reference.begin() + at)) << i;
            continue;
        }
        const auto data = test_support::pattern(line, static_cast<unsigned>(100 + i));
        ASSERT_EQ(tier->pwrite(h, data.data(), line, at), static_cast<ssize_t>(line)) << i;
        std::copy(data.begin(), data.end(), reference.begin() + at);
        if (i % 32 == 31) ASSERT_EQ(tier->fsync(h), 0) << i;
    }
    EXPECT_GT(tier->stats().cache_refusals, 0u) << "the journal never filled its file system";
    ASSERT_EQ(tier->close(h), 0);
    EXPECT_EQ(test_support::read_file(home), reference);
}

} // namespace
} // namespace iosig::tier
