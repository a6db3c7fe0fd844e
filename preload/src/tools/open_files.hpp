// Which files live processes have open or memory-mapped, from /proc/<pid>/fd and /proc/<pid>/maps.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace iosig::preload {

// path -> one pid using it; only paths starting with one of `prefixes` are collected.
std::map<std::string, long> files_in_use(const std::vector<std::string>& prefixes);

} // namespace iosig::preload
