#include "staircase.hpp"

#include "iosig/cachesim/sync_cost.hpp"
#include "regression.hpp"

#include <cmath>
#include <map>

namespace iosig::cachesim::validate {

std::vector<SizeMedian> per_size_medians(std::span<const double> sizes,
                                         std::span<const double> costs) {
    std::map<double, std::vector<double>> groups;
    for (std::size_t i = 0; i < sizes.size(); ++i)
        groups[sizes[i]].push_back(costs[i]);
    std::vector<SizeMedian> out;
    for (auto& [size, costs] : groups)
        out.push_back({size, median(costs), static_cast<double>(costs.size())});
    return out;
}

namespace {

// Share of the per-size medians that sit on a multiple of q (within 1.5 %: this VM's ticks are
// exact to a few tenths of a percent), and their mean distance.
std::pair<double, double> quantum_fit(const std::vector<SizeMedian>& m, double q) {
    double on = 0, total = 0, distance = 0;
    for (const SizeMedian& x : m) {
        const double k = x.median / q;
        const double off = std::fabs(k - std::round(k));
        total += x.count;
        distance += x.count * off;
        if (std::round(k) >= 1 && off <= 0.015) on += x.count;
    }
    return {total > 0 ? on / total : 0, total > 0 ? distance / total : 1};
}

} // namespace

// The completion tick of synchronous writes, if their median costs sit on multiples of one: the
// largest tick between 1 and 20 ms that 60 % of the sizes' medians fit, refined to the best fit
// near it.
double detect_quantum(const std::vector<SizeMedian>& m) {
    if (m.size() < 3) return 0;
    for (double q = 20e-3; q >= 1e-3; q -= 0.05e-3) {
        if (quantum_fit(m, q).first < 0.6) continue;
        double best = q, best_distance = quantum_fit(m, q).second;
        for (double r = 0.9 * q; r <= 1.1 * q; r += 0.01e-3) {
            const auto [share, distance] = quantum_fit(m, r);
            if (share >= 0.6 && distance < best_distance) best = r, best_distance = distance;
        }
        return best;
    }
    return 0;
}

// With completion ticks the cost is a staircase: the (L, 1/B) whose quantized line is closest, by
// relative error, to the per-size medians (grid search around the plain fit).
std::pair<double, double> fit_quantized(const std::vector<SizeMedian>& m, double q,
                                        double slope_guess,
                                        const std::function<double(double, double, double)>& cost) {
    if (slope_guess <= 0) slope_guess = 1e-9;
    double best_l = 0, best_slope = slope_guess, best = 1e300;
    for (int i = 0; i <= 75; ++i) {
        const double l = 1.5 * q * i / 75;
        for (int j = 0; j <= 80; ++j) {
            const double slope = slope_guess * std::pow(16.0, (j - 40) / 40.0);
            double error = 0;
            for (const SizeMedian& x : m)
                error += x.count *
                         std::fabs(quantize_completion(cost(l, slope, x.size), q) - x.median) /
                         x.median;
            if (error < best) best = error, best_l = l, best_slope = slope;
        }
    }
    return {best_l, best_slope};
}

} // namespace iosig::cachesim::validate
