#include "experiment.hpp"

#include "regression.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace iosig::cachesim::validate {

double mean_relative_error(const std::vector<double>& predicted,
                           const std::vector<double>& measured) {
    double sum = 0;
    std::size_t n = 0;
    for (std::size_t i = 0; i < std::min(predicted.size(), measured.size()); ++i) {
        if (measured[i] <= 0) continue;
        sum += std::fabs(predicted[i] - measured[i]) / measured[i];
        ++n;
    }
    return n ? sum / static_cast<double>(n) : 0.0;
}

double dirty_at(const std::vector<DirtyPoint>& trajectory, double t) {
    if (trajectory.empty()) return 0;
    if (t <= trajectory.front().time) return trajectory.front().dirty;
    if (t >= trajectory.back().time) return trajectory.back().dirty;
    auto it = std::upper_bound(trajectory.begin(), trajectory.end(), t,
                               [](double time, const DirtyPoint& p) { return time < p.time; });
    const DirtyPoint& b = *it;
    const DirtyPoint& a = *std::prev(it);
    if (b.time <= a.time) return b.dirty;
    return a.dirty + (b.dirty - a.dirty) * (t - a.time) / (b.time - a.time);
}

double trajectory_error(const std::vector<DirtyPoint>& model, const std::vector<DirtyPoint>& kernel,
                        double from, double to) {
    double difference = 0, level = 0;
    std::size_t n = 0;
    for (const DirtyPoint& k : kernel) {
        if (k.time < from || k.time > to) continue;
        difference += std::fabs(dirty_at(model, k.time) - k.dirty);
        level += k.dirty;
        ++n;
    }
    if (n == 0 || level <= 0) return -1;
    return difference / level;
}

namespace {

void say(const ExperimentSetup& setup, const std::string& text) {
    if (setup.log) setup.log(text);
}

// Cached runs start well below the background threshold. Other users' dirty data under it is only
// written when it expires (30 s), so waiting for zero could take that long: the model starts from
// whatever is there.
double settle_level() {
    const auto state = read_procfs_state();
    const double bg = state && state->global ? state->global->background_thresh : 0;
    return std::max(1.0 * 1024 * 1024, bg / 4);
}

MeasuredRun measure_once(const ExperimentSetup& setup, const Scenario& s) {
    MeasuredRun run;
    if (s.method == Method::buffered || s.method == Method::stdio)
        wait_for_clean(settle_level(), 10);
    setup.collector->trigger();
    setup.collector->poll(20);
    run.initial_dirty = setup.collector->snapshot().dirty_and_writeback();
    setup.collector->clear_history();
    run.timings = run_workload(setup.dir / "iosig-cawl-validate.dat", s.method, s.workload);
    if (!run.timings.ok()) return run;
    for (std::size_t w = 0; w < run.timings.start.size(); ++w)
        run.total += run.timings.cost(w);
    setup.collector->trigger();
    setup.collector->poll(20);
    const double t0 = run.timings.t0;
    const double end = run.timings.end.empty() ? 0 : run.timings.end.back();
    for (const GlobalDirtySample& g : setup.collector->global_history()) {
        const double t = g.time - t0;
        if (t >= -0.01 && t <= end + 0.05) run.trajectory.push_back({t, g.dirty + g.writeback});
    }
    std::sort(run.trajectory.begin(), run.trajectory.end(),
              [](const DirtyPoint& a, const DirtyPoint& b) { return a.time < b.time; });
    for (const ThrottleSample& t : setup.collector->throttle_history()) {
        if (t.tgid != run.timings.pid) continue;
        ++run.throttle_events;
        if (t.pause > 0) {
            ++run.paused_events;
            run.paused_seconds += t.pause;
        }
    }
    return run;
}

} // namespace

ScenarioResult run_scenario(const ExperimentSetup& setup, const Scenario& s) {
    ScenarioResult r;
    r.scenario = s;
    std::optional<KernelDirtyState> live;
    for (int i = 0; i <= setup.runs; ++i) {
        MeasuredRun run = measure_once(setup, s);
        if (!run.timings.ok()) {
            r.error = run.timings.error;
            return r;
        }
        if (i == 0) { // warm-up: discarded; the kernel state after it seeds the model
            live = setup.collector->snapshot();
            continue;
        }
        say(setup,
            fmt::format("    run {}: {:.3f} s in writes, {} throttle events ({} paused, {:.3f} s)",
                        i, run.total, run.throttle_events, run.paused_events, run.paused_seconds));
        r.runs.push_back(std::move(run));
    }
    const std::size_t n = s.workload.size();
    r.measured.resize(n);
    for (std::size_t w = 0; w < n; ++w) {
        std::vector<double> costs;
        for (const MeasuredRun& run : r.runs)
            costs.push_back(run.timings.cost(w));
        r.measured[w] = median(costs);
    }
    std::vector<double> totals;
    for (const MeasuredRun& run : r.runs)
        totals.push_back(run.total);
    r.measured_total = median(totals);

    const ResolvedParameters resolved =
        resolve_parameters(*setup.node, *setup.mount, s.method, &*live);
    if (!resolved.ok()) {
        r.error = "node lacks parameters: ";
        for (const std::string& m : resolved.missing)
            r.error += m + " ";
        return r;
    }
    r.model_notes = resolved.notes;
    EstimatorOptions options;
    options.record_trajectory = true;
    std::vector<double> initial;
    for (const MeasuredRun& run : r.runs)
        initial.push_back(run.initial_dirty);
    options.initial.foreign_dirty = median(initial);
    r.model = predict(*resolved.parameters, s.method, s.workload, options);

    std::vector<double> model(n), model_mean(n), baseline(n);
    for (std::size_t w = 0; w < n; ++w) {
        model[w] = r.model.writes[w].typical;
        model_mean[w] = r.model.writes[w].cost;
        baseline[w] = r.model.writes[w].baseline;
    }
    r.model_mre = mean_relative_error(model, r.measured);
    r.model_mean_mre = mean_relative_error(model_mean, r.measured);
    r.baseline_mre = mean_relative_error(baseline, r.measured);
    if (r.measured_total > 0) {
        r.model_total_error = std::fabs(r.model.total_cost - r.measured_total) / r.measured_total;
        r.baseline_total_error =
            std::fabs(r.model.total_baseline - r.measured_total) / r.measured_total;
    }
    if (s.method == Method::buffered || s.method == Method::stdio) {
        std::vector<double> errors;
        for (const MeasuredRun& run : r.runs) {
            const double e =
                trajectory_error(r.model.trajectory, run.trajectory, 0, run.timings.end.back());
            if (e >= 0) errors.push_back(e);
        }
        if (!errors.empty()) r.trajectory_error = median(errors);
    }
    return r;
}

} // namespace iosig::cachesim::validate
