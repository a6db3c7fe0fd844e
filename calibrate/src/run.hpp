// One calibration run: discover, measure the node-wide parameters, then each distinct file system
// within its share of the time budget.
#pragma once

#include "calibration.hpp"
#include "progress.hpp"

#include <string>
#include <vector>

namespace iosig::calibrate {

struct RunOptions {
    bool quick = true;
    double time_budget = 0; // seconds for the whole run; 0: the mode's default
    DiscoveryOptions discovery;
};

inline constexpr double quick_default_budget = 50; // leaves margin inside the 60 s promise
inline constexpr double full_default_budget = 600;

Calibration run_calibration(const RunOptions& options, Progress& progress);

} // namespace iosig::calibrate
