// Layering of node files (docs/config.md, "Layering"): a later file overrides an earlier one key by
// key. Values keep the location of the file they came from, so diagnostics on the merged tree still
// name the right file and line.
#include "node_yaml_internal.hpp"

#include <fmt/format.h>
#include <map>

namespace iosig::node_yaml_detail {
namespace {

const Tree* mount_path_of(const Tree& item) {
    if (item.kind != Tree::Kind::map) return nullptr;
    const TreeEntry* path = item.find("path");
    return path && path->value.kind == Tree::Kind::scalar ? &path->value : nullptr;
}

void merge_maps(Tree& base, Tree over, bool is_root);

void merge_mounts(Tree& base, Tree over) {
    for (Tree& item : over.items) {
        Tree* target = nullptr;
        if (const Tree* path = mount_path_of(item)) {
            const std::string wanted = normalize_mount_path(path->scalar);
            for (Tree& existing : base.items) {
                const Tree* existing_path = mount_path_of(existing);
                if (existing_path && normalize_mount_path(existing_path->scalar) == wanted) {
                    target = &existing;
                    break;
                }
            }
        }
        if (target)
            merge_maps(*target, std::move(item), false);
        else
            base.items.push_back(std::move(item));
    }
}

void merge_maps(Tree& base, Tree over, bool is_root) {
    if (!over.tag.empty() && over.tag != "?") base.tag = over.tag;
    for (TreeEntry& entry : over.entries) {
        TreeEntry* existing = base.find(entry.key);
        if (!existing) {
            base.entries.push_back(std::move(entry));
            continue;
        }
        Tree& old_value = existing->value;
        Tree& new_value = entry.value;
        const bool both_maps =
            old_value.kind == Tree::Kind::map && new_value.kind == Tree::Kind::map;
        const bool both_lists =
            old_value.kind == Tree::Kind::sequence && new_value.kind == Tree::Kind::sequence;
        if (both_maps && entry.key != "calibration") {
            merge_maps(old_value, std::move(new_value), false);
        } else if (both_lists && is_root && entry.key == "mounts") {
            merge_mounts(old_value, std::move(new_value));
        } else {
            existing->key_where = entry.key_where;
            old_value = std::move(new_value);
        }
    }
}

} // namespace

void check_duplicate_mounts(const Tree& file_root, Diagnostics& diagnostics) {
    if (file_root.kind != Tree::Kind::map) return;
    const TreeEntry* mounts = file_root.find("mounts");
    if (!mounts || mounts->value.kind != Tree::Kind::sequence) return;
    std::map<std::string, SourceLocation> seen;
    for (const Tree& item : mounts->value.items) {
        const Tree* path = mount_path_of(item);
        if (!path || path->scalar.empty()) continue;
        const auto [it, inserted] = seen.emplace(normalize_mount_path(path->scalar), path->where);
        if (!inserted)
            diagnostics.error(
                path->where, fmt::format("mount path '{}' is listed twice in this file (first at "
                                         "line {}); a later file may override it, one file may not",
                                         path->scalar, it->second.line));
    }
}

void layer(Tree& base, Tree over) {
    if (base.kind == Tree::Kind::map && over.kind == Tree::Kind::map)
        merge_maps(base, std::move(over), true);
    else if (over.kind != Tree::Kind::null || base.kind != Tree::Kind::map)
        base = std::move(over);
}

} // namespace iosig::node_yaml_detail
