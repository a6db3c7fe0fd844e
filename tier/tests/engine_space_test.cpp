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

} // namespace
} // namespace iosig::tier
