// iosig-tierbench's model of a run and its text report (docs/tier.md, "iosig-tierbench").
#pragma once

#include "iosig/tier/engine.hpp"
#include "tierbench_workload.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace iosig::tier::bench {

// The model's view of a run: misses from the simulator on the same requests (with the sequential
// bypass read through the home device's readahead), rates from the node YAML, the time from
// predict_tier_time (tier_prediction.hpp); nullopt after printing the node YAML's errors. Without
// a node file, the simulator's counts alone.
std::optional<nlohmann::json> model_json(const Workload& workload, const TierConfig& config,
                                         const std::filesystem::path& home,
                                         const std::string& node_file);

// The text report's lines after its heading: the measured times, the model's, and what the model
// left out.
void print_report(const nlohmann::json& out);

} // namespace iosig::tier::bench
