// Helpers for the node YAML specifications (node*_test.cpp).
#pragma once

#include "iosig/node_yaml.hpp"

#include <filesystem>
#include <fstream>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

namespace iosig::testing_support {

// Raw string literals in the tests start with a newline so that line 1 of the YAML is the line
// after R"( — the line numbers the tests assert then match what one sees.
inline std::string yaml(std::string_view text) {
    if (!text.empty() && text.front() == '\n') text.remove_prefix(1);
    return std::string(text);
}

inline std::vector<std::string> formatted(const NodeLoadResult& result) {
    std::vector<std::string> lines;
    for (const ConfigDiagnostic& d : result.diagnostics)
        lines.push_back(d.format());
    return lines;
}

inline std::vector<std::string> errors(const NodeLoadResult& result) {
    std::vector<std::string> lines;
    for (const ConfigDiagnostic& d : result.diagnostics)
        if (d.severity == ConfigDiagnostic::Severity::error) lines.push_back(d.format());
    return lines;
}

inline std::vector<std::string> warnings(const NodeLoadResult& result) {
    std::vector<std::string> lines;
    for (const ConfigDiagnostic& d : result.diagnostics)
        if (d.severity == ConfigDiagnostic::Severity::warning) lines.push_back(d.format());
    return lines;
}

inline std::string all_diagnostics(const NodeLoadResult& result) {
    std::string text;
    for (const std::string& line : formatted(result))
        text += line + "\n";
    return text;
}

// Loads `text` as "node.yaml"; fails the test if it does not load.
inline Node load_ok(std::string_view text) {
    NodeLoadResult result = load_node_text(yaml(text), "node.yaml");
    EXPECT_TRUE(result.ok()) << all_diagnostics(result);
    return result.node.value_or(Node{});
}

// The only error of loading `text` as "node.yaml" (fails the test unless there is exactly one).
inline std::string only_error(std::string_view text) {
    NodeLoadResult result = load_node_text(yaml(text), "node.yaml");
    EXPECT_FALSE(result.ok());
    const std::vector<std::string> list = errors(result);
    EXPECT_EQ(list.size(), 1u) << all_diagnostics(result);
    return list.empty() ? std::string() : list.front();
}

// A node with one simple ssd and one mount on it: the smallest valid file, to which tests add.
inline constexpr std::string_view minimal_node = R"(
devices:
  ssd0:
    media: ssd
    capacity: 100G
    performance: {seq_read_bw: 500M/s, seq_write_bw: 400M/s}
mounts:
  - path: /mnt/ssd
    device: ssd0
)";

// A scratch directory removed at the end of the test.
class TempDir {
public:
    TempDir() {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "iosig-node-yaml-XXXXXX").string();
        path_ = ::mkdtemp(pattern.data()) ? pattern : std::string();
    }
    ~TempDir() {
        std::error_code ec;
        if (!path_.empty()) std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    std::filesystem::path write(const std::string& name, std::string_view text) const {
        const std::filesystem::path file = path_ / name;
        std::ofstream(file, std::ios::binary) << yaml(text);
        return file;
    }
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

// Clears every SourceLocation so that models read from different files compare equal.
inline Node without_locations(Node node) {
    for (Device& d : node.devices)
        d.where = {};
    for (Mount& m : node.mounts)
        m.where = {};
    return node;
}

} // namespace iosig::testing_support
