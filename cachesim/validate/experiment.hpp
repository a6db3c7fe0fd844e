// One scenario end to end: real runs with the kernel's trajectory recorded, the model and the
// baseline for the same workload, and the errors between them.
#pragma once

#include "iosig/cachesim/collector.hpp"
#include "iosig/cachesim/estimator.hpp"
#include "real_run.hpp"
#include "scenarios.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace iosig::cachesim::validate {

struct MeasuredRun {
    RunTimings timings;
    std::vector<DirtyPoint> trajectory; // kernel dirty + write-back bytes, time since t0
    std::size_t throttle_events = 0;    // balance_dirty_pages events of the writer
    std::size_t paused_events = 0;      // ... with pause > 0
    double paused_seconds = 0;
    double initial_dirty = 0; // the kernel's dirty + write-back bytes at the start
    double total = 0;         // seconds in writes: the sum of the run's write costs
};

struct ScenarioResult {
    Scenario scenario;
    std::vector<MeasuredRun> runs; // after the discarded warm-up run
    std::vector<double> measured;  // per write: median over the runs
    Prediction model;
    std::vector<std::string> model_notes; // which kernel corrections the parameters got
    double model_mre = 0;      // mean over writes of |model - measured| / measured, the model's
                               // typical-run cost (PredictedWrite::typical) against the medians
    double model_mean_mre = 0; // the same with the model's mean cost (PredictedWrite::cost)
    double baseline_mre = 0;
    double model_total_error = 0; // |sum model - measured total| / measured total (mean costs)
    double baseline_total_error = 0;
    double trajectory_error = -1; // median over runs of mean|model - kernel| / mean kernel; -1: n/a
    double measured_total = 0;    // median over the runs of each run's sum of write costs (the
                                  // sum of per-write medians would leave out scattered pauses)
    std::string error;            // set when the scenario could not be run
};

struct ExperimentSetup {
    std::filesystem::path dir; // where the test file is written
    int runs = 3;              // measured runs, after one warm-up run
    DirtyCollector* collector = nullptr;
    const Node* node = nullptr;
    const Mount* mount = nullptr;
    std::function<void(const std::string&)> log;
};

ScenarioResult run_scenario(const ExperimentSetup& setup, const Scenario& scenario);

// Mean relative error of `predicted` against `measured` (entries with measured <= 0 are skipped).
double mean_relative_error(const std::vector<double>& predicted,
                           const std::vector<double>& measured);

// mean |model(t) - kernel(t)| / mean kernel(t) over the kernel's samples in [from, to], with the
// model's piecewise-linear trajectory evaluated at the sample times.
double trajectory_error(const std::vector<DirtyPoint>& model, const std::vector<DirtyPoint>& kernel,
                        double from, double to);

// The model's dirty bytes at time t (linear between its points, constant outside).
double dirty_at(const std::vector<DirtyPoint>& trajectory, double t);

} // namespace iosig::cachesim::validate
