#include "node_for_dir.hpp"

#include "iosig/block_device.hpp"
#include "iosig/cachesim/kernel_state.hpp"
#include "iosig/units.hpp"

#include <fmt/format.h>
#include <fstream>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

namespace iosig::cachesim::validate {
namespace {

std::string read_line(const std::filesystem::path& file) {
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);
    return line;
}

struct MountEntry {
    std::string device, path, type;
};

std::optional<MountEntry> mount_containing(const std::filesystem::path& dir) {
    std::ifstream mounts("/proc/mounts");
    std::optional<MountEntry> best;
    const std::string target = dir.string();
    std::string device, path, type, rest;
    while (mounts >> device >> path >> type && std::getline(mounts, rest)) {
        const bool inside =
            target == path || path == "/" ||
            (target.starts_with(path) && target.size() > path.size() && target[path.size()] == '/');
        if (inside && (!best || path.size() >= best->path.size()))
            best = MountEntry{device, path, type};
    }
    return best;
}

} // namespace

std::optional<Node> node_for_directory(const std::filesystem::path& dir,
                                       const VmDirtySettings& original, std::string* error) {
    std::error_code ec;
    const std::filesystem::path absolute = std::filesystem::canonical(dir, ec);
    if (ec) {
        if (error) *error = fmt::format("{}: {}", dir.string(), ec.message());
        return std::nullopt;
    }
    const auto entry = mount_containing(absolute);
    struct stat st{};
    struct statvfs vfs{};
    if (!entry || ::stat(absolute.c_str(), &st) != 0 || ::statvfs(absolute.c_str(), &vfs) != 0) {
        if (error) *error = fmt::format("{}: cannot find its file system", absolute.string());
        return std::nullopt;
    }
    Node node;
    char host[256] = {};
    ::gethostname(host, sizeof(host) - 1);
    node.name = host[0] ? host : "node";
    node.page_size = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));

    Device device;
    device.name = "disk";
    if (const std::optional<DiskOfFile> disk = disk_of(absolute)) {
        const std::filesystem::path& sys = disk->sysfs_dir;
        device.name = sys.filename().string();
        device.dev_path = "/dev/" + device.name;
        device.rotational = read_line(sys / "queue/rotational") == "1";
        device.media = device.rotational ? MediaKind::hdd : MediaKind::ssd;
        const std::string sectors = read_line(sys / "size");
        if (!sectors.empty()) device.capacity = std::stoull(sectors) * 512;
    }
    Mount mount;
    mount.path = entry->path;
    mount.fs_type = entry->type;
    mount.device = device.name;
    mount.block_size = static_cast<std::uint64_t>(st.st_blksize);
    mount.capacity = static_cast<std::uint64_t>(vfs.f_blocks) * vfs.f_frsize;
    if (device.capacity == 0) device.capacity = mount.capacity;
    node.devices.push_back(device);
    node.mounts.push_back(mount);

    SystemParameters& s = node.system;
    const auto procfs = read_procfs_state();
    if (original.dirty_bytes)
        s.dirty_bytes = original.dirty_bytes;
    else
        s.dirty_ratio = original.dirty_ratio / 100.0;
    if (original.dirty_background_bytes)
        s.dirty_background_bytes = original.dirty_background_bytes;
    else
        s.dirty_background_ratio = original.dirty_background_ratio / 100.0;
    if (procfs) {
        s.dirty_expire = procfs->dirty_expire;
        s.dirty_writeback_interval = procfs->writeback_interval;
    }
    for (const char* key :
         {"system.dirty_ratio", "system.dirty_background_ratio", "system.dirty_bytes",
          "system.dirty_background_bytes", "system.dirty_expire", "system.dirty_writeback_interval",
          "node.page_size"})
        node.provenance[key] = Provenance::detected;
    return node;
}

std::string describe_machine() {
    utsname u{};
    ::uname(&u);
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line, model;
    while (std::getline(cpuinfo, line))
        if (line.starts_with("model name")) {
            model = line.substr(line.find(':') + 2);
            break;
        }
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    double kib = 0;
    meminfo >> key >> kib;
    return fmt::format("{} {}, {} CPUs ({}), {} RAM", u.sysname, u.release,
                       ::sysconf(_SC_NPROCESSORS_ONLN), model, human_size(kib * 1024));
}

} // namespace iosig::cachesim::validate
