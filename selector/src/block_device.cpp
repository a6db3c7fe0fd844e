// Which whole disk holds a file (block_device.hpp).
#include "iosig/block_device.hpp"

#include <fmt/format.h>
#include <fstream>
#include <sys/stat.h>
#include <sys/sysmacros.h>

namespace iosig {
namespace {

std::optional<std::string> first_word(const std::filesystem::path& file) {
    std::ifstream in(file);
    std::string word;
    if (!(in >> word)) return std::nullopt;
    return word;
}

} // namespace

std::optional<DiskOfFile> disk_of_devno(unsigned major, unsigned minor,
                                        const std::filesystem::path& sys_root) {
    std::error_code ec;
    const std::filesystem::path link =
        sys_root / "dev" / "block" / fmt::format("{}:{}", major, minor);
    std::filesystem::path dir = std::filesystem::canonical(link, ec);
    if (ec) return std::nullopt; // no such block device
    // A partition has no queue or bdi of its own; both belong to the disk one directory up.
    if (std::filesystem::exists(dir / "partition", ec)) dir = dir.parent_path();
    const auto devno = first_word(dir / "dev");
    if (!devno) return std::nullopt;
    return DiskOfFile{*devno, dir};
}

std::optional<DiskOfFile> disk_of(const std::filesystem::path& path) {
    struct stat st{};
    if (::stat(path.c_str(), &st) != 0) return std::nullopt;
    const dev_t id = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
    return disk_of_devno(major(id), minor(id));
}

} // namespace iosig
