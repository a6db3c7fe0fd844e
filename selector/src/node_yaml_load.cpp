// load_node_files / load_node_text: read, parse, layer, read, validate, infer — and never throw.
#include "iosig/node_yaml.hpp"
#include "node_yaml_internal.hpp"

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <system_error>

namespace iosig {
namespace {

using namespace node_yaml_detail;

// A node file is a few KiB; this only stops `--config /dev/zero`.
constexpr std::uintmax_t max_file_bytes = 16u << 20;

struct Layer {
    std::string name;
    std::string text;
};

bool read_file(const std::filesystem::path& path, std::string& text, Diagnostics& diagnostics) {
    const SourceLocation where{path.string(), 0, 0};
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status)) {
        diagnostics.error(where, "cannot read node file: no such file");
        return false;
    }
    if (std::filesystem::is_directory(status)) {
        diagnostics.error(where, "cannot read node file: it is a directory");
        return false;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        diagnostics.error(where, fmt::format("cannot read node file: {}", std::strerror(errno)));
        return false;
    }
    std::string content;
    char buffer[65536];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
        content.append(buffer, static_cast<std::size_t>(in.gcount()));
        if (content.size() > max_file_bytes) {
            diagnostics.error(where, fmt::format("node file is larger than {} MiB; is it the right "
                                                 "file?",
                                                 max_file_bytes >> 20));
            return false;
        }
    }
    if (in.bad()) {
        diagnostics.error(where, fmt::format("cannot read node file: {}", std::strerror(errno)));
        return false;
    }
    text = std::move(content);
    return true;
}

void load_layers(const std::vector<Layer>& layers, Diagnostics& diagnostics,
                 NodeLoadResult& result) {
    Tree merged;
    for (const Layer& layer_text : layers) {
        Tree tree;
        if (!parse_tree(layer_text.text, layer_text.name, tree, diagnostics)) continue;
        if (tree.kind != Tree::Kind::map && tree.kind != Tree::Kind::null) {
            diagnostics.error(tree.where,
                              "a node file is a map with the keys node, system, devices "
                              "and mounts");
            continue;
        }
        check_duplicate_mounts(tree, diagnostics);
        layer(merged, std::move(tree));
    }
    if (diagnostics.has_errors()) return;

    Locations locations;
    Node node = read_node(merged, locations, diagnostics);
    if (diagnostics.has_errors()) return;
    if (!validate_structure(node, locations, diagnostics) || diagnostics.has_errors()) return;
    infer_missing_values(node, locations);
    validate_completed(node, locations, diagnostics);
    if (diagnostics.has_errors()) return;
    if (node.mounts.empty())
        diagnostics.warning({layers.back().name, 0, 0},
                            "the node defines no mounts, so no IO can be placed");
    result.node = std::move(node);
}

NodeLoadResult load_guarded(const std::vector<std::filesystem::path>* files,
                            const std::vector<Layer>* texts) {
    NodeLoadResult result;
    Diagnostics diagnostics;
    try {
        std::vector<Layer> layers;
        if (files) {
            for (const auto& path : *files) {
                Layer layer_text{path.string(), {}};
                if (read_file(path, layer_text.text, diagnostics))
                    layers.push_back(std::move(layer_text));
            }
            if (files->empty()) diagnostics.error({}, "no node file given");
        } else {
            layers = *texts;
        }
        if (!diagnostics.has_errors()) load_layers(layers, diagnostics, result);
    } catch (const std::exception& e) {
        diagnostics.error({},
                          fmt::format("internal error while loading the node files: {}", e.what()));
    } catch (...) {
        diagnostics.error({}, "internal error while loading the node files");
    }
    if (diagnostics.has_errors()) result.node.reset();
    result.diagnostics = diagnostics.take();
    return result;
}

} // namespace

NodeLoadResult load_node_files(const std::vector<std::filesystem::path>& files) {
    return load_guarded(&files, nullptr);
}

NodeLoadResult load_node_text(std::string_view yaml_text, std::string_view name) {
    try {
        const std::vector<Layer> layers{{std::string(name), std::string(yaml_text)}};
        return load_guarded(nullptr, &layers);
    } catch (...) { // allocating the copy failed
        NodeLoadResult result;
        result.diagnostics.push_back({ConfigDiagnostic::Severity::error,
                                      {std::string(), 0, 0},
                                      "out of memory while loading the node text"});
        return result;
    }
}

} // namespace iosig
