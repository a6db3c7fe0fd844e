// Loading (and writing) the node model as YAML. Schema: docs/config.md.
//
// Several files are layered in order: a later file adds devices/mounts and overrides individual
// keys of earlier ones (a calibrated node file, then site overrides with MTTF, BER, labels,
// `global`, ...). Values may carry a provenance tag (!measured, !derived, !detected, !default,
// !user).
#pragma once

#include "iosig/node.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iosig {

struct ConfigDiagnostic {
    enum class Severity : std::uint8_t { error, warning } severity = Severity::error;
    SourceLocation where;
    std::string message;

    // "file:line:col: error: message"
    std::string format() const;
};

struct NodeLoadResult {
    std::optional<Node> node;                  // set iff there is no error
    std::vector<ConfigDiagnostic> diagnostics; // errors and warnings (unknown keys, ...)
    bool ok() const { return node.has_value(); }
};

// Loads and layers the files in order, then validates the whole (references, ranges, structure).
NodeLoadResult load_node_files(const std::vector<std::filesystem::path>& files);

// The same from in-memory text; `name` is used as the file name in diagnostics.
NodeLoadResult load_node_text(std::string_view yaml_text, std::string_view name = "<string>");

// YAML text that load_node_text accepts unchanged and that loads back to an equal model, with
// provenance tags where node.provenance has them.
std::string to_yaml(const Node& node);

} // namespace iosig
