// Tree -> YAML text, for the free-form `calibration` maps: block style whatever the source used, so
// that a map reads back to the same text after to_yaml; quoted scalars stay quoted (a quoted "123"
// is a string to whoever reads the calibration) and tags stay.
#include "node_yaml_internal.hpp"

#include <yaml-cpp/yaml.h>

namespace iosig::node_yaml_detail {
namespace {

void emit_tag(YAML::Emitter& out, const std::string& tag) {
    static constexpr std::string_view core = "tag:yaml.org,2002:";
    if (tag.empty() || tag == "?" || tag == "!") return;
    if (tag.starts_with(core))
        out << YAML::SecondaryTag(tag.substr(core.size()));
    else if (tag.starts_with('!'))
        out << YAML::LocalTag(tag.substr(1));
    else
        out << YAML::VerbatimTag(tag);
}

} // namespace

void emit_tree(YAML::Emitter& out, const Tree& tree) {
    emit_tag(out, tree.tag);
    switch (tree.kind) {
    case Tree::Kind::null:
        out << YAML::Null;
        break;
    case Tree::Kind::scalar:
        if (tree.tag == "!") out << YAML::DoubleQuoted;
        out << tree.scalar;
        break;
    case Tree::Kind::sequence:
        out << YAML::Block << YAML::BeginSeq;
        for (const Tree& item : tree.items)
            emit_tree(out, item);
        out << YAML::EndSeq;
        break;
    case Tree::Kind::map:
        out << YAML::Block << YAML::BeginMap;
        for (const TreeEntry& entry : tree.entries) {
            out << YAML::Key << entry.key << YAML::Value;
            emit_tree(out, entry.value);
        }
        out << YAML::EndMap;
        break;
    }
}

std::string tree_to_yaml(const Tree& tree) {
    YAML::Emitter out;
    emit_tree(out, tree);
    return out.good() ? std::string(out.c_str()) : std::string("{}");
}

} // namespace iosig::node_yaml_detail
