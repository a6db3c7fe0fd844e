// --overrides: a node-YAML fragment merged into the calibrated document (see node_writer.hpp).
#include "node_writer.hpp"

#include <filesystem>
#include <fmt/format.h>

namespace iosig::calibrate {
namespace {

std::string where(const std::string& file, const YAML::Node& n) {
    const YAML::Mark mark = n.Mark();
    return fmt::format("{}:{}:{}", file, mark.line + 1, mark.column + 1);
}

void tag_as_user(YAML::Node n) {
    if (n.IsScalar() && (n.Tag().empty() || n.Tag() == "?" || n.Tag() == "!")) n.SetTag("!user");
    if (n.IsMap())
        for (auto kv : n)
            tag_as_user(kv.second);
}

// Overrides' scalars are site facts: !user unless the file tags them itself (in nested maps too;
// sequences such as labels are taken as they are).
YAML::Node as_user(const YAML::Node& n) {
    YAML::Node copy = YAML::Clone(n);
    tag_as_user(copy);
    return copy;
}

void merge_map(YAML::Node target, const YAML::Node& source) {
    for (const auto& kv : source) {
        const std::string key = kv.first.as<std::string>();
        if (kv.second.IsMap() && target[key] && target[key].IsMap())
            merge_map(target[key], kv.second);
        else
            target[key] = as_user(kv.second);
    }
}

std::string canonical(const std::string& p) {
    std::error_code ec;
    const auto c = std::filesystem::weakly_canonical(p, ec);
    return ec ? p : c.string();
}

} // namespace

std::vector<std::string> apply_overrides(NodeDocument& doc, const std::string& file) {
    YAML::Node src;
    try {
        src = YAML::LoadFile(file);
    } catch (const YAML::BadFile&) {
        throw OverridesError(file + ": cannot read the overrides file");
    } catch (const YAML::Exception& e) {
        throw OverridesError(
            fmt::format("{}:{}:{}: {}", file, e.mark.line + 1, e.mark.column + 1, e.msg));
    }
    std::vector<std::string> warnings;
    if (!src || src.IsNull()) return warnings;
    if (!src.IsMap())
        throw OverridesError(where(file, src) + ": expected a map with node/system/devices/mounts");
    for (const auto& kv : src) {
        const std::string key = kv.first.as<std::string>();
        const YAML::Node& value = kv.second;
        if (key == "node" || key == "system") {
            if (!value.IsMap())
                throw OverridesError(where(file, value) + ": '" + key + "' must be a map");
            if (!doc.root[key]) doc.root[key] = YAML::Node(YAML::NodeType::Map);
            merge_map(doc.root[key], value);
        } else if (key == "devices") {
            if (!value.IsMap())
                throw OverridesError(where(file, value) +
                                     ": 'devices' must be a map of device names");
            for (const auto& dev : value) {
                const std::string name = dev.first.as<std::string>();
                if (!dev.second.IsMap())
                    throw OverridesError(where(file, dev.second) + ": device '" + name +
                                         "' must be a map");
                if (!doc.root["devices"][name]) {
                    warnings.push_back(fmt::format("{}: device '{}' was not discovered; ignored",
                                                   where(file, dev.first), name));
                    continue;
                }
                merge_map(doc.root["devices"][name], dev.second);
            }
        } else if (key == "mounts") {
            if (!value.IsSequence())
                throw OverridesError(where(file, value) +
                                     ": 'mounts' must be a list of maps with 'path'");
            for (const auto& m : value) {
                if (!m.IsMap() || !m["path"])
                    throw OverridesError(where(file, m) + ": a mount override needs 'path'");
                const std::string path = canonical(m["path"].as<std::string>());
                bool found = false;
                for (YAML::Node target : doc.root["mounts"]) {
                    if (canonical(target["path"].as<std::string>()) != path) continue;
                    YAML::Node rest = YAML::Clone(m);
                    rest.remove("path");
                    merge_map(target, rest);
                    found = true;
                }
                if (!found)
                    warnings.push_back(fmt::format("{}: mount '{}' was not calibrated; ignored",
                                                   where(file, m), path));
            }
        } else {
            throw OverridesError(
                fmt::format("{}: unknown section '{}' (expected node, system, devices or mounts)",
                            where(file, kv.first), key));
        }
    }
    return warnings;
}

} // namespace iosig::calibrate
