// The page cache a file's unsynced writes live in (page_cache_instance.hpp).
#include "page_cache_instance.hpp"

#include "iosig/tier/io.hpp"

#include <fcntl.h>
#include <fstream>
#include <string>
#include <sys/stat.h>

namespace iosig::tier::detail {
namespace {

// FNV-1a: stable across runs and builds (std::hash need not be).
std::uint64_t mix(std::uint64_t h, const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

} // namespace

std::uint64_t page_cache_instance(const std::filesystem::path& path) {
    std::string boot;
    if (std::ifstream in("/proc/sys/kernel/random/boot_id"); !(in >> boot) || boot.empty())
        return 0;
    std::uint64_t h = mix(0xcbf29ce484222325ull, boot.data(), boot.size());
    // A file system mounted again (after its device went away) gets a new mount id; where statx
    // cannot tell it, the device number stands in.
    struct statx sx{};
    std::uint64_t mount = 0;
    if (::statx(AT_FDCWD, path.c_str(), 0, STATX_MNT_ID, &sx) == 0)
        mount = (sx.stx_mask & STATX_MNT_ID)
                    ? sx.stx_mnt_id
                    : (std::uint64_t{sx.stx_dev_major} << 32 | sx.stx_dev_minor);
    h = mix(h, &mount, sizeof mount);
    const std::uint64_t cuts = IoFaults::simulated_power_cuts();
    h = mix(h, &cuts, sizeof cuts);
    return h == 0 ? 1 : h;
}

} // namespace iosig::tier::detail
