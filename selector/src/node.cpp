// Look-ups and names of the node model (node.hpp).
#include "iosig/node.hpp"

#include "node_yaml_internal.hpp"

#include <algorithm>

namespace iosig {

const Device* Node::find_device(std::string_view device_name) const {
    const auto it = std::find_if(devices.begin(), devices.end(),
                                 [&](const Device& d) { return d.name == device_name; });
    return it == devices.end() ? nullptr : &*it;
}

// Mount paths are stored normalized (no trailing slash), so "/mnt/x/" finds "/mnt/x".
const Mount* Node::find_mount(std::string_view path) const {
    const auto exact =
        std::find_if(mounts.begin(), mounts.end(), [&](const Mount& m) { return m.path == path; });
    if (exact != mounts.end()) return &*exact;
    const std::string normal = node_yaml_detail::normalize_mount_path(path);
    const auto it = std::find_if(mounts.begin(), mounts.end(),
                                 [&](const Mount& m) { return m.path == normal; });
    return it == mounts.end() ? nullptr : &*it;
}

std::string_view to_string(MediaKind media) {
    switch (media) {
    case MediaKind::ram:
        return "ram";
    case MediaKind::nvram:
        return "nvram";
    case MediaKind::ssd:
        return "ssd";
    case MediaKind::hdd:
        return "hdd";
    case MediaKind::network:
        return "network";
    }
    return "?";
}

std::string_view to_string(RedundancyScheme scheme) {
    switch (scheme) {
    case RedundancyScheme::none:
        return "none";
    case RedundancyScheme::raid0:
        return "raid0";
    case RedundancyScheme::raid1:
        return "raid1";
    case RedundancyScheme::raid5:
        return "raid5";
    case RedundancyScheme::raid6:
        return "raid6";
    case RedundancyScheme::raid10:
        return "raid10";
    case RedundancyScheme::replication:
        return "replication";
    case RedundancyScheme::erasure:
        return "erasure";
    case RedundancyScheme::opaque:
        return "opaque";
    }
    return "?";
}

std::string_view to_string(DeviceStructure structure) {
    switch (structure) {
    case DeviceStructure::simple:
        return "simple";
    case DeviceStructure::complex:
        return "complex";
    case DeviceStructure::partition:
        return "partition";
    }
    return "?";
}

// The YAML tag spelling without '!' (so `defaulted` is "default", as in `!default 4K`).
std::string_view to_string(Provenance provenance) {
    switch (provenance) {
    case Provenance::unknown:
        return "unknown";
    case Provenance::measured:
        return "measured";
    case Provenance::derived:
        return "derived";
    case Provenance::detected:
        return "detected";
    case Provenance::defaulted:
        return "default";
    case Provenance::user:
        return "user";
    }
    return "?";
}

} // namespace iosig
