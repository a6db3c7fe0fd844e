// The kernel's dirty throttling (mm/page-writeback.c, balance_dirty_pages), the part of CAWL
// Sect. 3.2 whose symbols were lost from the paper's text (see shared/NOTES.md):
//   freerun   = (bg_thresh + thresh) / 2                 no throttling at or below
//   setpoint  = (freerun + limit) / 2                    the dirty level the control aims at
//   pos_ratio = 1 + ((setpoint - dirty) / (limit - setpoint))^3, clamped to [0, 2]
//   task_ratelimit = dirty_ratelimit * pos_ratio,  pause = pages_dirtied / task_ratelimit
// dirty_ratelimit, "the average task rate", is re-estimated every 200 ms while a task is throttled
// so that the dirtiers together produce what the device writes back.
#pragma once

#include "iosig/cachesim/parameters.hpp"

namespace iosig::cachesim {

// Three states of CAWL Sect. 4.4, plus how the state of a write is reported.
enum class CacheState : std::uint8_t {
    no_flush,         // below the background threshold, nothing expired: writes go at r_ramdisk
    background_flush, // the flusher runs: writes slow down to the flushing rate
    throttled,        // above freerun: balance_dirty_pages pauses the writer
};
std::string_view to_string(CacheState state);

CacheState classify(const DirtyThresholds& t, double dirty, bool expired);

// Global position ratio at `dirty` bytes (NOTES.md formula), in [0, 2].
double pos_ratio(const DirtyThresholds& t, double dirty);

// balance_dirty_pages does not pause every page a throttled task dirties: it lets the pause the
// task owes build up until it reaches min_pause and then sleeps it in whole jiffies, so the task
// copies at full speed between sleeps of about equal length (`sleep`). Where the sleeps fall
// depends on timing no model of the workload knows (in the harness they land on different writes
// in every run), so a write that owes `paced` seconds sleeps floor(paced / sleep) times or once
// more, the latter with probability frac(paced / sleep). This returns the most likely (median)
// number of sleeps, the rounded quotient, in seconds: what a typical run of the write sees, where
// `paced` is what it costs on average. sleep <= 0 (not measured): `paced` itself.
double median_sleep_time(double paced, double sleep);

// The kernel's dirty-ratelimit estimator (wb_update_dirty_ratelimit), one update per interval.
class DirtyRatelimit {
public:
    static constexpr double update_interval = 0.2; // s (BANDWIDTH_INTERVAL)

    DirtyRatelimit(double initial_rate, double page_size)
        : rate_(initial_rate), balanced_(initial_rate), page_size_(page_size) {}

    double rate() const { return rate_; }
    double balanced() const { return balanced_; }

    // One update after `elapsed` seconds in which `dirtied` bytes were dirtied while the device
    // wrote back at `write_bw`, at `dirty` bytes: the rate moves towards the balanced rate
    //   balanced = task_ratelimit * write_bw / dirty_rate,
    // by at most 1/8 of the distance and less when close, and only in the direction that also moves
    // the dirty level towards the setpoint.
    void update(const DirtyThresholds& t, double dirty, double dirtied, double elapsed,
                double write_bw);

private:
    double rate_;
    double balanced_;
    double page_size_;
};

} // namespace iosig::cachesim
