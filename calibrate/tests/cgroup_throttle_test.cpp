// blk-throttle limits of this process's cgroups, from a fake /proc, cgroup and sysfs tree: a limit
// on the device (cgroup v1 blkio.throttle.*, v2 io.max) in the process's cgroup or an ancestor
// makes the device throttled, with the slice the kernel grants such a limit in; anything else,
// including unreadable or malformed files, means no limit.
#include "cgroup_throttle.hpp"
#include "discovery.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

namespace iosig::calibrate {
namespace {
namespace fs = std::filesystem;

constexpr const char* v1_mount = "38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup "
                                 "rw,blkio\n";
constexpr const char* v2_mount = "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 "
                                 "cgroup2 rw\n";

class FakeCgroups : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() /
                ("iosig-fake-cgroups-" + std::to_string(getpid()) + "-" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(root_);
        fs::create_directories(root_ / "fs");
        write(root_ / "proc" / "sys" / "kernel" / "osrelease", "6.12.0");
    }
    void TearDown() override { fs::remove_all(root_); }

    void write(const fs::path& file, const std::string& text) {
        fs::create_directories(file.parent_path());
        std::ofstream(file) << text << "\n";
    }
    // This process in the blkio cgroup `v1` and the unified cgroup `v2` (hybrid, as this machine).
    void join(const std::string& v1, const std::string& v2) {
        write(root_ / "proc" / "self" / "cgroup", "9:name=systemd:/\n7:blkio:" + v1 + "\n0::" + v2);
        write(root_ / "proc" / "self" / "mountinfo",
              std::string("23 1 254:0 / / rw - ext4 /dev/vda rw\n") + v1_mount + v2_mount);
        fs::create_directories(blkio(v1));
        fs::create_directories(unified(v2));
    }
    fs::path blkio(const std::string& cgroup) const {
        return root_ / "fs/sys/fs/cgroup/blkio" / fs::path(cgroup).relative_path();
    }
    fs::path unified(const std::string& cgroup) const {
        return root_ / "fs/sys/fs/cgroup/unified" / fs::path(cgroup).relative_path();
    }
    CgroupThrottle cgroups() const { return CgroupThrottle(root_ / "proc", root_ / "fs"); }

    // A block device in the fake sysfs (root_/sys), as discovery_sysfs_test.cpp builds them.
    fs::path add(const std::string& relative, unsigned major, unsigned minor, bool rotational) {
        const fs::path dir = root_ / "sys" / "devices" / relative;
        write(dir / "dev", std::to_string(major) + ":" + std::to_string(minor));
        write(dir / "size", "1000");
        if (relative.find('/') == std::string::npos || !fs::exists(dir.parent_path() / "queue"))
            write(dir / "queue" / "rotational", rotational ? "1" : "0");
        fs::create_directories(root_ / "sys" / "dev" / "block");
        fs::create_directories(root_ / "sys" / "class" / "block");
        fs::create_directory_symlink(dir,
                                     root_ / "sys" / "dev" / "block" /
                                         (std::to_string(major) + ":" + std::to_string(minor)));
        fs::create_directory_symlink(dir, root_ / "sys" / "class" / "block" / dir.filename());
        return dir;
    }
    DeviceThrottle throttle_of(const std::string& device,
                               const std::map<std::string, DeviceModel>& devices = {}) {
        return device_throttle(Sysfs(root_ / "sys"), cgroups(), devices, device);
    }

