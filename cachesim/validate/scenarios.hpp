// The validation scenarios, analogues of CAWL's Fig. 4-9 sized for a shared 2-core VM.
#pragma once

#include "iosig/cachesim/parameters.hpp"
#include "iosig/cachesim/workload.hpp"

#include <string>
#include <vector>

namespace iosig::cachesim::validate {

struct Scenario {
    std::string name; // file-system safe, e.g. "direct-64K"
    std::string
        group; // scenarios reported together: "direct", "sync", "buffered", "rewrite", "stdio"
    std::string title; // for plots and the report
    Method method = Method::buffered;
    std::vector<WriteRequest> workload;
    double chunk = 0; // bytes, for the sweep plots (0: not part of a sweep)
};

// All scenarios of the paper's evaluation; `scale` multiplies the data volumes (1 = a few hundred
// MiB per buffered scenario).
std::vector<Scenario> paper_scenarios(double scale = 1.0);

// Those whose name or group is listed (comma-separated; "all" selects everything, "none" nothing:
// only --workload, or only the calibration). Throws std::invalid_argument naming a listed item that
// is neither a scenario nor a group.
std::vector<Scenario> select_scenarios(const std::vector<Scenario>& all, const std::string& list);

} // namespace iosig::cachesim::validate
