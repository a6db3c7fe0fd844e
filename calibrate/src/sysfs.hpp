// Block-device facts from sysfs, looked up by major:minor (/sys/dev/block/MAJ:MIN), and btrfs
// multi-device facts from /sys/fs/btrfs. The root is a parameter so tests can build a fake tree.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace iosig::calibrate {

enum class BlockKind : std::uint8_t { disk, partition, loop, md, dm, other };

struct BlockDevice {
    std::string name; // kernel name: vda, vda1, loop0, md0, dm-0
    unsigned major = 0;
    unsigned minor = 0;
    BlockKind kind = BlockKind::disk;
    std::string parent;              // partition: the whole disk it belongs to
    std::string backing_file;        // loop: the file behind it
    std::vector<std::string> slaves; // md/dm: member devices (kernel names)
    std::string md_level;            // md: "raid1", "raid5", ...
    bool rotational = false;
    // queue/throttle_sample_time: blk-throttle's slice in ms, shown only by kernels before 6.10
    // built with CONFIG_BLK_DEV_THROTTLING_LOW (cgroup_throttle.hpp).
    std::optional<unsigned> throttle_sample_time_ms;
    unsigned logical_block_size = 512;
    unsigned physical_block_size = 512;
    // queue/read_ahead_kb and queue/max_sectors_kb, in bytes (a partition's are its disk's).
    std::optional<std::uint64_t> read_ahead;
    std::optional<std::uint64_t> max_io;
    std::uint64_t capacity = 0; // bytes
    std::string model;          // empty when the device does not say
    int numa_node = -1;         // -1: unknown / no NUMA
};

struct BtrfsFilesystem {
    std::string uuid;
    std::vector<std::string> members; // kernel names of the member devices
    std::string data_profile; // single, dup, raid0, raid1, raid1c3, raid1c4, raid10, raid5, raid6
    std::string metadata_profile;
    unsigned sector_size = 4096;
};

class Sysfs {
public:
    explicit Sysfs(std::filesystem::path root = "/sys") : root_(std::move(root)) {}

    std::optional<BlockDevice> by_devno(unsigned major, unsigned minor) const;
    std::optional<BlockDevice> by_name(const std::string& name) const;

    // The btrfs file system one of whose members is the kernel device `member_name`.
    std::optional<BtrfsFilesystem> btrfs_with_member(const std::string& member_name) const;

    const std::filesystem::path& root() const { return root_; }

private:
    std::optional<BlockDevice> from_directory(const std::filesystem::path& dir) const;
    std::filesystem::path root_;
};

// First line of a text file, trimmed; nullopt when it cannot be read.
std::optional<std::string> read_line(const std::filesystem::path& file);
std::string_view to_string(BlockKind kind);

} // namespace iosig::calibrate
