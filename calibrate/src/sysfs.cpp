#include "sysfs.hpp"

#include <algorithm>
#include <charconv>
#include <fmt/format.h>
#include <fstream>
#include <system_error>

namespace iosig::calibrate {
namespace fs = std::filesystem;

std::optional<std::string> read_line(const fs::path& file) {
    std::ifstream in(file);
    if (!in) return std::nullopt;
    std::string line;
    std::getline(in, line);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\n' || line.back() == '\t'))
        line.pop_back();
    return line;
}

namespace {

template <class T>
std::optional<T> read_number(const fs::path& file) {
    const auto text = read_line(file);
    if (!text) return std::nullopt;
    T value{};
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
    if (ec != std::errc()) return std::nullopt;
    return value;
}

std::vector<std::string> entries_of(const fs::path& dir) {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec))
        names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

bool path_exists(const fs::path& p) {
    std::error_code ec;
    return fs::exists(p, ec);
}

} // namespace

std::string_view to_string(BlockKind kind) {
    switch (kind) {
    case BlockKind::disk:
        return "disk";
    case BlockKind::partition:
        return "partition";
    case BlockKind::loop:
        return "loop";
    case BlockKind::md:
        return "md";
    case BlockKind::dm:
        return "dm";
    case BlockKind::other:
        return "other";
    }
    return "other";
}

std::optional<BlockDevice> Sysfs::by_devno(unsigned major, unsigned minor) const {
    std::error_code ec;
    const fs::path link = root_ / "dev" / "block" / fmt::format("{}:{}", major, minor);
    const fs::path dir = fs::canonical(link, ec);
    if (ec) return std::nullopt;
    return from_directory(dir);
}

std::optional<BlockDevice> Sysfs::by_name(const std::string& name) const {
    std::error_code ec;
    fs::path dir = fs::canonical(root_ / "class" / "block" / name, ec);
    if (ec) dir = fs::canonical(root_ / "block" / name, ec);
    if (ec) return std::nullopt;
    return from_directory(dir);
}

std::optional<BlockDevice> Sysfs::from_directory(const fs::path& dir) const {
    BlockDevice d;
    d.name = dir.filename().string();
    const auto devno = read_line(dir / "dev");
    if (devno) {
        const auto colon = devno->find(':');
        if (colon != std::string::npos) {
            std::from_chars(devno->data(), devno->data() + colon, d.major);
            std::from_chars(devno->data() + colon + 1, devno->data() + devno->size(), d.minor);
        }
    }
    // Queue limits and the device link live on the whole disk, not on its partitions.
    fs::path disk = dir;
    if (path_exists(dir / "partition")) {
        d.kind = BlockKind::partition;
        d.parent = dir.parent_path().filename().string();
        disk = dir.parent_path();
    } else if (path_exists(dir / "loop")) {
        d.kind = BlockKind::loop;
        d.backing_file = read_line(dir / "loop" / "backing_file").value_or("");
        // The kernel appends " (deleted)" when the backing file was unlinked.
    } else if (path_exists(dir / "md")) {
        d.kind = BlockKind::md;
        d.md_level = read_line(dir / "md" / "level").value_or("");
        d.slaves = entries_of(dir / "slaves");
    } else if (path_exists(dir / "dm")) {
        d.kind = BlockKind::dm;
        d.slaves = entries_of(dir / "slaves");
    } else if (!path_exists(dir / "device") && !path_exists(dir / "queue")) {
        d.kind = BlockKind::other;
    }
    d.rotational = read_number<int>(disk / "queue" / "rotational").value_or(0) != 0;
    d.throttle_sample_time_ms = read_number<unsigned>(disk / "queue" / "throttle_sample_time");
    d.logical_block_size =
        read_number<unsigned>(disk / "queue" / "logical_block_size").value_or(512);
    d.physical_block_size = read_number<unsigned>(disk / "queue" / "physical_block_size")
                                .value_or(d.logical_block_size);
    if (auto kib = read_number<std::uint64_t>(disk / "queue" / "read_ahead_kb"))
        d.read_ahead = *kib << 10;
    if (auto kib = read_number<std::uint64_t>(disk / "queue" / "max_sectors_kb"))
        d.max_io = *kib << 10;
    d.capacity =
        read_number<std::uint64_t>(dir / "size").value_or(0) * 512; // always 512-byte sectors
    d.model = read_line(disk / "device" / "model").value_or("");
    if (d.model.empty())
        d.model = read_line(disk / "device" / "name").value_or(""); // mmc, nvme namespaces
    for (const fs::path& candidate :
         {disk / "device" / "numa_node", disk / "device" / "device" / "numa_node"}) {
        if (auto node = read_number<int>(candidate)) {
            d.numa_node = *node;
            break;
        }
    }
    return d;
}

std::optional<BtrfsFilesystem> Sysfs::btrfs_with_member(const std::string& member_name) const {
    for (const std::string& uuid : entries_of(root_ / "fs" / "btrfs")) {
        const fs::path fsdir = root_ / "fs" / "btrfs" / uuid;
        const auto members = entries_of(fsdir / "devices");
        if (std::find(members.begin(), members.end(), member_name) == members.end()) continue;
        BtrfsFilesystem b;
        b.uuid = uuid;
        b.members = members;
        b.sector_size = read_number<unsigned>(fsdir / "sectorsize").value_or(4096);
        // Several profiles coexist during a conversion (`btrfs balance -dconvert`): the one holding
        // the most space describes the file system best.
        auto profile_of = [&](const char* kind) {
            std::string best;
            std::uint64_t best_bytes = 0;
            for (const std::string& p : entries_of(fsdir / "allocation" / kind)) {
                if (!fs::is_directory(fsdir / "allocation" / kind / p)) continue;
                const auto bytes =
                    read_number<std::uint64_t>(fsdir / "allocation" / kind / p / "total_bytes")
                        .value_or(0);
                if (best.empty() || bytes > best_bytes) {
                    best = p;
                    best_bytes = bytes;
                }
            }
            return best;
        };
        b.data_profile = profile_of("data");
        b.metadata_profile = profile_of("metadata");
        return b;
    }
    return std::nullopt;
}

} // namespace iosig::calibrate
