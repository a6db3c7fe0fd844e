// The node document as YAML text: provenance tags as local tags (`!measured 123`, not the verbatim
// `!<!measured>` yaml-cpp writes for a tagged node) and the human-unit comments.
#include "node_writer.hpp"

namespace iosig::calibrate {
namespace {

void emit_node(YAML::Emitter& out, const YAML::Node& n, const std::string& path,
               const NodeDocument& doc) {
    const std::string tag = n.Tag();
    if (!tag.empty() && tag != "?" && tag != "!" && tag[0] == '!')
        out << YAML::LocalTag(tag.substr(1));
    switch (n.Type()) {
    case YAML::NodeType::Map: {
        out << (n.Style() == YAML::EmitterStyle::Flow ? YAML::Flow : YAML::Block) << YAML::BeginMap;
        for (const auto& kv : n) {
            const std::string key = kv.first.as<std::string>();
            const std::string child = path.empty() ? key : path + "." + key;
            out << YAML::Key << key << YAML::Value;
            emit_node(out, kv.second, child, doc);
            if (auto c = doc.comments.find(child); c != doc.comments.end())
                out << YAML::Comment(c->second);
        }
        out << YAML::EndMap;
        break;
    }
    case YAML::NodeType::Sequence: {
        out << (n.Style() == YAML::EmitterStyle::Flow ? YAML::Flow : YAML::Block) << YAML::BeginSeq;
        for (const auto& item : n) {
            const std::string child = item.IsMap() && item["path"]
                                          ? path + "[" + item["path"].as<std::string>() + "]"
                                          : path;
            emit_node(out, item, child, doc);
        }
        out << YAML::EndSeq;
        break;
    }
    case YAML::NodeType::Scalar:
        out << n.Scalar();
        break;
    default:
        out << YAML::Null;
        break;
    }
}

} // namespace

std::string emit_yaml(const NodeDocument& doc) {
    YAML::Emitter out;
    out.SetIndent(2);
    out << YAML::BeginMap;
    for (const auto& kv : doc.root) {
        const std::string key = kv.first.as<std::string>();
        out << YAML::Key << key << YAML::Value;
        if (auto c = doc.comments.find(key); c != doc.comments.end())
            out << YAML::Comment(c->second);
        emit_node(out, kv.second, key, doc);
    }
    out << YAML::EndMap;
    std::string text;
    for (const std::string& line : doc.header)
        text += "# " + line + "\n";
    text += out.c_str();
    text += "\n";
    return text;
}

} // namespace iosig::calibrate
