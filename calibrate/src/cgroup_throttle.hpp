// Linux blk-throttle limits that apply to this process: whether its cgroup, or an ancestor, limits
// a block device (cgroup v1 blkio.throttle.{read,write}_{bps,iops}_device, cgroup v2 io.max), and
// the time slice in which the kernel grants such a limit's budget (Performance::throttle_slice).
// The roots are parameters so tests can build a fake /proc and cgroup tree.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iosig::calibrate {

struct ThrottleLimit {
    std::string file; // the cgroup file that holds it
    std::string line; // its line for the device: "7:0 200", "8:16 rbps=max wbps=max riops=200 ..."
};

class CgroupThrottle {
public:
    // Reads <proc_root>/self/cgroup, <proc_root>/self/mountinfo and
    // <proc_root>/sys/kernel/osrelease now; the cgroup mount points named in mountinfo are looked
    // up under `fs_root`. Missing or malformed input leaves nothing to find: no limit, never an
    // exception.
    explicit CgroupThrottle(const std::filesystem::path& proc_root = "/proc",
                            const std::filesystem::path& fs_root = "/");

    // A limit on the device MAJ:MIN in this process's cgroup or one of its ancestors (a parent's
    // limit holds for its children), v1 before v2; nullopt when there is none.
    std::optional<ThrottleLimit> limit_on(unsigned major, unsigned minor) const;

    const std::string& kernel_release() const { return kernel_release_; }

private:
    std::vector<std::filesystem::path> v1_directories_; // own blkio cgroup first, then ancestors
    std::vector<std::filesystem::path> v2_directories_;
    std::string kernel_release_;
};

// The slice blk-throttle uses for a queue (block/blk-throttle.c), in seconds. `sample_time_ms` is
// the queue's throttle_sample_time (only kernels before 6.10 built with
// CONFIG_BLK_DEV_THROTTLING_LOW have it, and it is the slice itself). Otherwise by kernel release:
// 100 ms (DFL_THROTL_SLICE_HD) for every queue, except 20 ms (DFL_THROTL_SLICE_SSD) for a
// non-rotational one on the kernels that chose by the queue's nonrot flag: 6.10 up to the fix that
// restored 100 ms (6.19; stable 6.12.63, 6.17.13, 6.18.2). An unreadable release counts as current.
double kernel_throttle_slice(bool rotational, std::string_view kernel_release,
                             std::optional<unsigned> sample_time_ms = std::nullopt);

} // namespace iosig::calibrate
