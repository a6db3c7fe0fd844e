// Which whole disk holds a file: the answer the tier's readahead model, cachesim's write-back state
// and the CAWL validator share (iosig/block_device.hpp).
#include "iosig/block_device.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

namespace fs = std::filesystem;
using iosig::disk_of;
using iosig::disk_of_devno;

namespace {

// A sysfs tree as the kernel lays it out: /sys/dev/block/MAJ:MIN are links into /sys/devices,
// where a partition's directory sits inside its disk's and carries a `partition` file.
class FakeSysfs : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() /
                ("iosig-block-device-" + std::to_string(::getpid()) + "-" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(root_);
        const fs::path sda = root_ / "devices" / "pci0000:00" / "block" / "sda";
        fs::create_directories(sda / "sda1");
        write(sda / "dev", "8:0\n");
        write(sda / "sda1" / "dev", "8:1\n");
        write(sda / "sda1" / "partition", "1\n");
        fs::create_directories(root_ / "dev" / "block");
        fs::create_directory_symlink(sda, root_ / "dev" / "block" / "8:0");
        fs::create_directory_symlink(sda / "sda1", root_ / "dev" / "block" / "8:1");
        disk_ = fs::canonical(sda);
    }
    void TearDown() override { fs::remove_all(root_); }

    static void write(const fs::path& file, const std::string& text) {
        std::ofstream(file) << text;
    }

    fs::path root_;
    fs::path disk_;
};

} // namespace

TEST_F(FakeSysfs, AWholeDiskIsItsOwnDisk) {
    const auto disk = disk_of_devno(8, 0, root_);
    ASSERT_TRUE(disk);
    EXPECT_EQ(disk->devno, "8:0");
    EXPECT_EQ(disk->sysfs_dir, disk_);
}

TEST_F(FakeSysfs, APartitionBelongsToTheDiskAboveIt) {
    const auto disk = disk_of_devno(8, 1, root_);
    ASSERT_TRUE(disk);
    EXPECT_EQ(disk->devno, "8:0");
    EXPECT_EQ(disk->sysfs_dir, disk_);
}

TEST_F(FakeSysfs, ADeviceNumberSysfsDoesNotKnowHasNoDisk) {
    EXPECT_FALSE(disk_of_devno(8, 2, root_));
    EXPECT_FALSE(disk_of_devno(0, 0, root_ / "missing"));
}

TEST_F(FakeSysfs, ADiskThatDoesNotSayItsNumberIsNotGuessed) {
    fs::remove(disk_ / "dev");
    EXPECT_FALSE(disk_of_devno(8, 0, root_));
}

TEST(DiskOf, FilesOnNoBlockDeviceHaveNone) {
    EXPECT_FALSE(disk_of("/proc/self/status"));  // procfs
    EXPECT_FALSE(disk_of("/nonexistent/iosig")); // nothing there
}

// A block device node stands for its own device, not for the file system its node lives on.
TEST(DiskOf, ABlockDeviceNodeIsItsOwnDisk) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to attach a loop device";
    const fs::path image =
        fs::temp_directory_path() / ("iosig-disk-of-" + std::to_string(::getpid()));
    std::ofstream(image).close();
    fs::resize_file(image, 1 << 20);
    std::string loop;
    if (const std::unique_ptr<FILE, int (*)(FILE*)> pipe(
            ::popen(("losetup -f --show " + image.string() + " 2>/dev/null").c_str(), "r"),
            ::pclose);
        pipe) {
        char line[256] = {};
        if (std::fgets(line, sizeof line, pipe.get())) loop = line;
        while (!loop.empty() && loop.back() == '\n')
            loop.pop_back();
    }
    if (loop.empty()) {
        fs::remove(image);
        GTEST_SKIP() << "losetup could not attach " << image << " (no loop devices here)";
    }
    struct stat st{};
    ASSERT_EQ(::stat(loop.c_str(), &st), 0) << loop;
    const auto disk = disk_of(loop);
    const auto holding_image = disk_of(image);
    EXPECT_EQ(std::system(("losetup -d " + loop).c_str()), 0);
    fs::remove(image);
    ASSERT_TRUE(disk) << loop;
    EXPECT_EQ(disk->devno,
              std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev)));
    EXPECT_EQ(disk->sysfs_dir.filename(), fs::path(loop).filename());
    if (holding_image) EXPECT_NE(holding_image->devno, disk->devno); // the image's file system
}
