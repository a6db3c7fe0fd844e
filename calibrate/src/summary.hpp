// `--json`: a machine-readable summary of a calibration (schema in docs/calibrate.md, "JSON").
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibration.hpp"

namespace iosig::calibrate {

nlohmann::json summarize(const Calibration& calibration, const std::string& yaml, const std::vector<std::string>& plots,
                         const std::vector<std::string>& warnings);

} // namespace iosig::calibrate
