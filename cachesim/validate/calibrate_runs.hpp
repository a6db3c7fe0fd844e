// Shared pieces of the calibration measurements (calibrate*.cpp): samples, shuffled workloads,
// repeated runs with a discarded warm-up, and the fits. Internal to the harness.
#pragma once

#include "calibrate.hpp"
#include "real_run.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <optional>
#include <random>
#include <stdexcept>

namespace iosig::cachesim::validate::detail {

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB;

struct Sample {
    double size;
    double cost;
};

inline void say(const CalibrationSetup& setup, const std::string& text) {
    if (setup.log) setup.log(text);
}

inline std::vector<WriteRequest> appends(const std::vector<std::uint64_t>& sizes) {
    std::vector<WriteRequest> out;
    std::uint64_t offset = 0;
    for (std::uint64_t s : sizes) {
        out.push_back({offset, s, 0, 0});
        offset += s;
    }
    return out;
}

inline std::vector<std::uint64_t> shuffled(std::vector<std::uint64_t> sizes, int copies,
                                           std::mt19937_64& rng) {
    std::vector<std::uint64_t> out;
    for (int c = 0; c < copies; ++c)
        out.insert(out.end(), sizes.begin(), sizes.end());
    std::shuffle(out.begin(), out.end(), rng);
    return out;
}

inline double background_threshold() {
    const auto state = read_procfs_state();
    return state && state->global ? state->global->background_thresh : 0;
}

// Per write of a run, how often the kernel put the writer to sleep inside the call
// (balance_dirty_pages events with pause > 0).
inline std::vector<int> throttle_sleeps(const CalibrationSetup& setup, const RunTimings& run) {
    std::vector<int> sleeps(run.start.size(), 0);
    if (!setup.collector) return sleeps;
    setup.collector->poll(0);
    for (const ThrottleSample& t : setup.collector->throttle_history()) {
        if (t.tgid != run.pid || t.pause <= 0) continue;
        const double at = t.time - run.t0;
        auto it = std::upper_bound(run.start.begin(), run.start.end(), at);
        if (it == run.start.begin()) continue;
        const std::size_t i = static_cast<std::size_t>(it - run.start.begin()) - 1;
        if (at <= run.end[i] + 1e-3) ++sleeps[i];
    }
    return sleeps;
}

// Which writes of a run the kernel paused.
inline std::vector<bool> paused_writes(const CalibrationSetup& setup, const RunTimings& run) {
    const std::vector<int> sleeps = throttle_sleeps(setup, run);
    std::vector<bool> paused(sleeps.size());
    for (std::size_t i = 0; i < sleeps.size(); ++i)
        paused[i] = sleeps[i] > 0;
    return paused;
}

// Runs of one size each, as the workloads compared with are: `per_run` appends of one size to a
// new file, the first `settle` left out. Every repetition runs every size once, in a new random
// order, after one discarded round. Mixing sizes in one file measured the small ones slower than
// streams of one size see them: O_DIRECT|O_SYNC writes 4-28 % (the device still busy with the
// large writes); the fixed cost of a buffered write() came out 2.9-3.9 us mixed, 2.3-2.6 us from
// runs of one size.
inline std::vector<Sample> single_size_runs(const CalibrationSetup& setup, Method method,
                                            std::vector<std::uint64_t> sizes, std::mt19937_64& rng,
                                            std::size_t per_run = 12, std::size_t settle = 2) {
    std::vector<Sample> samples;
    const auto file = setup.dir / "iosig-calibrate.dat";
    for (int pass = 0; pass <= setup.repetitions; ++pass) {
        std::shuffle(sizes.begin(), sizes.end(), rng);
        for (std::uint64_t size : sizes) {
            if (method == Method::buffered || method == Method::stdio)
                wait_for_clean(background_threshold() / 4, 10);
            const RunTimings t =
                run_workload(file, method, appends(std::vector<std::uint64_t>(per_run, size)));
            if (!t.ok()) throw std::runtime_error(fmt::format("calibration run: {}", t.error));
            if (pass == 0) continue;
            for (std::size_t i = settle; i < per_run; ++i)
                samples.push_back({static_cast<double>(size), t.cost(i)});
        }
    }
    return samples;
}

// Runs `make(run)` once as a warm-up and `repetitions` more times; `sample_of(workload, i, cost)`
// turns each unpaused write into a sample (x, cost) or drops it (nullopt).
template <class Make, class SampleOf>
std::vector<Sample> sample_runs_as(const CalibrationSetup& setup, Method method, Make make,
                                   SampleOf sample_of, RunOptions options = {},
                                   const std::function<void(const RunTimings&)>& after = {}) {
    std::vector<Sample> samples;
    const auto file = setup.dir / "iosig-calibrate.dat";
    for (int run = 0; run <= setup.repetitions; ++run) {
        const std::vector<WriteRequest> workload = make(run);
        // Buffered runs start below the background threshold; direct and O_SYNC ones do not care.
        if (method == Method::buffered || method == Method::stdio)
            wait_for_clean(background_threshold() / 4, 10);
        if (setup.collector) setup.collector->clear_history();
        const RunTimings timings = run_workload(file, method, workload, options);
        if (!timings.ok())
            throw std::runtime_error(fmt::format("calibration run: {}", timings.error));
        if (run == 0) continue; // warm-up: first touches of memory and file system are slow here
        if (after) after(timings);
        const std::vector<bool> paused = paused_writes(setup, timings);
        for (std::size_t i = 0; i < workload.size(); ++i)
            if (!paused[i])
                if (const std::optional<Sample> s = sample_of(workload, i, timings.cost(i)))
                    samples.push_back(*s);
    }
    return samples;
}

// The same, the samples being (write size, cost) of the writes `keep` accepts.
template <class Make, class Keep>
std::vector<Sample> sample_runs(const CalibrationSetup& setup, Method method, Make make, Keep keep,
                                RunOptions options = {},
                                const std::function<void(const RunTimings&)>& after = {}) {
    return sample_runs_as(
        setup, method, make,
        [&keep](const std::vector<WriteRequest>& w, std::size_t i,
                double cost) -> std::optional<Sample> {
            if (!keep(w, i)) return std::nullopt;
            return Sample{static_cast<double>(w[i].size), cost};
        },
        options, after);
}

// Through the per-size medians, by relative residuals: the medians are what the evaluation compares
// against, and relative weights keep small sizes from being drowned by large ones. (Least absolute
// relative deviations over all samples lands in the fast minority of this VM's bimodal sync-write
// times and underestimates totals by a factor of several.)
inline LinearFit fit(const std::vector<Sample>& samples, bool relative = true, bool mean = false) {
    std::vector<double> x, y;
    for (const Sample& s : samples) {
        x.push_back(s.size);
        y.push_back(s.cost);
    }
    if (mean) return fit_line(x, y);
    return relative ? fit_line_relative(x, y) : fit_line_medians(x, y);
}

// The paper's method (Sect. 6.1): the fixed cost from a regression over small sizes, the bandwidth
// from one over large sizes, each through the per-size medians.
inline LinearFit two_range_fit(const std::vector<Sample>& samples, double small_limit) {
    std::vector<Sample> small, large;
    for (const Sample& s : samples)
        (s.size <= small_limit ? small : large).push_back(s);
    LinearFit line = fit(large.empty() ? samples : large);
    if (!small.empty() && !large.empty()) line.intercept = fit(small).intercept;
    line.samples = samples.size();
    return line;
}

inline std::vector<double> sizes_of(const std::vector<Sample>& samples) {
    std::vector<double> out;
    for (const Sample& s : samples)
        out.push_back(s.size);
    return out;
}

inline std::vector<double> costs_of(const std::vector<Sample>& samples) {
    std::vector<double> out;
    for (const Sample& s : samples)
        out.push_back(s.cost);
    return out;
}

} // namespace iosig::cachesim::validate::detail