    fs::path root_;
};

TEST_F(FakeCgroups, V1LimitOnTheDeviceIsALimit) {
    join("/jobs/42", "/");
    write(blkio("/jobs/42") / "blkio.throttle.write_iops_device", "7:0 200");
    const auto limit = cgroups().limit_on(7, 0);
    ASSERT_TRUE(limit);
    EXPECT_EQ(limit->line, "7:0 200");
    EXPECT_EQ(limit->file, (blkio("/jobs/42") / "blkio.throttle.write_iops_device").string());
    EXPECT_FALSE(cgroups().limit_on(7, 1));
}

TEST_F(FakeCgroups, V1ZeroIsNoLimit) {
    join("/jobs/42", "/");
    write(blkio("/jobs/42") / "blkio.throttle.read_bps_device", "7:0 0");
    EXPECT_FALSE(cgroups().limit_on(7, 0));
}

TEST_F(FakeCgroups, V2IoMaxWithOneFiniteRateIsALimit) {
    join("/", "/jobs/42");
    write(unified("/jobs/42") / "io.max", "8:16 rbps=max wbps=max riops=200 wiops=max");
    const auto limit = cgroups().limit_on(8, 16);
    ASSERT_TRUE(limit);
    EXPECT_EQ(limit->line, "8:16 rbps=max wbps=max riops=200 wiops=max");
}

TEST_F(FakeCgroups, V2IoMaxAllMaxIsNoLimit) {
    join("/", "/jobs/42");
    write(unified("/jobs/42") / "io.max", "8:16 rbps=max wbps=max riops=max wiops=max");
    EXPECT_FALSE(cgroups().limit_on(8, 16));
}

TEST_F(FakeCgroups, ALimitOnAnotherDeviceDoesNotCount) {
    join("/jobs/42", "/jobs/42");
    write(blkio("/jobs/42") / "blkio.throttle.read_bps_device", "8:0 1048576\n17:0 1048576");
    write(unified("/jobs/42") / "io.max", "8:0 rbps=1048576 wbps=max riops=max wiops=max");
    EXPECT_FALSE(cgroups().limit_on(7, 0));
    EXPECT_TRUE(cgroups().limit_on(8, 0));
}

TEST_F(FakeCgroups, ALimitOnAnAncestorCgroupApplies) {
    join("/jobs/42/step0", "/jobs/42/step0");
    write(blkio("/jobs") / "blkio.throttle.read_bps_device", "7:0 20971520");
    write(unified("/jobs/42") / "io.max", "8:16 rbps=max wbps=1048576 riops=max wiops=max");
    write(blkio("/") / "blkio.throttle.write_bps_device", "9:0 1048576"); // the v1 root cgroup
    const CgroupThrottle c = cgroups();
    ASSERT_TRUE(c.limit_on(7, 0));
    EXPECT_EQ(c.limit_on(7, 0)->file, (blkio("/jobs") / "blkio.throttle.read_bps_device").string());
    EXPECT_TRUE(c.limit_on(8, 16));
    EXPECT_TRUE(c.limit_on(9, 0));
}

// In a container without its own cgroup namespace, the hierarchy is mounted from the container's
// cgroup down: mountinfo's root field is that cgroup, /proc/self/cgroup the full path.
TEST_F(FakeCgroups, TheMountsRootIsCutFromTheCgroupPath) {
    write(root_ / "proc" / "self" / "cgroup", "4:cpu,blkio:/docker/abc/job");
    write(root_ / "proc" / "self" / "mountinfo",
          "38 31 0:35 /docker/abc /sys/fs/cgroup/blkio rw - cgroup cgroup rw,cpu,blkio");
    write(root_ / "fs/sys/fs/cgroup/blkio/job/blkio.throttle.read_iops_device", "7:0 200");
    EXPECT_TRUE(cgroups().limit_on(7, 0));
}

TEST_F(FakeCgroups, UnreadableOrMissingFilesMeanNoLimit) {
    // Nothing at all.
    EXPECT_NO_THROW(
        EXPECT_FALSE(CgroupThrottle(root_ / "nothing", root_ / "nothing").limit_on(7, 0)));
    // Garbage in /proc.
    write(root_ / "proc" / "self" / "cgroup", "garbage\n::\n7:blkio\n7:blkio:relative/path\n");
    write(root_ / "proc" / "self" / "mountinfo", "not a mountinfo line\n");
    EXPECT_NO_THROW(EXPECT_FALSE(cgroups().limit_on(7, 0)));
    // The cgroup directory is missing.
    write(root_ / "proc" / "self" / "cgroup", "7:blkio:/gone\n0::/gone");
    write(root_ / "proc" / "self" / "mountinfo", std::string(v1_mount) + v2_mount);
    EXPECT_NO_THROW(EXPECT_FALSE(cgroups().limit_on(7, 0)));
    // A limit file that cannot be read (a directory in its place; root reads any mode) and
    // malformed lines.
    join("/jobs/42", "/jobs/42");
    fs::create_directories(blkio("/jobs/42") / "blkio.throttle.read_bps_device");
    write(blkio("/jobs/42") / "blkio.throttle.write_bps_device", "7:0\n7:0 lots\n7:0 -5\n7:0 1 2");
    write(unified("/jobs/42") / "io.max", "7:0\n7:0 rbps=\n7:0 =5 riops wiops=max");
    EXPECT_NO_THROW(EXPECT_FALSE(cgroups().limit_on(7, 0)));
}

TEST(KernelThrottleSlice, RotationalQueuesGetTheHdSliceOnEveryKernel) {
    for (const char* release : {"4.18.0-553.el8_10.x86_64", "6.1.0-18-amd64", "6.12.0", "6.18.44"})
        EXPECT_DOUBLE_EQ(kernel_throttle_slice(true, release), 0.1) << release;
}

// 6.10 dropped CONFIG_BLK_DEV_THROTTLING_LOW but kept its 20 ms slice for non-rotational queues;
// 6.19 (and stable 6.12.63, 6.17.13, 6.18.2) restored 100 ms.
TEST(KernelThrottleSlice, NonRotationalQueuesGetTheSsdSliceFrom6_10UntilTheFix) {
    for (const char* release : {"6.10.0", "6.11.11", "6.12.0", "6.12.62-1-lts", "6.15.3-arch1-1",
                                "6.17.12", "6.18.1", "6.18.0-rc7"})
        EXPECT_DOUBLE_EQ(kernel_throttle_slice(false, release), 0.02) << release;
    for (const char* release : {"5.14.0-427.el9.x86_64", "6.9.12", "6.12.63", "6.17.13", "6.18.2",
                                "6.18.44-fc-v769", "6.19.0-rc1", "7.0.0"})
        EXPECT_DOUBLE_EQ(kernel_throttle_slice(false, release), 0.1) << release;
}

TEST(KernelThrottleSlice, AQueuesThrottleSampleTimeIsTheSlice) {
    EXPECT_DOUBLE_EQ(kernel_throttle_slice(false, "4.19.0", 20), 0.02);
    EXPECT_DOUBLE_EQ(kernel_throttle_slice(true, "4.19.0", 250), 0.25);
}

TEST(KernelThrottleSlice, AnUnreadableReleaseCountsAsCurrent) {
    EXPECT_DOUBLE_EQ(kernel_throttle_slice(false, ""), 0.1);
    EXPECT_DOUBLE_EQ(kernel_throttle_slice(false, "linux"), 0.1);
}

TEST_F(FakeCgroups, AThrottledRotationalDeviceGetsTheHdSlice) {
    join("/lab", "/");
    add("sda", 8, 0, true);
    write(blkio("/lab") / "blkio.throttle.read_iops_device", "8:0 200");
    const DeviceThrottle t = throttle_of("sda");
    EXPECT_DOUBLE_EQ(t.slice, 0.1);
    EXPECT_EQ(t.reason, "the kernel's slice for a rotational queue (sda)");
    EXPECT_NE(t.limit.find("8:0 200"), std::string::npos) << t.limit;
}

TEST_F(FakeCgroups, AThrottledNonRotationalDeviceGetsTheSsdSliceWhereTheKernelUsesIt) {
    join("/lab", "/");
    add("vdb", 252, 16, false);
    write(blkio("/lab") / "blkio.throttle.write_bps_device", "252:16 1048576");
    EXPECT_DOUBLE_EQ(throttle_of("vdb").slice, 0.02); // 6.12.0
    write(root_ / "proc" / "sys" / "kernel" / "osrelease", "6.18.44-fc-v769");
    const DeviceThrottle t = throttle_of("vdb");
    EXPECT_DOUBLE_EQ(t.slice, 0.1);
    EXPECT_NE(t.reason.find("every queue"), std::string::npos) << t.reason;
}

TEST_F(FakeCgroups, ALimitOnThePartitionOrItsDiskThrottlesThePartition) {
    join("/lab", "/");
    add("sda", 8, 0, true);
    write(add("sda/sda1", 8, 1, true) / "partition", "1");
    write(blkio("/lab") / "blkio.throttle.read_bps_device", "8:0 1048576");
    EXPECT_DOUBLE_EQ(throttle_of("sda1").slice, 0.1) << "keyed by the disk";
    write(blkio("/lab") / "blkio.throttle.read_bps_device", "8:1 1048576");
    EXPECT_DOUBLE_EQ(throttle_of("sda1").slice, 0.1) << "keyed by the partition";
    write(blkio("/lab") / "blkio.throttle.read_bps_device", "8:2 1048576");
    EXPECT_DOUBLE_EQ(throttle_of("sda1").slice, 0) << "another partition of the disk";
}

// The lab's hdd: a loop device whose queue says rotational, limited in the lab's blkio cgroup.
TEST_F(FakeCgroups, ALoopDeviceIsItsOwnDisk) {
    join("/iosig-lab", "/");
    add("vda", 254, 0, true);
    write(add("virtual/block/loop0", 7, 0, true) / "loop" / "backing_file", "/img/hdd.img");
    write(blkio("/iosig-lab") / "blkio.throttle.write_iops_device", "7:0 200");
    EXPECT_DOUBLE_EQ(throttle_of("loop0").slice, 0.1);
    EXPECT_DOUBLE_EQ(throttle_of("vda").slice, 0);
}

TEST_F(FakeCgroups, TheMembersOfAMultiDeviceBtrfsAreChecked) {
    join("/lab", "/");
    add("virtual/block/loop1", 7, 1, false);
    add("virtual/block/loop2", 7, 2, false);
    DeviceModel raid;
    raid.name = "btrfs-0e0730ef";
    raid.structure = DeviceStructure::complex;
    raid.members = {"loop1", "loop2"};
    const std::map<std::string, DeviceModel> devices = {{raid.name, raid}};
    EXPECT_DOUBLE_EQ(throttle_of(raid.name, devices).slice, 0);
    write(blkio("/lab") / "blkio.throttle.read_iops_device", "7:2 500");
    EXPECT_DOUBLE_EQ(throttle_of(raid.name, devices).slice, 0.02);
}

TEST_F(FakeCgroups, DevicesWithoutALimitOrABlockDeviceGetNoSlice) {
    join("/lab", "/");
    add("sda", 8, 0, true);
    write(blkio("/lab") / "blkio.throttle.read_iops_device", "8:16 200");
    for (const char* device : {"sda", "ram-dev-shm", "net-nfs4-srv-home", "nonexistent"})
        EXPECT_DOUBLE_EQ(throttle_of(device).slice, 0) << device;
}

// End to end through discover(): the mount's device carries the slice, other devices none.
TEST_F(FakeCgroups, DiscoveryGivesTheMountsDeviceItsThrottle) {
    join("/lab", "/");
    add("sda", 8, 0, true);
    add("sdb", 8, 16, true);
    const fs::path data = root_ / "data", scratch = root_ / "scratch";
    fs::create_directories(data);
    fs::create_directories(scratch);
    write(root_ / "proc" / "self" / "mountinfo",
          std::string(v1_mount) + v2_mount + "60 1 8:0 / " + data.string() +
              " rw - ext4 /dev/sda rw\n61 1 8:16 / " + scratch.string() + " rw - ext4 /dev/sdb rw");
    write(blkio("/lab") / "blkio.throttle.write_bps_device", "8:0 20971520");
    DiscoveryOptions o;
    o.sysfs_root = (root_ / "sys").string();
    o.mountinfo_path = (root_ / "proc" / "self" / "mountinfo").string();
    o.proc_root = (root_ / "proc").string();
    o.cgroup_fs_root = (root_ / "fs").string();
    const Discovery d = discover(o);
    ASSERT_EQ(d.mounts.size(), 2u);
    EXPECT_DOUBLE_EQ(d.devices.at("sda").throttle.slice, 0.1);
    EXPECT_DOUBLE_EQ(d.devices.at("sdb").throttle.slice, 0);
}

} // namespace
} // namespace iosig::calibrate
