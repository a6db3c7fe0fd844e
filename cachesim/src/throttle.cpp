// Dirty position control and dirty-ratelimit estimation (kernel names; see throttle.hpp).
#include "iosig/cachesim/throttle.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace iosig::cachesim {

std::string_view to_string(CacheState state) {
    switch (state) {
    case CacheState::no_flush:
        return "no-flush";
    case CacheState::background_flush:
        return "background-flush";
    case CacheState::throttled:
        return "throttled";
    }
    return "?";
}

CacheState classify(const DirtyThresholds& t, double dirty, bool expired) {
    if (dirty > t.freerun()) return CacheState::throttled;
    if (dirty > t.background || expired) return CacheState::background_flush;
    return CacheState::no_flush;
}

double pos_ratio(const DirtyThresholds& t, double dirty) {
    const double limit = t.effective_limit();
    const double setpoint = t.setpoint();
    if (dirty >= limit) return 0;
    if (limit <= setpoint) return 2;
    const double x = (setpoint - dirty) / (limit - setpoint);
    return std::clamp(1 + x * x * x, 0.0, 2.0);
}

double median_sleep_time(double paced, double sleep) {
    if (sleep <= 0 || paced <= 0) return std::max(paced, 0.0);
    return sleep * std::round(paced / sleep);
}

void DirtyRatelimit::update(const DirtyThresholds& t, double dirty, double dirtied, double elapsed,
                            double write_bw) {
    if (elapsed <= 0 || write_bw <= 0) return;
    const double dirty_rate = std::max(dirtied / elapsed, page_size_);
    const double task_rate = rate_ * pos_ratio(t, dirty);
    // If tasks dirtied at task_rate and the device wrote write_bw, this base rate balances both.
    const double balanced = std::min(task_rate * write_bw / dirty_rate, write_bw);

    // Follow the balanced rate only as far as the previous estimate and the position control agree.
    double step = 0;
    if (dirty < t.setpoint()) {
        const double x = std::min({balanced_, balanced, task_rate});
        if (rate_ < x) step = x - rate_;
    } else {
        const double x = std::max({balanced_, balanced, task_rate});
        if (rate_ > x) step = rate_ - x;
    }
    // The kernel works in pages/s and damps small corrections: step >>= rate / (2 step + 1), then
    // /8.
    const auto rate_pages = static_cast<std::uint64_t>(rate_ / page_size_);
    auto step_pages = static_cast<std::uint64_t>(step / page_size_);
    const std::uint64_t shift = rate_pages / (2 * step_pages + 1);
    step_pages = shift < 64 ? ((step_pages >> shift) + 7) / 8 : 0;
    step = static_cast<double>(step_pages) * page_size_;

    if (rate_ < balanced)
        rate_ = std::min(rate_ + step, balanced);
    else
        rate_ = std::max(rate_ - step, balanced);
    rate_ = std::max(rate_, page_size_);
    balanced_ = balanced;
}

} // namespace iosig::cachesim
