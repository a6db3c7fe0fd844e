// What lies under each mount the user may write to: mounts from /proc/self/mountinfo, the device
// structure from sysfs (partition -> owner, loop -> backing file -> its device, btrfs multi-device
// and md/dm members -> complex devices), tmpfs -> RAM (volatile), network file systems -> global.
#pragma once

#include "device_throttle.hpp"
#include "iosig/node.hpp"
#include "mountinfo.hpp"
#include "sysfs.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace iosig::calibrate {

// Devices stacked deeper than this (a loop over a file on a loop over a file on ...) are not
// followed.
inline constexpr int max_device_depth = 8;

// One device as it will appear under `devices:` in the node YAML.
struct DeviceModel {
    std::string name;
    DeviceStructure structure = DeviceStructure::simple;
    MediaKind media = MediaKind::ssd;
    std::string dev_path;
    bool rotational = false;
    std::uint64_t capacity = 0;
    RedundancyScheme scheme = RedundancyScheme::none;
    std::vector<std::string> members;
    unsigned replicas = 0;
    std::string owner;
    // Facts kept in the device's `calibration:` map (not interpreted by the core).
    std::string kind;         // disk, partition, loop, md, dm, btrfs, tmpfs, network, virtual
    std::string backing_file; // loop
    std::string model;
    std::string profile; // btrfs data/metadata profile, md level
    int numa_node = -1;
    unsigned logical_block_size = 0;
    unsigned physical_block_size = 0;
    std::optional<std::uint64_t> read_ahead; // bytes (BlockDevice::read_ahead)
    std::optional<std::uint64_t> max_io;     // bytes (BlockDevice::max_io)
    std::string note;
    DeviceThrottle throttle; // set for the devices of calibrated mounts (device_throttle)
};

struct MountTarget {
    std::string path; // the directory calibrated: a mount point or a directory given with --mount
    MountEntry entry; // the mount that holds it
    std::string device;
    bool global = false;
    bool is_volatile = false;
    std::uint64_t capacity = 0;
    std::uint64_t free_space = 0;
    std::uint64_t block_size = 4096;
    std::uint64_t max_file_size = 0; // 0: no limit known
    std::string group; // targets with the same group share one file system and are measured once
    int numa_node = -1;
};

struct SkippedMount {
    std::string path;
    std::string fs_type;
    std::string reason;
};

struct Discovery {
    std::vector<MountTarget> mounts;
    std::vector<SkippedMount> skipped;
    std::map<std::string, DeviceModel> devices;
};

struct DiscoveryOptions {
    std::vector<std::string>
        include; // --mount: only these paths (any directory); empty: every mount
    std::vector<std::string> exclude; // --exclude: drop these paths and everything under them
    std::string sysfs_root = "/sys";
    std::string mountinfo_path = "/proc/self/mountinfo";
    std::string proc_root = "/proc";  // self/cgroup, sys/kernel/osrelease (cgroup_throttle.hpp)
    std::string cgroup_fs_root = "/"; // where the cgroup mount points of mountinfo are looked up
};

// Builds DeviceModels for the file systems of mount entries, recursively through what they stand
// on.
class DeviceResolver {
public:
    DeviceResolver(const Sysfs& sysfs, const std::vector<MountEntry>& mounts)
        : sysfs_(sysfs), mounts_(mounts) {}

    // The device `entry`'s file system lives on (its name in devices()).
    std::string resolve(const MountEntry& entry);
    const std::map<std::string, DeviceModel>& devices() const { return devices_; }
    // The device a partition's figures come from (itself when it is not a partition).
    std::string root_of(const std::string& name) const;
    int numa_node_of(const std::string& name) const;

private:
    std::string add_block(const BlockDevice& device, int depth);
    std::string add_btrfs(const MountEntry& entry, int depth);
    std::string add_named(DeviceModel model);
    std::string resolve_at(const MountEntry& entry, int depth);

    const Sysfs& sysfs_;
    const std::vector<MountEntry>& mounts_;
    std::map<std::string, DeviceModel> devices_;
};

Discovery discover(const DiscoveryOptions& options);

bool is_pseudo_fs(std::string_view fs_type);
bool is_network_fs(std::string_view fs_type);
bool is_ram_fs(std::string_view fs_type);

} // namespace iosig::calibrate
