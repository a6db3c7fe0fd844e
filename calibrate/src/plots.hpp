// `--plots DIR`: per measured file system, a PNG of measured throughput vs chunk size with the
// fitted Eq. 3 curve (the IOSIG paper's Fig. 6) and a PNG histogram of QD1 latencies, drawn by
// gnuplot.
#pragma once

#include "calibration.hpp"

#include <string>
#include <vector>

namespace iosig::calibrate {

struct PlotResult {
    std::vector<std::string> files;  // PNGs written
    std::vector<std::string> errors; // e.g. gnuplot missing
};

PlotResult write_plots(const Calibration& calibration, const std::string& directory,
                       const std::string& gnuplot = "gnuplot");

} // namespace iosig::calibrate
