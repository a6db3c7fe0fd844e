// Costs that grow with the time since the same data or code was last used, as other work on the
// machine evicts it from the CPU caches: rewrites of dirty pages (rewrite_seconds_per_byte) and the
// fixed cost of a write() call (call_base_cost), both in syscall_model.hpp.
#include "calibrate.hpp"
#include "calibrate_runs.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

namespace iosig::cachesim::validate {

using namespace detail;

namespace {

// For a cooling time tau, the amplitude A = cold - hot that fits y = cold - A exp(-age / tau) best
// (least squares with relative weights), and the weighted squared error it leaves.
std::pair<double, double> cooling_amplitude(const std::vector<std::pair<double, double>>& points,
                                            double cold, double tau) {
    double num = 0, den = 0;
    for (const auto& [age, y] : points) {
        const double e = std::exp(-age / tau), w = 1 / (y * y);
        num += w * (cold - y) * e;
        den += w * e * e;
    }
    const double amplitude = den > 0 ? num / den : 0;
    double error = 0;
    for (const auto& [age, y] : points) {
        const double r = y - (cold - amplitude * std::exp(-age / tau));
        error += r * r / (y * y);
    }
    return {amplitude, error};
}

} // namespace

CoolingFit fit_cooling(std::vector<std::pair<double, double>> points) {
    CoolingFit out;
    std::erase_if(points, [](const auto& p) { return !(p.second > 0) || p.first < 0; });
    if (points.empty()) return out;
    std::sort(points.begin(), points.end());
    out.hot = points.front().second;
    if (points.size() < 3) return out;
    // The oldest point is the cold cost. The others approach it as exp(-age / tau): for each tau
    // the amplitude is linear, so tau is searched on a log grid and then refined by golden
    // section. (A line through ln(cold - cost) was tried first: a point a little below the cold
    // cost has a very negative logarithm and tipped the line until hot came out negative.)
    const double cold = points.back().second;
    points.pop_back();
    auto error_at = [&](double log_tau) {
        return cooling_amplitude(points, cold, std::exp(log_tau)).second;
    };
    const double lo = std::log(1e-5), hi = std::log(1.0);
    constexpr int steps = 200;
    int best = 0;
    double best_error = error_at(lo);
    for (int i = 1; i <= steps; ++i) {
        const double e = error_at(lo + (hi - lo) * i / steps);
        if (e < best_error) best_error = e, best = i;
    }
    double a = lo + (hi - lo) * std::max(0, best - 1) / steps;
    double b = lo + (hi - lo) * std::min(steps, best + 1) / steps;
    const double g = (std::sqrt(5.0) - 1) / 2;
    for (int i = 0; i < 60; ++i) {
        const double c = b - g * (b - a), d = a + g * (b - a);
        if (error_at(c) < error_at(d))
            b = d;
        else
            a = c;
    }
    const double tau = std::exp((a + b) / 2);
    const double amplitude = cooling_amplitude(points, cold, tau).first;
    const double hot = cold - amplitude;
    // No decay worth the name (within 2 % of the cold cost), or one that makes no sense.
    if (amplitude <= 0.02 * cold || hot <= 0) return out;
    out.hot = hot;
    out.cold = cold;
    out.cooling_time = tau;
    return out;
}

namespace {

// Runs `make(delay)` for every delay, in a new random order each round, one round discarded and
// setup.repetitions measured; returns per delay the median of `age_of(run, i)` and of the costs of
// the writes from `first` on.
template <class Make, class AgeOf>
std::vector<std::pair<double, double>>
cooling_points(const CalibrationSetup& setup, std::vector<double> delays, Make make, AgeOf age_of,
               std::size_t first, const char* file_name) {
    std::map<double, std::vector<double>> ages, costs;
    std::mt19937_64 rng(7);
    const auto file = setup.dir / file_name;
    for (int pass = 0; pass <= setup.repetitions; ++pass) {
        std::shuffle(delays.begin(), delays.end(), rng);
        for (double delay : delays) {
            wait_for_clean(background_threshold() / 4, 10);
            const std::vector<WriteRequest> workload = make(delay);
            const RunTimings t = run_workload(file, Method::buffered, workload);
            if (!t.ok()) throw std::runtime_error(fmt::format("calibration run: {}", t.error));
            if (pass == 0) continue; // warm-up round
            for (std::size_t i = first; i < workload.size(); ++i) {
                ages[delay].push_back(age_of(t, i));
                costs[delay].push_back(t.cost(i));
            }
        }
    }
    std::vector<std::pair<double, double>> points;
    for (const auto& [delay, c] : costs)
        points.emplace_back(median(ages[delay]), median(c));
    return points;
}

const std::vector<double> cooling_delays = {0, 0.5e-3, 1e-3, 2e-3, 4e-3, 8e-3, 30e-3};

} // namespace

CoolingFit measure_rewrite_cooling(const CalibrationSetup& setup, double write_syscall_base) {
    // Rewrites of one whole 4 MiB region (no fresh bytes, so no other rate is involved), after
    // delays of computation from none to 30 ms. The age of the rewritten bytes is the time from the
    // start of the previous write to the start of this one, as the model sees it (a piece's time is
    // when its copy starts).
    constexpr std::uint64_t region = 4 * MiB;
    auto make = [](double delay) {
        std::vector<WriteRequest> workload{{0, region, 0, 0}};
        for (int i = 0; i < 12; ++i)
            workload.push_back({0, region, delay, 0});
        return workload;
    };
    auto age = [](const RunTimings& t, std::size_t i) { return t.start[i] - t.start[i - 1]; };
    auto points =
        cooling_points(setup, cooling_delays, make, age, 3, "iosig-calibrate-rewrite.dat");
    for (auto& [at, cost] : points) {
        cost = (cost - write_syscall_base) / static_cast<double>(region);
        say(setup, fmt::format("  rewrite after {:.2f} ms: {:.4g} B/s", at * 1e3, 1 / cost));
    }
    return fit_cooling(points);
}

CoolingFit measure_call_cooling(const CalibrationSetup& setup) {
    // Page-aligned 4 KiB appends after the same delays: the copy is small, so the cost is mostly
    // the call's. The age is the time since the previous call returned.
    auto make = [](double delay) {
        std::vector<WriteRequest> workload;
        for (std::uint64_t i = 0; i < 24; ++i)
            workload.push_back({i * 4 * KiB, 4 * KiB, i ? delay : 0, 0});
        return workload;
    };
    auto age = [](const RunTimings& t, std::size_t i) { return t.start[i] - t.end[i - 1]; };
    const auto points =
        cooling_points(setup, cooling_delays, make, age, 2, "iosig-calibrate-call.dat");
    for (const auto& [at, cost] : points)
        say(setup, fmt::format("  4 KiB write() after {:.2f} ms: {:.2f} us", at * 1e3, cost * 1e6));
    return fit_cooling(points);
}

} // namespace iosig::cachesim::validate
