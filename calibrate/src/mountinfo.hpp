// /proc/self/mountinfo, parsed (proc(5)): the mounts this process sees, with the major:minor of the
// device each file system lives on. Discovery starts here instead of parsing `df`/`lsblk` text.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iosig::calibrate {

struct MountEntry {
    int id = 0;
    int parent_id = 0;
    unsigned major = 0;
    unsigned minor = 0;
    std::string root; // the path inside the file system that is mounted here (bind mounts)
    std::string mount_point;
    std::string mount_options; // per-mount: rw/ro, nosuid, ...
    std::string fs_type;       // "ext4", "fuse.sshfs", ...
    std::string source;        // "/dev/vda", "tmpfs", "server:/export"
    std::string super_options; // per-superblock

    bool read_only() const; // "ro" among the mount or superblock options
};

// Parses mountinfo text; malformed lines are skipped and reported in `errors` ("line N: why").
std::vector<MountEntry> parse_mountinfo(std::string_view text,
                                        std::vector<std::string>* errors = nullptr);

// Reads and parses /proc/self/mountinfo (or `path`).
std::vector<MountEntry> read_mountinfo(const std::string& path = "/proc/self/mountinfo");

// The mount that holds `path` (an absolute, canonical path): the longest mount point that is a
// prefix of it, the later entry winning when mounts are stacked on the same point.
std::optional<MountEntry> containing_mount(const std::vector<MountEntry>& mounts,
                                           std::string_view path);

bool has_option(std::string_view options, std::string_view option);

} // namespace iosig::calibrate
