// Whether a blk-throttle limit of this process's cgroups (cgroup_throttle.hpp) applies to a
// discovered device, and the slice the kernel grants it in: Performance::throttle_slice.
#pragma once

#include "cgroup_throttle.hpp"
#include "sysfs.hpp"

#include <map>
#include <string>

namespace iosig::calibrate {

struct DeviceModel;

// A blk-throttle limit of this process's cgroups on a device (device_throttle).
struct DeviceThrottle {
    double slice = 0;   // s, the kernel's slice for the limited queue; 0: no limit
    std::string limit;  // the limit's line and file: "7:0 200 (/sys/fs/cgroup/blkio/x/blkio...)"
    std::string reason; // why this slice: "the kernel's slice for a rotational queue (loop0)"
};

// Whether a blk-throttle limit of this process's cgroups applies to the IO of `device` (a name in
// `devices`), and the slice the kernel grants it in. A limit is keyed by the MAJ:MIN of the device
// IO is submitted to: the device itself, its disk when it is a partition (a loop device is its own
// disk), and, for md/dm and multi-device btrfs, the devices beneath, which see the IO again.
DeviceThrottle device_throttle(const Sysfs& sysfs, const CgroupThrottle& cgroups,
                               const std::map<std::string, DeviceModel>& devices,
                               const std::string& device);

} // namespace iosig::calibrate
