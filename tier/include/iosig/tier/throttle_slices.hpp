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
//
// blk-throttle keeps two budgets per direction, IOs and bytes, over the same slice, and an IO
// goes once both allow it. One budget of work in seconds charges every IO the larger of its two
// shares, which is right while one budget binds, but not when the binding one changes: 256
// single-page fills use the IO budget and hardly any bytes, and the readahead after them finds
// the bytes of the last slice or two unused and reads 5.8 MiB in 0.13 s on the lab (20 MiB/s
// says 0.29 s). The constructor with both rates keeps them apart: serve(now, ios, bytes).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>

namespace iosig::tier {

class ThrottleSlices {
public:
    // slice: seconds (0: none; work takes its time, one request after another). One budget:
    // work in seconds.
    explicit ThrottleSlices(double slice = 0) : slice_(std::max(0.0, slice)), rates_{1, 0} {}

    // Two budgets: IOs and bytes per second, both > 0.
    ThrottleSlices(double slice, double ios_per_second, double bytes_per_second)
        : slice_(std::max(0.0, slice)), rates_{ios_per_second, bytes_per_second} {}

    // Work of `seconds` asked for at `now`, served after the work asked for before it. Returns
    // when the last of it is dispatched (its own time after dispatch is not counted: the
    // throttle, not the device, sets the pace). For a throttle of one budget.
    double serve(double now, double seconds) { return serve_amounts(now, {seconds, 0}); }

    // `ios` IOs of `bytes` in all, asked for at `now`. For a throttle of two budgets.
    double serve(double now, double ios, double bytes) { return serve_amounts(now, {ios, bytes}); }

    double slice() const { return slice_; }
    bool two_budgets() const { return rates_[1] > 0; }

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

    double serve_amounts(double now, std::array<double, 2> amounts) {
        now = std::max(now, last_);
        if (slice_ <= 0) {
            double seconds = 0;
            for (int k = 0; k < 2; ++k)
                if (rates_[k] > 0) seconds = std::max(seconds, amounts[k] / rates_[k]);
            return last_ = now + seconds;
        }
        if (now > slice_end_) { // idle past the slice's end: a new slice
            slice_start_ = now;
            used_ = {0, 0};
        }
        // The budget to the end of the current slice, then one more slice per boundary; the
        // later of the two budgets' boundaries.
        const double current = std::ceil((now - slice_start_) / slice_ + rounding);
        double needed = 0;
        for (int k = 0; k < 2; ++k)
            if (rates_[k] > 0)
                needed = std::max(
                    needed, std::ceil((used_[k] + amounts[k]) / (rates_[k] * slice_) - rounding));
        const double dispatched = needed <= current ? now : slice_start_ + (needed - 1) * slice_;
        for (int k = 0; k < 2; ++k)
            used_[k] += amounts[k];
        // Trimmed to the last slice once two have passed; extended to a slice past dispatch.
        const double whole = std::floor((dispatched - slice_start_) / slice_ + rounding);
        if (whole >= 2) {
            slice_start_ += (whole - 1) * slice_;
            for (int k = 0; k < 2; ++k)
                used_[k] = std::max(0.0, used_[k] - (whole - 1) * slice_ * rates_[k]);
        }
        slice_end_ = std::max(slice_end_, dispatched + slice_);
        return last_ = dispatched;
    }

    double slice_;
    std::array<double, 2> rates_; // budget k's amount per second (0: no such budget)
    double slice_start_ = 0;
    double slice_end_ = -1;            // before any request: idle
    std::array<double, 2> used_{0, 0}; // dispatched since slice_start_, per budget
    double last_ = 0;
};

} // namespace iosig::tier
