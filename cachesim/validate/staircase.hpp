// Synchronous writes that complete on timer ticks: on this VM O_SYNC and O_DIRECT|O_SYNC writes
// finish on 4 ms ticks while the machine is busy, so their cost is a staircase in the size rather
// than Eq. 2's line. Detecting the tick and fitting Eq. 2/3 through the staircase.
#pragma once

#include <functional>
#include <span>
#include <utility>
#include <vector>

namespace iosig::cachesim::validate {

struct SizeMedian {
    double size, median, count;
};
std::vector<SizeMedian> per_size_medians(std::span<const double> sizes,
                                         std::span<const double> costs);
// The tick (1-20 ms) that at least 60 % of the medians sit on a multiple of (within 1.5 %), or 0.
double detect_quantum(const std::vector<SizeMedian>& medians);
// (fixed cost, per-byte cost) whose quantized `cost(fixed, per_byte, size)` is closest to the
// medians.
std::pair<double, double> fit_quantized(const std::vector<SizeMedian>& medians, double quantum,
                                        double per_byte_guess,
                                        const std::function<double(double, double, double)>& cost);

} // namespace iosig::cachesim::validate
