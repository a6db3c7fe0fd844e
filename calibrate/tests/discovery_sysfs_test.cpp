// Device structure from a fake sysfs tree (this machine has no md, dm, NVMe or pmem): partitions
// point to their disk, loop devices to the device holding their backing file, md/dm members and
// btrfs multi-device file systems become complex devices with their scheme.
#include "discovery.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

namespace iosig::calibrate {
namespace {
namespace fs = std::filesystem;

class FakeSysfs : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() /
                ("iosig-fake-sysfs-" + std::to_string(getpid()) + "-" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(root_);
        fs::create_directories(root_ / "dev" / "block");
        fs::create_directories(root_ / "class" / "block");
    }
    void TearDown() override { fs::remove_all(root_); }

    void write(const fs::path& file, const std::string& text) {
        fs::create_directories(file.parent_path());
        std::ofstream(file) << text << "\n";
    }
    // A block device directory under devices/, linked from dev/block/MAJ:MIN and class/block/NAME.
    fs::path add(const std::string& relative, unsigned major, unsigned minor, std::uint64_t sectors,
                 bool rotational = false) {
        const fs::path dir = root_ / "devices" / relative;
        write(dir / "dev", std::to_string(major) + ":" + std::to_string(minor));
        write(dir / "size", std::to_string(sectors));
        if (relative.find('/') == std::string::npos || !fs::exists(dir.parent_path() / "queue")) {
            write(dir / "queue" / "rotational", rotational ? "1" : "0");
            write(dir / "queue" / "logical_block_size", "512");
            write(dir / "queue" / "physical_block_size", "4096");
        }
        fs::create_directory_symlink(
            dir, root_ / "dev" / "block" / (std::to_string(major) + ":" + std::to_string(minor)));
        fs::create_directory_symlink(dir, root_ / "class" / "block" / dir.filename());
        return dir;
    }
    MountEntry entry(const std::string& point, const std::string& fs_type, unsigned major,
                     unsigned minor, const std::string& source) {
        MountEntry e;
        e.mount_point = point;
        e.fs_type = fs_type;
        e.major = major;
        e.minor = minor;
        e.source = source;
        return e;
    }
    fs::path root_;
};

TEST_F(FakeSysfs, PartitionBelongsToItsDisk) {
    const fs::path sda = add("sda", 8, 0, 2000, true);
    write(sda / "device" / "model", "WDC WD40EFRX");
    write(sda / "device" / "numa_node", "1");
    write(sda / "queue" / "read_ahead_kb", "2560");
    write(sda / "queue" / "max_sectors_kb", "1280");
    write(add("sda/sda1", 8, 1, 1000) / "partition", "1");
    Sysfs sysfs(root_);
    std::vector<MountEntry> mounts = {entry("/data", "ext4", 8, 1, "/dev/sda1")};
    DeviceResolver r(sysfs, mounts);
    const std::string name = r.resolve(mounts[0]);
    EXPECT_EQ(name, "sda1");
    const DeviceModel& part = r.devices().at("sda1");
    EXPECT_EQ(part.structure, DeviceStructure::partition);
    EXPECT_EQ(part.owner, "sda");
    EXPECT_EQ(part.capacity, 1000u * 512);
    const DeviceModel& disk = r.devices().at("sda");
    EXPECT_EQ(disk.media, MediaKind::hdd); // rotational
    EXPECT_EQ(disk.model, "WDC WD40EFRX");
    EXPECT_EQ(disk.capacity, 2000u * 512);
    EXPECT_EQ(r.numa_node_of("sda1"), 1);
    EXPECT_EQ(part.logical_block_size, 512u); // queue limits come from the disk
    EXPECT_EQ(part.physical_block_size, 4096u);
    EXPECT_EQ(part.read_ahead, 2560u << 10); // and so does its readahead
    EXPECT_EQ(part.max_io, 1280u << 10);
}

TEST_F(FakeSysfs, LoopDeviceIsAPartitionOfTheDeviceHoldingItsBackingFile) {
    add("nvme0n1", 259, 0, 8000);
    write(add("nvme0n1/nvme0n1p2", 259, 2, 4000) / "partition", "2");
    const fs::path loop = add("virtual/block/loop3", 7, 3, 100);
    write(loop / "loop" / "backing_file", "/srv/images/disk.img");
    Sysfs sysfs(root_);
    std::vector<MountEntry> mounts = {entry("/", "ext4", 259, 2, "/dev/nvme0n1p2"),
                                      entry("/mnt/image", "ext4", 7, 3, "/dev/loop3")};
    DeviceResolver r(sysfs, mounts);
    EXPECT_EQ(r.resolve(mounts[1]), "loop3");
    const DeviceModel& l = r.devices().at("loop3");
    EXPECT_EQ(l.kind, "loop");
    EXPECT_EQ(l.backing_file, "/srv/images/disk.img");
    EXPECT_EQ(l.structure, DeviceStructure::partition);
    EXPECT_EQ(l.owner, "nvme0n1"); // the partition holding the file, flattened to its disk
    EXPECT_EQ(l.media, MediaKind::ssd);
}

TEST_F(FakeSysfs, MdRaid5BecomesAComplexDevice) {
    for (unsigned i = 0; i < 3; ++i)
        add(std::string("sd") + char('b' + i), 8, 16 * (i + 1), 1000, true);
    const fs::path md = add("virtual/block/md0", 9, 0, 2000);
    write(md / "md" / "level", "raid5");
    fs::create_directories(md / "slaves");
    for (const char* s : {"sdb", "sdc", "sdd"})
        fs::create_directory_symlink(root_ / "devices" / s, md / "slaves" / s);
    Sysfs sysfs(root_);
    std::vector<MountEntry> mounts = {entry("/scratch", "xfs", 9, 0, "/dev/md0")};
    DeviceResolver r(sysfs, mounts);
    EXPECT_EQ(r.resolve(mounts[0]), "md0");
    const DeviceModel& d = r.devices().at("md0");
    EXPECT_EQ(d.structure, DeviceStructure::complex);
    EXPECT_EQ(d.scheme, RedundancyScheme::raid5);
    EXPECT_EQ(d.members, (std::vector<std::string>{"sdb", "sdc", "sdd"}));
    EXPECT_EQ(d.media, MediaKind::hdd);
    EXPECT_EQ(r.devices().at("sdc").structure, DeviceStructure::simple);
}

TEST_F(FakeSysfs, SingleSlaveDeviceMapperIsASliceOfItsDevice) {
    add("vdb", 252, 16, 1000);
    const fs::path dm = add("virtual/block/dm-0", 253, 0, 900);
    write(dm / "dm" / "name", "vg-home");
    fs::create_directories(dm / "slaves");
    fs::create_directory_symlink(root_ / "devices" / "vdb", dm / "slaves" / "vdb");
    Sysfs sysfs(root_);
    std::vector<MountEntry> mounts = {entry("/home", "ext4", 253, 0, "/dev/mapper/vg-home")};
    DeviceResolver r(sysfs, mounts);
    EXPECT_EQ(r.resolve(mounts[0]), "dm-0");
    EXPECT_EQ(r.devices().at("dm-0").structure, DeviceStructure::partition);
    EXPECT_EQ(r.devices().at("dm-0").owner, "vdb");
}

TEST_F(FakeSysfs, BtrfsProfilesBecomeSchemes) {
    for (unsigned i = 0; i < 3; ++i)
        add("virtual/block/loop" + std::to_string(i), 7, i, 1000);
    auto btrfs = [&](const std::string& uuid, std::vector<std::string> members,
                     const std::string& data, const std::string& meta) {
        const fs::path dir = root_ / "fs" / "btrfs" / uuid;
        fs::create_directories(dir / "devices");
        for (const auto& m : members)
            fs::create_directory_symlink(root_ / "devices" / "virtual" / "block" / m,
                                         dir / "devices" / m);
        write(dir / "allocation" / "data" / data / "total_bytes", "1000");
        write(dir / "allocation" / "metadata" / meta / "total_bytes", "100");
        write(dir / "sectorsize", "4096");
    };
    btrfs("0e0730ef-6009-4c29-977c-584e452a97e9", {"loop0", "loop1"}, "raid1", "raid1");
    Sysfs sysfs(root_);
    std::vector<MountEntry> mounts = {entry("/mnt/raid1", "btrfs", 0, 40, "/dev/loop0")};
    {
        DeviceResolver r(sysfs, mounts);
        const std::string name = r.resolve(mounts[0]);
        EXPECT_EQ(name, "btrfs-0e0730ef");
        const DeviceModel& d = r.devices().at(name);
        EXPECT_EQ(d.structure, DeviceStructure::complex);
        EXPECT_EQ(d.scheme, RedundancyScheme::raid1);
        EXPECT_EQ(d.members, (std::vector<std::string>{"loop0", "loop1"}));
        EXPECT_EQ(d.profile, "data raid1, metadata raid1");
        EXPECT_EQ(d.logical_block_size, 4096u);
    }
    fs::remove_all(root_ / "fs");
    btrfs("11111111-2222", {"loop0", "loop1", "loop2"}, "raid1c3", "raid1c3");
    {
        DeviceResolver r(sysfs, mounts);
        const DeviceModel& d = r.devices().at(r.resolve(mounts[0]));
        EXPECT_EQ(d.scheme, RedundancyScheme::replication);
        EXPECT_EQ(d.replicas, 3u);
    }
    fs::remove_all(root_ / "fs");
    btrfs("33333333-4444", {"loop0", "loop1"}, "single",
          "raid1"); // data not mirrored: any loss loses data
    {
        DeviceResolver r(sysfs, mounts);
        EXPECT_EQ(r.devices().at(r.resolve(mounts[0])).scheme, RedundancyScheme::raid0);
    }
    fs::remove_all(root_ / "fs");
    btrfs("55555555-6666", {"loop0"}, "dup", "dup"); // one device: just that device
    {
        DeviceResolver r(sysfs, mounts);
        EXPECT_EQ(r.resolve(mounts[0]), "loop0");
    }
}

TEST_F(FakeSysfs, RamAndNetworkFileSystems) {
    Sysfs sysfs(root_);
    std::vector<MountEntry> mounts = {entry("/dev/shm", "tmpfs", 0, 27, "tmpfs"),
                                      entry("/home", "nfs4", 0, 50, "srv:/home"),
                                      entry("/work", "fuse.sshfs", 0, 51, "me@host:/w"),
                                      entry("/lustre", "lustre", 0, 52, "mgs@tcp:/fs")};
    DeviceResolver r(sysfs, mounts);
    const DeviceModel& ram = r.devices().at(r.resolve(mounts[0]));
    EXPECT_EQ(ram.media, MediaKind::ram);
    EXPECT_GT(ram.capacity, 0u); // statvfs of the real /dev/shm
    for (int i = 1; i <= 3; ++i)
        EXPECT_EQ(r.devices().at(r.resolve(mounts[i])).media, MediaKind::network)
            << mounts[i].fs_type;
    EXPECT_TRUE(is_network_fs("nfs"));
    EXPECT_TRUE(is_network_fs("ceph"));
    EXPECT_FALSE(is_network_fs("ext4"));
    EXPECT_TRUE(is_pseudo_fs("proc"));
    EXPECT_TRUE(is_pseudo_fs("cgroup2"));
    EXPECT_FALSE(is_pseudo_fs("tmpfs"));
}

} // namespace
} // namespace iosig::calibrate
