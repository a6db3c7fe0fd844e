// Measuring the CAWL parameters on a mount (paper 001, Sect. 6.1), by regression over many sizes
// and repetitions, each sample a real write timed in a child process (real_run.hpp). Until the
// calibrator component takes this over, the harness writes the results as node YAML through the
// core schema.
#pragma once

#include "iosig/cachesim/collector.hpp"
#include "iosig/cachesim/parameters.hpp"
#include "real_run.hpp"
#include "regression.hpp"
#include "staircase.hpp"

#include <filesystem>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace iosig::cachesim::validate {

struct CalibrationSetup {
    std::filesystem::path dir;           // test files go here (on the mount being calibrated)
    int repetitions = 7;                 // samples per size (after one discarded warm-up run)
    DirtyCollector* collector = nullptr; // to leave out writes the kernel paused
    std::function<void(const std::string&)> log;
    // Fit Eq. 2/3 as a staircase when synchronous writes complete on timer ticks. Off by default:
    // on this VM the ticks come and go with the machine's load (docs/cachesim.md).
    bool use_completion_ticks = false;
};

struct Calibration {
    MeasuredParameters measured;
    double stdio_call_base = 0;            // s per fwrite (no schema key yet; reported)
    std::map<std::string, LinearFit> fits; // by name, for the report
    std::vector<std::string> notes;
};

Calibration calibrate(const CalibrationSetup& setup);

// The pieces, each usable alone (tests, re-measuring one parameter).
LinearFit measure_buffered_no_flush(const CalibrationSetup& setup);
// A cost that grows with the time since the same data or code was last used (the CPU caches
// cool): cost(age) = cold - (cold - hot) * exp(-age / cooling_time).
struct CoolingFit {
    double hot = 0;          // at age 0
    double cold = 0;         // long after (0: not fitted)
    double cooling_time = 0; // s, e-folding time of the difference (0: not fitted)
};
// From (age, cost) points: the oldest gives the cold cost; hot and the cooling time are fitted to
// the others (relative least squares). Without a decay (the fitted difference within 2 % of the
// cold cost, or a hot cost that is not positive) only `hot` is set, from the youngest point.
CoolingFit fit_cooling(std::vector<std::pair<double, double>> points);
// calibrate_cooling.cpp: seconds per byte of rewriting a whole 4 MiB region of dirty pages, and
// seconds of a 4 KiB append, each after 0-30 ms of computation.
CoolingFit measure_rewrite_cooling(const CalibrationSetup& setup, double write_syscall_base);
CoolingFit measure_call_cooling(const CalibrationSetup& setup);
// Also returns, from the kernel's samples, the flusher's write-back rate in `writeback_bw`, the
// time from the background threshold being crossed to the first write-back in `start_latency`,
// and in `throttle_sleep` the wall-clock length of one balance_dirty_pages sleep: the median over
// the writes the kernel paused of (cost - the run's median unpaused cost of that size) / sleeps
// (the streams are long enough to pass freerun).
LinearFit measure_buffered_flushing(const CalibrationSetup& setup, double write_syscall_base,
                                    double* writeback_bw = nullptr, double* start_latency = nullptr,
                                    double* throttle_sleep = nullptr);
// Appends to `lengths` the length of each sleep in the run's paused writes (`sleeps[i]` > 0): the
// write's extra cost over the run's median unpaused write of the same size (at least 3 of them),
// divided by its sleeps.
void collect_sleep_lengths(const std::vector<int>& sleeps,
                           const std::vector<WriteRequest>& workload, const RunTimings& run,
                           std::vector<double>& lengths);
// Eq. 2's L_sync (intercept) and 1/B_dev (slope); `quantum` receives the completion tick if the
// medians form a staircase (then the line is fitted through the staircase), `curve` the per-size
// medians (4 KiB .. 16 MiB, doubling).
LinearFit measure_direct(const CalibrationSetup& setup, double* quantum = nullptr,
                         CostCurve* curve = nullptr);
// Eq. 3's L_sync and c_copy given the device part; `curve` receives the per-size medians of whole-
// block O_SYNC appends (4 KiB .. 4 MiB, doubling).
LinearFit measure_sync(const CalibrationSetup& setup, const ModelParameters& with_device,
                       CostCurve* curve = nullptr);
LinearFit measure_stdio_copy(const CalibrationSetup& setup);
double measure_seek(const CalibrationSetup& setup);
LinearFit measure_direct_read(const CalibrationSetup& setup);
std::uint64_t measure_stdio_buffer(const std::filesystem::path& dir);

} // namespace iosig::cachesim::validate
