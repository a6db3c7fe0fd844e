// Private to the node YAML loader (node_yaml_*.cpp): the pipeline is
//   text --parse--> Tree (per file) --layer--> Tree (merged) --read--> Node + where each value came
//   from
//        --validate/infer--> Node,
// and every stage reports into one Diagnostics list. The Tree exists because yaml-cpp's nodes know
// their line but not their file, and layered files must be merged before they are read.
#pragma once

#include "iosig/node.hpp"
#include "iosig/node_yaml.hpp"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace YAML {
class Emitter;
}

namespace iosig::node_yaml_detail {

class Diagnostics {
public:
    void error(SourceLocation where, std::string message);
    void warning(SourceLocation where, std::string message);
    bool has_errors() const { return errors_ > 0; }
    std::size_t error_count() const { return errors_; }
    std::vector<ConfigDiagnostic> take() { return std::move(list_); }

private:
    std::vector<ConfigDiagnostic> list_;
    std::size_t errors_ = 0;
};

struct TreeEntry;

// One YAML value with the file position it came from.
struct Tree {
    enum class Kind : std::uint8_t { null, scalar, sequence, map };
    Kind kind = Kind::null;
    std::string scalar;
    std::string tag;      // as yaml-cpp reports it: "?" plain, "!" quoted, "!measured", ...
    SourceLocation where; // scalars: the first character of the text itself (after tag and quote)
    std::vector<TreeEntry> entries; // map, in file order
    std::vector<Tree> items;        // sequence
    std::string yaml_text;          // this value re-emitted as YAML (kept for `calibration:` only)

    const TreeEntry* find(std::string_view key) const;
    TreeEntry* find(std::string_view key);
};

struct TreeEntry {
    std::string key;
    SourceLocation key_where;
    Tree value;
};

// A Tree as YAML text in block style, tags and quoting kept (how `calibration` maps are stored),
// and the same written into an emitter (how to_yaml writes them back).
std::string tree_to_yaml(const Tree& tree);
void emit_tree(YAML::Emitter& out, const Tree& tree);

// Parses one YAML document. Syntax errors, duplicate keys, non-scalar keys, alias cycles, excessive
// nesting or alias expansion and more than one document become diagnostics; returns false then.
// Never throws.
bool parse_tree(std::string_view text, const std::string& file, Tree& out,
                Diagnostics& diagnostics);

// Reports mounts listed twice in one file (they cannot be told apart when layering).
void check_duplicate_mounts(const Tree& file_root, Diagnostics& diagnostics);

// Layers `over` onto `base` as docs/config.md says: maps merge key by key, lists are replaced,
// except the top-level `mounts` list whose entries merge by `path`; `calibration` is replaced as a
// whole.
void layer(Tree& base, Tree over);

// The path a mount is identified by: lexically normal, no trailing slash (except "/").
std::string normalize_mount_path(std::string_view path);

// Where each value read from the tree came from, keyed like Node::provenance
// ("devices.ssd0.capacity", "mounts[/mnt/x].free", "devices.raid1.members[1]"). A key is present
// iff the value was given.
using Locations = std::map<std::string, SourceLocation>;

// Tree -> Node: types, units, ranges, enum spellings, unknown keys (warnings), provenance tags.
Node read_node(const Tree& root, Locations& locations, Diagnostics& diagnostics);

// References between devices and mounts, scheme requirements, cycles, duplicate/relative paths.
// Returns false on an error that makes inference unsafe (dangling reference, cycle).
bool validate_structure(const Node& node, const Locations& locations, Diagnostics& diagnostics);

// Fills values docs/config.md says are inferred (rand = seq bandwidth, mount capacity = device
// capacity, partitions inherit their owner's figures, complex devices derive from members) and
// marks them in node.provenance as derived/default. Requires validate_structure to have passed.
void infer_missing_values(Node& node, const Locations& locations);

// Checks that need the inferred values (each mounted device has bandwidths, free <= capacity, ...).
void validate_completed(const Node& node, const Locations& locations, Diagnostics& diagnostics);

// "did you mean" helpers: the candidate closest to `word` when it is a plausible misspelling.
std::string closest_spelling(std::string_view word,
                             const std::vector<std::string_view>& candidates);
std::string did_you_mean(std::string_view word, const std::vector<std::string_view>& candidates);

// Spellings of the enums in YAML (the to_string of each value), in declaration order.
const std::vector<std::string_view>& media_names();
const std::vector<std::string_view>& scheme_names();
const std::vector<std::string_view>& structure_names();
const std::vector<std::string_view>& provenance_names(); // without "unknown"
std::optional<Provenance> provenance_from_tag(std::string_view tag_without_bang);

// Keys of provenance/locations maps.
std::string device_key(std::string_view device_name);
std::string mount_key(std::string_view mount_path);

// Where to point when a value is missing: the given location, else the enclosing object's.
SourceLocation located(const Locations& locations, const std::string& key,
                       const SourceLocation& fallback);

} // namespace iosig::node_yaml_detail
