// Discovery on the device lab (tests/lab): the ramdisk is RAM and volatile, the hdd a loop device
// over a file of the lab, the raid1 a complex raid1 of two loop devices, ssd and shared the root
// device; a read-only mount is skipped with its reason. Needs root and the ctest fixture "lab".
#include "discovery.hpp"

#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

namespace iosig::calibrate {
namespace {
namespace fs = std::filesystem;

class Lab : public ::testing::Test {
protected:
    void SetUp() override {
        if (geteuid() != 0) GTEST_SKIP() << "the device lab needs root";
        const char* dir = std::getenv("IOSIG_LAB_DIR");
        if (dir == nullptr)
            GTEST_SKIP() << "IOSIG_LAB_DIR is not set (run through ctest, fixture 'lab')";
        lab_ = fs::canonical(dir);
        ASSERT_TRUE(fs::exists(lab_ / "lab.yaml")) << "the lab is not up at " << lab_;
    }
    std::string mnt(const char* name) const { return (lab_ / "mnt" / name).string(); }
    const MountTarget& target(const Discovery& d, const std::string& path) const {
        for (const MountTarget& t : d.mounts)
            if (t.path == path) return t;
        throw std::runtime_error("not discovered: " + path);
    }
    fs::path lab_;
};

TEST_F(Lab, EveryLabMountIsWhatTheLabBuilt) {
    DiscoveryOptions o;
    o.include = {mnt("ramdisk"), mnt("ssd"), mnt("hdd"), mnt("raid1"), mnt("shared"), "/"};
    const Discovery d = discover(o);
    ASSERT_EQ(d.mounts.size(), 6u);
    EXPECT_TRUE(d.skipped.empty());

    const MountTarget& ram = target(d, mnt("ramdisk"));
    EXPECT_EQ(ram.entry.fs_type, "tmpfs");
    EXPECT_TRUE(ram.is_volatile);
    EXPECT_EQ(d.devices.at(ram.device).media, MediaKind::ram);
    EXPECT_EQ(ram.capacity, std::uint64_t(1) << 30);

    const std::string root_device = target(d, "/").device;
    const MountTarget& ssd = target(d, mnt("ssd"));
    EXPECT_EQ(ssd.device, root_device) << "ssd is a directory on the root file system";
    EXPECT_EQ(ssd.entry.mount_point, "/");
    const MountTarget& shared = target(d, mnt("shared"));
    EXPECT_EQ(shared.group, ssd.group) << "same file system: measured once";
    EXPECT_FALSE(shared.global) << "a local directory is not global unless an override says so";

    const MountTarget& hdd = target(d, mnt("hdd"));
    const DeviceModel& loop = d.devices.at(hdd.device);
    EXPECT_EQ(loop.kind, "loop");
    EXPECT_EQ(loop.backing_file, (lab_ / "img" / "hdd.img").string());
    EXPECT_EQ(loop.structure, DeviceStructure::partition);
    EXPECT_EQ(loop.owner, root_device) << "the backing file lives on the root device";
    EXPECT_EQ(loop.capacity, std::uint64_t(4) << 30);

    const MountTarget& raid = target(d, mnt("raid1"));
    const DeviceModel& r = d.devices.at(raid.device);
    EXPECT_EQ(r.structure, DeviceStructure::complex);
    EXPECT_EQ(r.scheme, RedundancyScheme::raid1);
    ASSERT_EQ(r.members.size(), 2u);
    for (const std::string& m : r.members) {
        const DeviceModel& member = d.devices.at(m);
        EXPECT_EQ(member.kind, "loop");
        EXPECT_EQ(fs::path(member.backing_file).parent_path(), lab_ / "img");
        EXPECT_EQ(member.owner, root_device);
    }
}

TEST_F(Lab, ReadOnlyMountsAreListedWithTheReasonAndNotMeasured) {
    const fs::path ro = lab_ / ("ro-test-" + std::to_string(getpid()));
    fs::create_directories(ro);
    ASSERT_EQ(mount("iosig-ro-test", ro.c_str(), "tmpfs", MS_RDONLY, "size=1m"), 0)
        << strerror(errno);
    DiscoveryOptions o;
    o.include = {ro.string(), mnt("ramdisk")};
    Discovery d;
    EXPECT_NO_THROW(d = discover(o));
    umount(ro.c_str());
    fs::remove(ro);
    ASSERT_EQ(d.skipped.size(), 1u);
    EXPECT_EQ(d.skipped[0].path, ro.string());
    EXPECT_EQ(d.skipped[0].reason, "read-only mount");
    ASSERT_EQ(d.mounts.size(), 1u);
    EXPECT_EQ(d.mounts[0].path, mnt("ramdisk"));
}

TEST_F(Lab, WholeMachineDiscoveryFindsTheLabMountsAndSkipsSystemOnes) {
    const Discovery d = discover(DiscoveryOptions{});
    bool ramdisk = false, hdd = false, raid = false;
    for (const MountTarget& t : d.mounts) {
        ramdisk |= t.path == mnt("ramdisk");
        hdd |= t.path == mnt("hdd");
        raid |= t.path == mnt("raid1");
        EXPECT_FALSE(t.path.starts_with("/proc") || t.path.starts_with("/sys")) << t.path;
    }
    EXPECT_TRUE(ramdisk && hdd && raid);
    const DiscoveryOptions excluding{{}, {lab_.string()}};
    for (const MountTarget& t : discover(excluding).mounts)
        EXPECT_FALSE(t.path.starts_with(lab_.string())) << t.path;
}

} // namespace
} // namespace iosig::calibrate
