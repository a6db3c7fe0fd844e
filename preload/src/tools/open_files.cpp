#include "open_files.hpp"

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace iosig::preload {
namespace {

bool wanted(const std::string& path, const std::vector<std::string>& prefixes) {
    for (const auto& prefix : prefixes)
        if (path.compare(0, prefix.size(), prefix) == 0) return true;
    return false;
}

} // namespace

std::map<std::string, long> files_in_use(const std::vector<std::string>& prefixes) {
    std::map<std::string, long> used;
    std::error_code ec;
    const long self = getpid();
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = entry.path().filename();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        const long pid = std::stol(name);
        if (pid == self) continue;
        std::error_code fd_ec;
        for (const auto& fd : std::filesystem::directory_iterator(entry.path() / "fd", fd_ec)) {
            std::error_code link_ec;
            const auto target = std::filesystem::read_symlink(fd.path(), link_ec);
            if (!link_ec && wanted(target.string(), prefixes)) used.emplace(target.string(), pid);
        }
        std::ifstream maps(entry.path() / "maps");
        std::string line;
        while (std::getline(maps, line)) {
            const auto slash = line.find('/');
            if (slash == std::string::npos) continue;
            std::string path = line.substr(slash);
            if (const auto deleted = path.rfind(" (deleted)"); deleted != std::string::npos)
                path.resize(deleted);
            if (wanted(path, prefixes)) used.emplace(path, pid);
        }
    }
    return used;
}

} // namespace iosig::preload
