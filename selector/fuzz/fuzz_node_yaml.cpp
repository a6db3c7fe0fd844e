// libFuzzer target for the node YAML loader and writer. Beyond "no crash, no hang, no sanitizer
// report" it checks the loader's promises on every input:
//   - a node is returned exactly when there is no error diagnostic; every diagnostic says something
//     and names the file, with a 1-based position when it has one;
//   - an accepted node round-trips: to_yaml(node) loads without errors, and without warnings the
//     original did not have (unknown keys and tags are dropped; "no mounts" stays), to an equal
//     model, and writing that again gives the same text.
// The input is also loaded as two layers (split at the first "\n---layer\n" — or, without one, the
// input over itself) through real files, to fuzz the merging.
#include "iosig/node_yaml.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <unistd.h>

namespace {

[[noreturn]] void fail(const char* what, std::string_view input, std::string_view detail = {}) {
    std::fprintf(stderr, "invariant violated: %s\ninput:\n%.*s\n--\n%.*s\n", what,
                 static_cast<int>(input.size()), input.data(), static_cast<int>(detail.size()),
                 detail.data());
    std::abort();
}

iosig::Node without_locations(iosig::Node node) {
    for (auto& d : node.devices)
        d.where = {};
    for (auto& m : node.mounts)
        m.where = {};
    return node;
}

std::string all(const iosig::NodeLoadResult& result) {
    std::string text;
    for (const auto& d : result.diagnostics)
        text += d.format() + "\n";
    return text;
}

void check_result(const iosig::NodeLoadResult& result, std::string_view input) {
    bool has_error = false;
    for (const auto& d : result.diagnostics) {
        if (d.message.empty()) fail("diagnostic without a message", input);
        if (d.where.line < 0 || d.where.column < 0 || (d.where.line > 0 && d.where.column < 1))
            fail("diagnostic with an impossible position", input, d.format());
        has_error |= d.severity == iosig::ConfigDiagnostic::Severity::error;
    }
    if (result.ok() == has_error) fail("node iff no error", input, all(result));
}

void check_round_trip(const iosig::NodeLoadResult& original, std::string_view input) {
    const iosig::Node& node = *original.node;
    const std::string written = iosig::to_yaml(node);
    const auto again = iosig::load_node_text(written, "written.yaml");
    if (!again.ok()) fail("to_yaml output does not load", input, written + "\n" + all(again));
    for (const auto& warning : again.diagnostics) {
        bool known = false;
        for (const auto& before : original.diagnostics)
            known |= before.message == warning.message;
        if (!known) fail("to_yaml output has a new warning", input, written + "\n" + all(again));
    }
    if (without_locations(*again.node) != without_locations(node))
        fail("to_yaml output loads to a different model", input, written);
    if (iosig::to_yaml(*again.node) != written) fail("to_yaml is not stable", input, written);
}

const std::filesystem::path& scratch() {
    static const std::filesystem::path dir = [] {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "fuzz-node-yaml-XXXXXX").string();
        if (!::mkdtemp(pattern.data())) std::abort();
        return std::filesystem::path(pattern);
    }();
    return dir;
}

void check_layers(std::string_view input) {
    static constexpr std::string_view separator = "\n---layer\n";
    const std::size_t split = input.find(separator);
    const std::string_view first = split == std::string_view::npos ? input : input.substr(0, split);
    const std::string_view second =
        split == std::string_view::npos ? input : input.substr(split + separator.size());
    const auto a = scratch() / "a.yaml", b = scratch() / "b.yaml";
    std::ofstream(a, std::ios::binary | std::ios::trunc) << first;
    std::ofstream(b, std::ios::binary | std::ios::trunc) << second;
    const auto result = iosig::load_node_files({a, b});
    check_result(result, input);
    if (result.ok()) check_round_trip(result, input);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const auto result = iosig::load_node_text(input, "fuzz.yaml");
    check_result(result, input);
    if (result.ok()) check_round_trip(result, input);
    check_layers(input);
    return 0;
}
