// The node YAML (docs/config.md schema) from a calibration, every value tagged with its provenance
// (!measured, !derived, !detected, !default, !user), site overrides merged in, and checked by the
// core's own loader before anything is written.
#pragma once

#include "calibration.hpp"

#include <map>
#include <stdexcept>
#include <string>
#include <vector>
#include <yaml-cpp/yaml.h>

namespace iosig::calibrate {

struct NodeDocument {
    YAML::Node root;
    std::map<std::string, std::string>
        comments; // YAML path ("devices.vda.performance.seq_write_bw") -> comment
    std::vector<std::string> header; // comment lines at the top
};

NodeDocument build_node_document(const Calibration& calibration);

// Bad overrides file: message is "file:line:col: problem".
struct OverridesError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Merges a node-YAML fragment (same schema) into the document: node/system key by key, devices by
// name (recursively), mounts by path. Untagged scalars become !user. Returns warnings (entries that
// match nothing calibrated).
std::vector<std::string> apply_overrides(NodeDocument& document, const std::string& overrides_file);

std::string emit_yaml(const NodeDocument& document);

} // namespace iosig::calibrate
