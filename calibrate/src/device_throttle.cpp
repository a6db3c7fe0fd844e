#include "device_throttle.hpp"

#include "discovery.hpp"

#include <fmt/format.h>
#include <vector>

namespace iosig::calibrate {
namespace {

// The block devices that see a device's IO, nearest first (device_throttle).
void submitted_to(const Sysfs& sysfs, const std::map<std::string, DeviceModel>& devices,
                  const std::string& name, int depth, std::vector<BlockDevice>& out) {
    if (depth > max_device_depth) return;
    if (auto d = sysfs.by_name(name)) {
        out.push_back(*d);
        if (d->kind == BlockKind::partition)
            if (auto disk = sysfs.by_name(d->parent)) out.push_back(*disk);
        for (const std::string& slave : d->slaves) // md/dm resubmit to their members
            submitted_to(sysfs, devices, slave, depth + 1, out);
        return;
    }
    // Not a block device: a multi-device btrfs submits to its members.
    if (const auto it = devices.find(name); it != devices.end())
        for (const std::string& member : it->second.members)
            submitted_to(sysfs, devices, member, depth + 1, out);
}

} // namespace

DeviceThrottle device_throttle(const Sysfs& sysfs, const CgroupThrottle& cgroups,
                               const std::map<std::string, DeviceModel>& devices,
                               const std::string& device) {
    std::vector<BlockDevice> candidates;
    submitted_to(sysfs, devices, device, 0, candidates);
    for (const BlockDevice& d : candidates) {
        const auto limit = cgroups.limit_on(d.major, d.minor);
        if (!limit) continue;
        DeviceThrottle t;
        t.slice = kernel_throttle_slice(d.rotational, cgroups.kernel_release(),
                                        d.throttle_sample_time_ms);
        t.limit = fmt::format("{} ({})", limit->line, limit->file);
        const std::string& release = cgroups.kernel_release();
        if (d.throttle_sample_time_ms)
            t.reason = fmt::format("queue/throttle_sample_time of {}", d.name);
        else if (d.rotational)
            t.reason = fmt::format("the kernel's slice for a rotational queue ({})", d.name);
        else if (t.slice < 0.1)
            t.reason = fmt::format("the slice Linux {} gives a non-rotational queue ({})", release,
                                   d.name);
        else
            t.reason = fmt::format("the slice Linux {} gives every queue ({}: non-rotational)",
                                   release.empty() ? "(release unknown)" : release, d.name);
        return t;
    }
    return {};
}

} // namespace iosig::calibrate
