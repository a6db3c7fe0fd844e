#include "cgroup_throttle.hpp"

#include "mountinfo.hpp"

#include <array>
#include <charconv>
#include <fmt/format.h>
#include <fstream>
#include <system_error>

namespace iosig::calibrate {
namespace fs = std::filesystem;
namespace {

std::vector<std::string> lines_of(const fs::path& file) {
    std::vector<std::string> lines;
    std::ifstream in(file);
    std::string line;
    while (in && std::getline(in, line))
        lines.push_back(line);
    return lines;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (true) {
        const std::size_t end = text.find(separator, start);
        parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
        if (end == std::string_view::npos) return parts;
        start = end + 1;
    }
}

std::vector<std::string_view> words(std::string_view line) {
    std::vector<std::string_view> out;
    for (std::string_view w : split(line, ' '))
        if (!w.empty()) out.push_back(w);
    return out;
}

bool directory_exists(const fs::path& p) {
    std::error_code ec;
    return fs::is_directory(p, ec);
}

// The cgroup's directory and its ancestors up to the root of the mount it is visible in. A cgroup
// path in /proc/self/cgroup is relative to the cgroup namespace, a mount's root field to the same
// namespace, so a mount whose root is not a prefix of the path (a container's view of someone
// else's subtree) cannot show the cgroup. Ancestors above the mount's root are not visible here;
// their limits go unseen.
std::vector<fs::path> directories_of(const std::string& cgroup_path,
                                     const std::vector<MountEntry>& mounts, bool v2,
                                     const fs::path& fs_root) {
    for (const MountEntry& m : mounts) {
        const bool wanted = v2 ? m.fs_type == "cgroup2"
                               : m.fs_type == "cgroup" && has_option(m.super_options, "blkio");
        if (!wanted) continue;
        std::string_view relative = cgroup_path;
        if (m.root != "/") {
            if (!relative.starts_with(m.root) ||
                (relative.size() > m.root.size() && relative[m.root.size()] != '/'))
                continue;
            relative.remove_prefix(m.root.size());
        }
        const fs::path top = fs_root / fs::path(m.mount_point).relative_path();
        std::vector<fs::path> chain = {top};
        fs::path dir = top;
        for (std::string_view part : split(relative, '/')) {
            if (part.empty() || part == "." || part == "..") continue;
            dir /= part;
            chain.push_back(dir);
        }
        if (!directory_exists(chain.back())) continue; // another mount of the hierarchy may show it
        return {chain.rbegin(), chain.rend()};
    }
    return {};
}

// "MAJ:MIN ..." names this device.
bool names_device(std::string_view word, unsigned major, unsigned minor) {
    return word == fmt::format("{}:{}", major, minor);
}

// v1: "MAJ:MIN VALUE", a positive value is a limit (writing 0 removes one).
std::optional<ThrottleLimit> v1_limit(const fs::path& dir, unsigned major, unsigned minor) {
    for (const char* name :
         {"blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device",
          "blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device"}) {
        for (const std::string& line : lines_of(dir / name)) {
            const auto w = words(line);
            if (w.size() != 2 || !names_device(w[0], major, minor)) continue;
            std::uint64_t value = 0;
            const auto [end, ec] = std::from_chars(w[1].data(), w[1].data() + w[1].size(), value);
            if (ec == std::errc() && end == w[1].data() + w[1].size() && value > 0)
                return ThrottleLimit{(dir / name).string(), line};
        }
    }
    return std::nullopt;
}

// v2: "MAJ:MIN rbps=.. wbps=.. riops=.. wiops=..", any value other than "max" is a limit.
std::optional<ThrottleLimit> v2_limit(const fs::path& dir, unsigned major, unsigned minor) {
    for (const std::string& line : lines_of(dir / "io.max")) {
        const auto w = words(line);
        if (w.empty() || !names_device(w[0], major, minor)) continue;
        for (std::size_t i = 1; i < w.size(); ++i) {
            const std::size_t eq = w[i].find('=');
            if (eq == std::string_view::npos) continue;
            const std::string_view key = w[i].substr(0, eq), value = w[i].substr(eq + 1);
            const bool rate = key == "rbps" || key == "wbps" || key == "riops" || key == "wiops";
            if (rate && !value.empty() && value != "max")
                return ThrottleLimit{(dir / "io.max").string(), line};
        }
    }
    return std::nullopt;
}

struct Release {
    unsigned major = 0, minor = 0, patch = 0;
    auto operator<=>(const Release&) const = default;
};

// "6.18.44-fc-v769" -> 6.18.44; nullopt when it does not start with MAJOR.MINOR.
std::optional<Release> parse_release(std::string_view text) {
    Release r;
    const char* p = text.data();
    const char* end = text.data() + text.size();
    auto number = [&](unsigned& out) {
        const auto [next, ec] = std::from_chars(p, end, out);
        if (ec != std::errc()) return false;
        p = next;
        return true;
    };
    if (!number(r.major) || p == end || *p != '.') return std::nullopt;
    ++p;
    if (!number(r.minor)) return std::nullopt;
    if (p != end && *p == '.') {
        ++p;
        if (!number(r.patch)) r.patch = 0;
    }
    return r;
}

// Kernels where a non-rotational queue got DFL_THROTL_SLICE_SSD: from bf20ab538c81 ("blk-throttle:
// remove CONFIG_BLK_DEV_THROTTLING_LOW", 6.10), which kept the choice that had applied only with
// that option, until f76581f9f1d2 ("blk-throttle: Fix throttle slice time for SSDs", 6.19 and the
// stable releases below) restored 100 ms for every queue. Stable 6.10, 6.11, 6.13-6.16 ended
// without the fix.
bool ssd_slice_in_use(const Release& r) {
    if (r < Release{6, 10, 0} || r >= Release{6, 19, 0}) return false;
    constexpr std::array<Release, 3> fixed_stable = {{{6, 12, 63}, {6, 17, 13}, {6, 18, 2}}};
    for (const Release& f : fixed_stable)
        if (r.minor == f.minor && r.patch >= f.patch) return false;
    return true;
}

} // namespace

CgroupThrottle::CgroupThrottle(const fs::path& proc_root, const fs::path& fs_root) {
    const std::vector<MountEntry> mounts =
        read_mountinfo((proc_root / "self" / "mountinfo").string());
    // /proc/self/cgroup: "ID:CONTROLLERS:PATH"; v1 names its controllers ("7:blkio:/x",
    // "5:blkio,cpu:/x" when co-mounted), v2 is "0::/x".
    for (const std::string& line : lines_of(proc_root / "self" / "cgroup")) {
        const std::size_t first = line.find(':');
        const std::size_t second = first == std::string::npos ? first : line.find(':', first + 1);
        if (second == std::string::npos) continue;
        const std::string_view controllers =
            std::string_view(line).substr(first + 1, second - first - 1);
        const std::string path = line.substr(second + 1);
        if (path.empty() || path.front() != '/') continue;
        if (line.compare(0, first, "0") == 0 && controllers.empty()) {
            if (v2_directories_.empty())
                v2_directories_ = directories_of(path, mounts, true, fs_root);
        } else if (has_option(controllers, "blkio") && v1_directories_.empty()) {
            v1_directories_ = directories_of(path, mounts, false, fs_root);
        }
    }
    if (auto lines = lines_of(proc_root / "sys" / "kernel" / "osrelease"); !lines.empty())
        kernel_release_ = lines.front();
}

std::optional<ThrottleLimit> CgroupThrottle::limit_on(unsigned major, unsigned minor) const {
    for (const fs::path& dir : v1_directories_)
        if (auto limit = v1_limit(dir, major, minor)) return limit;
    for (const fs::path& dir : v2_directories_)
        if (auto limit = v2_limit(dir, major, minor)) return limit;
    return std::nullopt;
}

double kernel_throttle_slice(bool rotational, std::string_view kernel_release,
                             std::optional<unsigned> sample_time_ms) {
    constexpr double hd_slice = 0.1, ssd_slice = 0.02; // DFL_THROTL_SLICE_HD, _SSD (HZ/10, HZ/50)
    if (sample_time_ms && *sample_time_ms > 0) return *sample_time_ms / 1000.0;
    if (rotational) return hd_slice;
    const auto release = parse_release(kernel_release);
    return release && ssd_slice_in_use(*release) ? ssd_slice : hd_slice;
}

} // namespace iosig::calibrate
