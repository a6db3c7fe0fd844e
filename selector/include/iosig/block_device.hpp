// Which whole disk holds a file, as sysfs names it (/sys/dev/block/MAJ:MIN).
//
// The tier's readahead model reads the disk's queue limits, cachesim the disk's write-back state
// (a partition writes back through its disk's bdi) and the CAWL validator its rotational flag and
// size; they all start from the same question, answered once here. iosig-calibrate's discovery
// (calibrate/src/sysfs.hpp) walks every device of a sysfs tree instead and has its own reader.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace iosig {

struct DiskOfFile {
    std::string devno;               // "MAJ:MIN" of the whole disk (a partition's: its disk's)
    std::filesystem::path sysfs_dir; // the disk's directory under /sys/devices, resolved
};

// The whole disk under the file system that holds `path` (a block device node: that device's own
// disk). nullopt when `path` does not exist or no block device backs it: tmpfs, NFS, FUSE, procfs,
// and btrfs (whose files carry an anonymous device number).
std::optional<DiskOfFile> disk_of(const std::filesystem::path& path);

// The same for a device number, looked up under `sys_root` (tests build a fake tree there).
std::optional<DiskOfFile> disk_of_devno(unsigned major, unsigned minor,
                                        const std::filesystem::path& sys_root = "/sys");

} // namespace iosig
