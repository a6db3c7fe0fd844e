// DeviceResolver (discovery.hpp): the devices under each mounted file system, found through sysfs
// (partitions, md arrays, device-mapper stacks, btrfs over several devices), with their media and
// redundancy schemes; and the file-system type classes discovery uses.
#include "discovery.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <set>
#include <sys/statvfs.h>

namespace iosig::calibrate {
namespace fs = std::filesystem;
namespace {

std::string sanitize(std::string_view text) {
    std::string out;
    for (char c : text) {
        const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '.' || c == '_';
        if (keep)
            out.push_back(c);
        else if (!out.empty() && out.back() != '-')
            out.push_back('-');
    }
    while (!out.empty() && out.back() == '-')
        out.pop_back();
    return out.empty() ? std::string("root") : out;
}

MediaKind media_of_disk(const BlockDevice& d) {
    if (d.name.starts_with("pmem") || d.name.starts_with("dax")) return MediaKind::nvram;
    if (d.name.starts_with("zram") || d.name.starts_with("ram") || d.name.starts_with("brd"))
        return MediaKind::ram;
    if (d.name.starts_with("rbd") || d.name.starts_with("nbd") || d.name.starts_with("drbd"))
        return MediaKind::network;
    return d.rotational ? MediaKind::hdd : MediaKind::ssd;
}

// md levels and btrfs profiles onto the core's schemes (docs/calibrate.md, "Device structure").
struct SchemeMapping {
    RedundancyScheme scheme = RedundancyScheme::none;
    unsigned replicas = 0;
};

SchemeMapping scheme_of_level(std::string_view level, std::size_t members) {
    if (level == "raid1" && members > 2)
        return {RedundancyScheme::replication, 2}; // btrfs: 2 copies on any 2 of N
    if (level == "raid1") return {RedundancyScheme::raid1, 0};
    if (level == "raid1c3") return {RedundancyScheme::replication, 3};
    if (level == "raid1c4") return {RedundancyScheme::replication, 4};
    if (level == "raid10") return {RedundancyScheme::raid10, 0};
    if (level == "raid5" || level == "raid4") return {RedundancyScheme::raid5, 0};
    if (level == "raid6") return {RedundancyScheme::raid6, 0};
    // raid0, linear, btrfs single over several devices: losing any member loses data.
    return {RedundancyScheme::raid0, 0};
}

} // namespace

bool is_pseudo_fs(std::string_view t) {
    static const std::set<std::string_view> pseudo = {
        "proc",     "sysfs",   "devtmpfs",     "devpts",   "cgroup",     "cgroup2",   "securityfs",
        "debugfs",  "tracefs", "pstore",       "bpf",      "mqueue",     "hugetlbfs", "configfs",
        "fusectl",  "autofs",  "binfmt_misc",  "efivarfs", "rpc_pipefs", "nsfs",      "selinuxfs",
        "squashfs", "iso9660", "ramfs-initrd", "nfsd",     "sockfs",     "pipefs"};
    return pseudo.contains(t);
}

bool is_network_fs(std::string_view t) {
    static const std::set<std::string_view> network = {
        "nfs",    "nfs4", "lustre", "ceph",     "cifs",  "smb3",  "smbfs", "9p",   "glusterfs",
        "beegfs", "gpfs", "afs",    "orangefs", "pvfs2", "ocfs2", "gfs2",  "davfs"};
    return network.contains(t) || t.starts_with("fuse.");
}

bool is_ram_fs(std::string_view t) {
    return t == "tmpfs" || t == "ramfs";
}

std::string DeviceResolver::add_named(DeviceModel model) {
    const std::string name = model.name;
    devices_.try_emplace(name, std::move(model));
    return name;
}

std::string DeviceResolver::root_of(const std::string& name) const {
    std::string current = name;
    for (int i = 0; i < max_device_depth; ++i) {
        const auto it = devices_.find(current);
        if (it == devices_.end() || it->second.structure != DeviceStructure::partition)
            return current;
        current = it->second.owner;
    }
    return current;
}

int DeviceResolver::numa_node_of(const std::string& name) const {
    const auto it = devices_.find(name);
    if (it == devices_.end()) return -1;
    if (it->second.numa_node >= 0) return it->second.numa_node;
    if (it->second.structure == DeviceStructure::partition && it->second.owner != name)
        return numa_node_of(it->second.owner);
    for (const std::string& m : it->second.members)
        if (int n = numa_node_of(m); n >= 0) return n;
    return -1;
}

std::string DeviceResolver::add_block(const BlockDevice& d, int depth) {
    if (devices_.contains(d.name)) return d.name;
    DeviceModel m;
    m.name = d.name;
    m.dev_path = "/dev/" + d.name;
    m.rotational = d.rotational;
    m.capacity = d.capacity;
    m.model = d.model;
    m.numa_node = d.numa_node;
    m.logical_block_size = d.logical_block_size;
    m.physical_block_size = d.physical_block_size;
    m.read_ahead = d.read_ahead;
    m.max_io = d.max_io;
    m.kind = std::string(to_string(d.kind));
    m.media = media_of_disk(d);
    if (depth >= max_device_depth) {
        m.note = "structure not followed further (nesting too deep)";
        return add_named(std::move(m));
    }
    switch (d.kind) {
    case BlockKind::partition:
        if (auto parent = sysfs_.by_name(d.parent)) {
            const std::string owner = root_of(add_block(*parent, depth + 1));
            m.structure = DeviceStructure::partition;
            m.owner = owner;
            m.media = devices_.at(owner).media;
        }
        break;
    case BlockKind::loop: {
        m.backing_file = d.backing_file;
        std::string file = d.backing_file;
        if (file.ends_with(" (deleted)")) file.resize(file.size() - 10);
        std::error_code ec;
        const fs::path canonical = fs::weakly_canonical(file, ec);
        const auto holder = ec ? std::nullopt : containing_mount(mounts_, canonical.string());
        if (holder) {
            // The data of a loop device lives in its backing file, so it shares the fate (and,
            // unless measured otherwise, the speed) of the device holding that file: a partition of
            // it.
            const std::string owner = root_of(resolve_at(*holder, depth + 1));
            m.structure = DeviceStructure::partition;
            m.owner = owner;
            m.media = devices_.at(owner).media;
        } else {
            m.note = "backing file " + d.backing_file + " not found in this mount namespace";
        }
        break;
    }
    case BlockKind::md:
    case BlockKind::dm: {
        std::vector<std::string> members;
        for (const std::string& slave : d.slaves)
            if (auto s = sysfs_.by_name(slave)) members.push_back(add_block(*s, depth + 1));
        m.profile = d.md_level;
        if (members.size() == 1 &&
            (d.kind == BlockKind::dm || d.md_level == "linear" || d.md_level.empty())) {
            // dm-linear/crypt or an LVM volume on one physical volume: a slice of that device.
            m.structure = DeviceStructure::partition;
            m.owner = root_of(members.front());
            m.media = devices_.at(m.owner).media;
        } else if (!members.empty()) {
            const SchemeMapping s =
                scheme_of_level(d.kind == BlockKind::md ? d.md_level : "linear", members.size());
            m.structure = DeviceStructure::complex;
            m.scheme = s.scheme;
            m.replicas = s.replicas;
            m.members = members;
            m.media = devices_.at(members.front()).media;
        }
        break;
    }
    case BlockKind::disk:
    case BlockKind::other:
        break;
    }
    return add_named(std::move(m));
}

std::string DeviceResolver::add_btrfs(const MountEntry& entry, int depth) {
    const std::string source_name = fs::path(entry.source).filename().string();
    const auto btrfs = sysfs_.btrfs_with_member(source_name);
    if (!btrfs) {
        if (auto d = sysfs_.by_name(source_name)) return add_block(*d, depth);
        return {};
    }
    std::vector<std::string> members;
    for (const std::string& member : btrfs->members)
        if (auto d = sysfs_.by_name(member)) members.push_back(add_block(*d, depth + 1));
    if (members.size() == 1) {
        if (btrfs->data_profile == "dup")
            devices_.at(members.front()).note = "btrfs dup: two copies on one device";
        return members.front();
    }
    // The weaker of the data and metadata profiles decides when data is lost.
    const SchemeMapping data = scheme_of_level(btrfs->data_profile, members.size());
    const SchemeMapping meta = scheme_of_level(btrfs->metadata_profile, members.size());
    auto strength = [](const SchemeMapping& s) {
        switch (s.scheme) {
        case RedundancyScheme::raid0:
            return 0u;
        case RedundancyScheme::raid1:
        case RedundancyScheme::raid5:
        case RedundancyScheme::raid10:
            return 1u;
        case RedundancyScheme::replication:
            return s.replicas - 1;
        case RedundancyScheme::raid6:
            return 2u;
        default:
            return 0u;
        }
    };
    const SchemeMapping weakest = strength(meta) < strength(data) ? meta : data;
    DeviceModel m;
    m.name = "btrfs-" + btrfs->uuid.substr(0, 8);
    m.structure = DeviceStructure::complex;
    m.scheme = weakest.scheme;
    m.replicas = weakest.replicas;
    m.members = members;
    m.media = devices_.at(members.front()).media;
    m.kind = "btrfs";
    m.profile = fmt::format("data {}, metadata {}", btrfs->data_profile, btrfs->metadata_profile);
    m.note = "btrfs " + btrfs->uuid;
    m.logical_block_size = btrfs->sector_size;
    m.rotational = std::any_of(members.begin(), members.end(),
                               [&](const std::string& n) { return devices_.at(n).rotational; });
    return add_named(std::move(m));
}

std::string DeviceResolver::resolve(const MountEntry& entry) {
    return resolve_at(entry, 0);
}

std::string DeviceResolver::resolve_at(const MountEntry& entry, int depth) {
    if (is_network_fs(entry.fs_type)) {
        DeviceModel m;
        m.name = "net-" + sanitize(entry.fs_type + "-" + entry.source);
        m.media = MediaKind::network;
        m.kind = "network";
        m.dev_path = entry.source;
        return add_named(std::move(m));
    }
    if (is_ram_fs(entry.fs_type)) {
        DeviceModel m;
        m.name = "ram-" + sanitize(entry.mount_point);
        m.media = MediaKind::ram;
        m.kind = entry.fs_type;
        m.dev_path = entry.source;
        struct statvfs s{};
        if (statvfs(entry.mount_point.c_str(), &s) == 0)
            m.capacity = std::uint64_t(s.f_blocks) * s.f_frsize;
        return add_named(std::move(m));
    }
    if (entry.fs_type == "btrfs") {
        if (std::string name = add_btrfs(entry, depth); !name.empty()) return name;
    }
    if (entry.major != 0) {
        if (auto d = sysfs_.by_devno(entry.major, entry.minor)) return add_block(*d, depth);
    }
    if (entry.source.starts_with("/dev/")) {
        if (auto d = sysfs_.by_name(fs::path(entry.source).filename().string()))
            return add_block(*d, depth);
    }
    DeviceModel m;
    m.name = sanitize(entry.fs_type + "-" + entry.source);
    m.kind = "virtual";
    m.dev_path = entry.source;
    m.note = "no block device behind this file system; media assumed ssd (override if wrong)";
    return add_named(std::move(m));
}

} // namespace iosig::calibrate
