// Small pieces every stage of the node YAML loader shares: diagnostics, keys, enum spellings.
#include "node_yaml_internal.hpp"

#include <filesystem>
#include <fmt/format.h>

namespace iosig {

std::string ConfigDiagnostic::format() const {
    const char* kind = severity == Severity::error ? "error" : "warning";
    if (where.file.empty()) return fmt::format("{}: {}", kind, message);
    if (where.line <= 0) return fmt::format("{}: {}: {}", where.file, kind, message);
    return fmt::format("{}:{}:{}: {}: {}", where.file, where.line, where.column, kind, message);
}

} // namespace iosig

namespace iosig::node_yaml_detail {

void Diagnostics::error(SourceLocation where, std::string message) {
    list_.push_back({ConfigDiagnostic::Severity::error, std::move(where), std::move(message)});
    ++errors_;
}

void Diagnostics::warning(SourceLocation where, std::string message) {
    list_.push_back({ConfigDiagnostic::Severity::warning, std::move(where), std::move(message)});
}

const TreeEntry* Tree::find(std::string_view key) const {
    for (const TreeEntry& entry : entries)
        if (entry.key == key) return &entry;
    return nullptr;
}

TreeEntry* Tree::find(std::string_view key) {
    for (TreeEntry& entry : entries)
        if (entry.key == key) return &entry;
    return nullptr;
}

std::string normalize_mount_path(std::string_view path) {
    if (path.empty()) return {};
    std::string normal = std::filesystem::path(path).lexically_normal().string();
    while (normal.size() > 1 && normal.back() == '/')
        normal.pop_back();
    return normal;
}

std::string device_key(std::string_view device_name) {
    return "devices." + std::string(device_name);
}

std::string mount_key(std::string_view mount_path) {
    return "mounts[" + std::string(mount_path) + "]";
}

SourceLocation located(const Locations& locations, const std::string& key,
                       const SourceLocation& fallback) {
    const auto it = locations.find(key);
    return it == locations.end() ? fallback : it->second;
}

const std::vector<std::string_view>& media_names() {
    static const std::vector<std::string_view> names{
        to_string(MediaKind::ram), to_string(MediaKind::nvram), to_string(MediaKind::ssd),
        to_string(MediaKind::hdd), to_string(MediaKind::network)};
    return names;
}

const std::vector<std::string_view>& scheme_names() {
    static const std::vector<std::string_view> names{
        to_string(RedundancyScheme::none),        to_string(RedundancyScheme::raid0),
        to_string(RedundancyScheme::raid1),       to_string(RedundancyScheme::raid5),
        to_string(RedundancyScheme::raid6),       to_string(RedundancyScheme::raid10),
        to_string(RedundancyScheme::replication), to_string(RedundancyScheme::erasure),
        to_string(RedundancyScheme::opaque)};
    return names;
}

const std::vector<std::string_view>& structure_names() {
    static const std::vector<std::string_view> names{to_string(DeviceStructure::simple),
                                                     to_string(DeviceStructure::complex),
                                                     to_string(DeviceStructure::partition)};
    return names;
}

const std::vector<std::string_view>& provenance_names() {
    static const std::vector<std::string_view> names{
        to_string(Provenance::measured), to_string(Provenance::derived),
        to_string(Provenance::detected), to_string(Provenance::defaulted),
        to_string(Provenance::user)};
    return names;
}

std::optional<Provenance> provenance_from_tag(std::string_view tag_without_bang) {
    for (Provenance p : {Provenance::measured, Provenance::derived, Provenance::detected,
                         Provenance::defaulted, Provenance::user})
        if (to_string(p) == tag_without_bang) return p;
    return std::nullopt;
}

} // namespace iosig::node_yaml_detail
