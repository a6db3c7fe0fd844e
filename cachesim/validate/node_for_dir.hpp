// A minimal node model for the file system holding a directory, for runs without a node YAML: one
// device (the backing disk, from sysfs) and one mount, plus the kernel's vm.dirty_* settings.
#pragma once

#include "iosig/cachesim/dirty_limits.hpp"
#include "iosig/node.hpp"

#include <filesystem>
#include <optional>
#include <string>

namespace iosig::cachesim::validate {

// `original` are the vm.dirty_* settings before the harness lowered them (they describe the node).
std::optional<Node> node_for_directory(const std::filesystem::path& dir,
                                       const VmDirtySettings& original, std::string* error);

// "Linux 6.18.44, 2 CPUs (AMD EPYC), 23.5 GiB RAM"
std::string describe_machine();

} // namespace iosig::cachesim::validate
