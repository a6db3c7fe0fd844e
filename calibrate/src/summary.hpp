// `--json`: a machine-readable summary of a calibration (schema in docs/calibrate.md, "JSON").
#pragma once

#include "calibration.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace iosig::calibrate {

nlohmann::json summarize(const Calibration& calibration, const std::string& yaml,
                         const std::vector<std::string>& plots,
                         const std::vector<std::string>& warnings);

} // namespace iosig::calibrate
