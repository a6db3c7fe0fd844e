// /proc/self/mountinfo parsing: fields, escapes, optional fields, read-only, which mount holds a
// path.
#include "mountinfo.hpp"

#include <gtest/gtest.h>

namespace iosig::calibrate {
namespace {

constexpr const char* sample = "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n"
                               "24 27 0:6 / /dev rw,relatime - devtmpfs devtmpfs rw,size=123k\n"
                               "42 27 0:39 / /var/tmp/lab/mnt/ram\\040disk rw,relatime shared:5 "
                               "master:2 - tmpfs lab-ram rw,size=1048576k\n"
                               "43 27 7:0 / /var/tmp/lab/mnt/hdd rw,relatime - ext4 /dev/loop0 rw\n"
                               "44 27 0:25 /sub /mnt/readonly ro,nosuid - tmpfs none rw\n"
                               "garbage line\n"
                               "45 27 0:40 / /var/tmp/lab/mnt/hdd rw - tmpfs stacked rw\n";

TEST(Mountinfo, ParsesFieldsOptionalFieldsAndEscapes) {
    std::vector<std::string> errors;
    const auto mounts = parse_mountinfo(sample, &errors);
    ASSERT_EQ(mounts.size(), 6u);
    EXPECT_EQ(mounts[0].mount_point, "/");
    EXPECT_EQ(mounts[0].major, 254u);
    EXPECT_EQ(mounts[0].minor, 0u);
    EXPECT_EQ(mounts[0].fs_type, "ext4");
    EXPECT_EQ(mounts[0].source, "/dev/vda");
    EXPECT_EQ(mounts[2].mount_point, "/var/tmp/lab/mnt/ram disk"); // \040 is a space
    EXPECT_EQ(mounts[2].fs_type, "tmpfs"); // found after the optional fields
    EXPECT_EQ(mounts[2].source, "lab-ram");
    EXPECT_EQ(mounts[4].root, "/sub");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0], "line 6: fewer fields than mountinfo has");
}

TEST(Mountinfo, ReadOnlyFromMountOrSuperblockOptions) {
    const auto mounts = parse_mountinfo(sample);
    EXPECT_FALSE(mounts[0].read_only());
    EXPECT_TRUE(mounts[4].read_only());
    const auto superblock_ro =
        parse_mountinfo("50 27 8:1 / /x rw - ext4 /dev/sda1 ro,errors=remount-ro\n");
    EXPECT_TRUE(superblock_ro[0].read_only());
    EXPECT_FALSE(has_option("errors=remount-ro", "ro"));
    EXPECT_TRUE(has_option("rw,size=4k", "size"));
}

TEST(Mountinfo, ContainingMountIsTheLongestPrefixAndTheLastStacked) {
    const auto mounts = parse_mountinfo(sample);
    EXPECT_EQ(containing_mount(mounts, "/var/tmp/lab/mnt/ssd")->mount_point, "/");
    EXPECT_EQ(containing_mount(mounts, "/var/tmp/lab/mnt/ram disk/x")->source, "lab-ram");
    // Two mounts on the same point: the later one is the visible one.
    EXPECT_EQ(containing_mount(mounts, "/var/tmp/lab/mnt/hdd/file")->source, "stacked");
    // A prefix of a path component is not a parent directory.
    EXPECT_EQ(containing_mount(mounts, "/var/tmp/lab/mnt/hddx")->mount_point, "/");
}

TEST(Mountinfo, ReadsThisProcessesMounts) {
    const auto mounts = read_mountinfo();
    ASSERT_FALSE(mounts.empty());
    EXPECT_TRUE(containing_mount(mounts, "/").has_value());
}

} // namespace
} // namespace iosig::calibrate
