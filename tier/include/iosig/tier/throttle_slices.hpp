// A home device direction limited by Linux's blk-throttle (cgroup v1 blkio.throttle.*, cgroup v2
// io.max; Performance::throttle_slice in the node YAML), in seconds of work at its sustained rate.
//
// blk-throttle (block/blk-throttle.c) grants a group its budget a time slice at a time: an IO may
// go when the IOs dispatched since the slice began fit the budget up to the *end* of the current
// slice (tg_within_iops_limit rounds the elapsed time up to a whole slice), else it waits for the
// next slice boundary. A group that has been idle past its slice's end starts a new slice, so a
// slice's worth (20 IOs at 200 IOPS and 100 ms) goes at once; while busy, the slice is extended
// and trimmed to the last slice once two have passed (throtl_trim_slice). A program that reads
// one IO at a time therefore finishes N IOs of one slice's budget B in (ceil(N / B) - 1) slices:
// on the lab, 30 reads took 0.10 s, 64 took 0.30-0.32 s and 256 took 1.20 s where 200 IOPS says
// 0.15, 0.32 and 1.28 s. Work here is seconds at the sustained rate (an IO of the lab's hdd:
// the longer of 1/200 s and its size / 20 MiB/s), so a slice's budget is the slice's length.
#pragma once

#include <algorithm>
#include <cmath>

namespace iosig::tier {

class ThrottleSlices {
public:
    // slice: seconds (0: none; work takes its time, one request after another).
    explicit ThrottleSlices(double slice = 0) : slice_(std::max(0.0, slice)) {}

    // Work of `seconds` asked for at `now`, served after the work asked for before it. Returns
    // when the last of it is dispatched (its own time after dispatch is not counted: the
    // throttle, not the device, sets the pace).
    double serve(double now, double seconds) {
        now = std::max(now, last_);
        if (slice_ <= 0) return last_ = now + seconds;
        if (now > slice_end_) { // idle past the slice's end: a new slice
            slice_start_ = now;
            used_ = 0;
        }
        // The budget to the end of the current slice, then one more slice per boundary.
        const double current = std::ceil((now - slice_start_) / slice_ + rounding);
        const double needed = std::ceil((used_ + seconds) / slice_ - rounding);
        const double dispatched = needed <= current ? now : slice_start_ + (needed - 1) * slice_;
        used_ += seconds;
        // Trimmed to the last slice once two have passed; extended to a slice past dispatch.
        const double whole = std::floor((dispatched - slice_start_) / slice_ + rounding);
        if (whole >= 2) {
            slice_start_ += (whole - 1) * slice_;
            used_ = std::max(0.0, used_ - (whole - 1) * slice_);
        }
        slice_end_ = std::max(slice_end_, dispatched + slice_);
        return last_ = dispatched;
    }

    double slice() const { return slice_; }

    // When `seconds` of work asked for at once by an idle device's first requests is dispatched:
    // (ceil(seconds / slice) - 1) slices; the work's own time without a slice.
    static double from_idle(double seconds, double slice) {
        if (seconds <= 0) return 0;
        if (slice <= 0) return seconds;
        return (std::ceil(seconds / slice - rounding) - 1) * slice;
    }

private:
    // Twenty 1/200 s IOs make 0.1 s only up to rounding; a nanosecond is no work.
    static constexpr double rounding = 1e-9;

    double slice_;
    double slice_start_ = 0;
    double slice_end_ = -1; // before any request: idle
    double used_ = 0;       // work dispatched since slice_start_
    double last_ = 0;
};

} // namespace iosig::tier
