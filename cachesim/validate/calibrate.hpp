// Measuring the CAWL parameters on a mount (paper 001, Sect. 6.1), by regression over many sizes and
// repetitions, each sample a real write timed in a child process (real_run.hpp). Until the calibrator
// component takes this over, the harness writes the results as node YAML through the core schema.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <span>
#include <vector>
#include <string>

#include "iosig/cachesim/collector.hpp"
#include "iosig/cachesim/parameters.hpp"
#include "regression.hpp"

namespace iosig::cachesim::validate {

struct CalibrationSetup {
    std::filesystem::path dir;         // test files go here (on the mount being calibrated)
    int repetitions = 7;               // samples per size (after one discarded warm-up run)
    DirtyCollector* collector = nullptr;  // to leave out writes the kernel paused
    std::function<void(const std::string&)> log;
};

struct Calibration {
    MeasuredParameters measured;
    double stdio_call_base = 0;        // s per fwrite (no schema key yet; reported)
    std::map<std::string, LinearFit> fits;  // by name, for the report
    std::vector<std::string> notes;
};

Calibration calibrate(const CalibrationSetup& setup);

// Synchronous-write staircases (this VM completes them on 4 ms ticks).
struct SizeMedian {
    double size, median, count;
};
std::vector<SizeMedian> per_size_medians(std::span<const double> sizes, std::span<const double> costs);
// The tick (1-20 ms) that at least 60 % of the medians sit on a multiple of (within 1.5 %), or 0.
double detect_quantum(const std::vector<SizeMedian>& medians);
// (fixed cost, per-byte cost) whose quantized `cost(fixed, per_byte, size)` is closest to the medians.
std::pair<double, double> fit_quantized(const std::vector<SizeMedian>& medians, double quantum,
                                        double per_byte_guess,
                                        const std::function<double(double, double, double)>& cost);

// The pieces, each usable alone (tests, re-measuring one parameter).
LinearFit measure_buffered_no_flush(const CalibrationSetup& setup);
// Also returns the flusher's write-back rate measured from the kernel's samples in `writeback_bw`.
LinearFit measure_buffered_flushing(const CalibrationSetup& setup, double write_syscall_base,
                                    double* writeback_bw = nullptr);
// Eq. 2's L_sync (intercept) and 1/B_dev (slope); `quantum` receives the completion tick if the
// medians form a staircase (then the line is fitted through the staircase).
LinearFit measure_direct(const CalibrationSetup& setup, double* quantum = nullptr);
LinearFit measure_sync(const CalibrationSetup& setup, const ModelParameters& with_device);
LinearFit measure_stdio_copy(const CalibrationSetup& setup);
double measure_seek(const CalibrationSetup& setup);
LinearFit measure_direct_read(const CalibrationSetup& setup);
std::uint64_t measure_stdio_buffer(const std::filesystem::path& dir);

} // namespace iosig::cachesim::validate
