// discover() (discovery.hpp): the mounts to calibrate, each with its device (DeviceResolver, in
// device_resolver.cpp), its free space, and whether it can be written.
#include "discovery.hpp"

#include "device_throttle.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <set>
#include <stdexcept>
#include <sys/statvfs.h>
#include <unistd.h>

namespace iosig::calibrate {
namespace fs = std::filesystem;
namespace {

bool starts_with_path(std::string_view path, std::string_view prefix) {
    if (prefix == "/") return true;
    return path.substr(0, prefix.size()) == prefix &&
           (path.size() == prefix.size() || path[prefix.size()] == '/');
}

// Mount points that belong to the system, not to the user's data, when every mount is discovered.
bool is_system_path(std::string_view path) {
    if (starts_with_path(path, "/dev/shm") || starts_with_path(path, "/run/user")) return false;
    for (std::string_view p : {"/proc", "/sys", "/dev", "/run", "/boot", "/efi", "/snap"})
        if (starts_with_path(path, p)) return true;
    return false;
}

std::string not_writable_reason(const MountEntry& entry, const std::string& path) {
    if (entry.read_only()) return "read-only mount";
    struct statvfs s{};
    if (statvfs(path.c_str(), &s) == 0 && (s.f_flag & ST_RDONLY) != 0)
        return "read-only file system";
    if (access(path.c_str(), W_OK | X_OK) != 0)
        return fmt::format("not writable by uid {}", getuid());
    return {};
}

void fill_space(MountTarget& t) {
    struct statvfs s{};
    if (statvfs(t.path.c_str(), &s) == 0) {
        t.capacity = std::uint64_t(s.f_blocks) * s.f_frsize;
        t.free_space = std::uint64_t(s.f_bavail) * s.f_frsize;
        t.block_size = s.f_bsize;
    }
    const long bits = pathconf(t.path.c_str(), _PC_FILESIZEBITS);
    if (bits > 0 && bits < 64) t.max_file_size = (std::uint64_t(1) << (bits - 1)) - 1;
}

bool excluded(const std::string& path, const std::vector<std::string>& excludes) {
    return std::any_of(excludes.begin(), excludes.end(),
                       [&](const std::string& e) { return starts_with_path(path, e); });
}

std::string canonical_or_throw(const std::string& path, const char* what) {
    std::error_code ec;
    const fs::path p = fs::canonical(path, ec);
    if (ec) throw std::runtime_error(fmt::format("{} {}: {}", what, path, ec.message()));
    if (!fs::is_directory(p))
        throw std::runtime_error(fmt::format("{} {}: not a directory", what, path));
    return p.string();
}

} // namespace

Discovery discover(const DiscoveryOptions& options) {
    const std::vector<MountEntry> all = read_mountinfo(options.mountinfo_path);
    if (all.empty()) throw std::runtime_error("no mounts in " + options.mountinfo_path);
    // Mounts stacked on the same point: only the last one is visible.
    std::vector<MountEntry> visible;
    for (const MountEntry& e : all) {
        std::erase_if(visible, [&](const MountEntry& v) { return v.mount_point == e.mount_point; });
        visible.push_back(e);
    }
    Sysfs sysfs(options.sysfs_root);
    DeviceResolver resolver(sysfs, visible);
    Discovery out;

    std::vector<std::string> excludes;
    for (const std::string& e : options.exclude) {
        std::error_code ec;
        excludes.push_back(fs::weakly_canonical(e, ec).string());
    }

    std::vector<std::pair<std::string, MountEntry>> candidates;
    if (options.include.empty()) {
        for (const MountEntry& e : visible) {
            if (is_pseudo_fs(e.fs_type) || is_system_path(e.mount_point))
                continue; // not the user's data
            candidates.emplace_back(e.mount_point, e);
        }
    } else {
        for (const std::string& path : options.include) {
            const std::string p = canonical_or_throw(path, "--mount");
            auto holder = containing_mount(visible, p);
            if (!holder) throw std::runtime_error("--mount " + path + ": no mount holds it");
            candidates.emplace_back(p, *holder);
        }
    }

    std::set<std::string> seen;
    for (const auto& [path, entry] : candidates) {
        if (excluded(path, excludes) || !seen.insert(path).second) continue;
        if (is_pseudo_fs(entry.fs_type)) {
            out.skipped.push_back({path, entry.fs_type, "pseudo file system"});
            continue;
        }
        if (std::string why = not_writable_reason(entry, path); !why.empty()) {
            out.skipped.push_back({path, entry.fs_type, why});
            continue;
        }
        MountTarget t;
        t.path = path;
        t.entry = entry;
        t.device = resolver.resolve(entry);
        t.global = is_network_fs(entry.fs_type);
        t.is_volatile = is_ram_fs(entry.fs_type);
        t.group = fmt::format("{}:{}", entry.major, entry.minor);
        t.numa_node = resolver.numa_node_of(t.device);
        fill_space(t);
        out.mounts.push_back(std::move(t));
    }
    out.devices = resolver.devices();
    // A limit is a fact about this process, detected like the rest: unreadable cgroup files mean
    // none, and nothing here may stop the calibration (a throttle only refines the model).
    try {
        const CgroupThrottle cgroups(options.proc_root, options.cgroup_fs_root);
        for (const MountTarget& t : out.mounts)
            out.devices.at(t.device).throttle =
                device_throttle(sysfs, cgroups, out.devices, t.device);
    } catch (const std::exception&) {
        for (auto& [name, device] : out.devices)
            device.throttle = {};
    }
    return out;
}

} // namespace iosig::calibrate
