// The cost of rewriting dirty pages and how it grows with the time since they were written
// (rewrite_seconds_per_byte in syscall_model.hpp).
#include "calibrate.hpp"
#include "calibrate_runs.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

namespace iosig::cachesim::validate {

using namespace detail;

RewriteCooling fit_rewrite_cooling(std::vector<std::pair<double, double>> points) {
    RewriteCooling out;
    std::erase_if(points, [](const auto& p) { return !(p.second > 0) || p.first < 0; });
    if (points.empty()) return out;
    std::sort(points.begin(), points.end());
    out.hot_bw = 1 / points.front().second;
    if (points.size() < 3) return out;
    // The oldest point is the cold cost; the others approach it as exp(-age / tau):
    // ln(cold - y) = ln(cold - hot) - age / tau.
    const double cold = points.back().second;
    std::vector<double> ages, logs;
    for (std::size_t i = 0; i + 1 < points.size(); ++i) {
        const double gap = cold - points[i].second;
        if (gap <= 0.02 * cold) continue; // within the noise of the cold cost: no information
        ages.push_back(points[i].first);
        logs.push_back(std::log(gap));
    }
    if (ages.size() < 2) return out;
    const LinearFit line = fit_line(ages, logs);
    const double hot = cold - std::exp(line.intercept);
    if (line.slope >= 0 || hot <= 0) return out;
    out.hot_bw = 1 / hot;
    out.cold_bw = 1 / cold;
    out.cooling_time = -1 / line.slope;
    return out;
}

RewriteCooling measure_rewrite_cooling(const CalibrationSetup& setup, double write_syscall_base) {
    // Rewrites of one whole 4 MiB region (no fresh bytes, so no other rate is involved), after
    // delays of computation from none to 30 ms. The age of the rewritten bytes is the time from the
    // start of the previous write to the start of this one, as the model sees it (a piece's time is
    // when its copy starts).
    constexpr std::uint64_t region = 4 * MiB;
    constexpr std::size_t rewrites = 12, settle = 2;
    std::vector<double> delays = {0, 0.5e-3, 1e-3, 2e-3, 4e-3, 8e-3, 30e-3};
    std::map<double, std::vector<double>> ages, costs;
    std::mt19937_64 rng(7);
    const auto file = setup.dir / "iosig-calibrate-rewrite.dat";
    for (int pass = 0; pass <= setup.repetitions; ++pass) {
        std::shuffle(delays.begin(), delays.end(), rng);
        for (double delay : delays) {
            wait_for_clean(background_threshold() / 4, 10);
            std::vector<WriteRequest> workload{{0, region, 0, 0}};
            for (std::size_t i = 0; i < rewrites; ++i)
                workload.push_back({0, region, delay, 0});
            const RunTimings t = run_workload(file, Method::buffered, workload);
            if (!t.ok()) throw std::runtime_error(fmt::format("calibration run: {}", t.error));
            if (pass == 0) continue; // warm-up round
            for (std::size_t i = 1 + settle; i < workload.size(); ++i) {
                ages[delay].push_back(t.start[i] - t.start[i - 1]);
                costs[delay].push_back(t.cost(i));
            }
        }
    }
    std::vector<std::pair<double, double>> points;
    for (const auto& [delay, c] : costs)
        points.emplace_back(median(ages[delay]),
                            (median(c) - write_syscall_base) / static_cast<double>(region));
    for (const auto& [age, per_byte] : points)
        say(setup, fmt::format("  rewrite after {:.2f} ms: {:.4g} B/s", age * 1e3, 1 / per_byte));
    return fit_rewrite_cooling(points);
}

} // namespace iosig::cachesim::validate
