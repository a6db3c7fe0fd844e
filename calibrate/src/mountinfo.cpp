#include "mountinfo.hpp"

#include <charconv>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

namespace iosig::calibrate {
namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo (octal).
std::string unescape(std::string_view field) {
    std::string out;
    out.reserve(field.size());
    for (std::size_t i = 0; i < field.size(); ++i) {
        if (field[i] == '\\' && i + 3 < field.size()) {
            const std::string_view digits = field.substr(i + 1, 3);
            int value = 0;
            bool octal = true;
            for (char c : digits) {
                if (c < '0' || c > '7') octal = false;
                value = value * 8 + (c - '0');
            }
            if (octal) {
                out.push_back(static_cast<char>(value));
                i += 3;
                continue;
            }
        }
        out.push_back(field[i]);
    }
    return out;
}

std::vector<std::string_view> split_spaces(std::string_view line) {
    std::vector<std::string_view> fields;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && line[i] == ' ')
            ++i;
        const std::size_t start = i;
        while (i < line.size() && line[i] != ' ')
            ++i;
        if (i > start) fields.push_back(line.substr(start, i - start));
    }
    return fields;
}

template <class T>
bool to_number(std::string_view text, T& value) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && end == text.data() + text.size();
}

} // namespace

bool has_option(std::string_view options, std::string_view option) {
    std::size_t start = 0;
    while (start <= options.size()) {
        std::size_t end = options.find(',', start);
        if (end == std::string_view::npos) end = options.size();
        std::string_view item = options.substr(start, end - start);
        if (item == option ||
            (item.size() > option.size() && item.substr(0, option.size()) == option &&
             item[option.size()] == '='))
            return true;
        start = end + 1;
    }
    return false;
}

bool MountEntry::read_only() const {
    return has_option(mount_options, "ro") || has_option(super_options, "ro");
}

std::vector<MountEntry> parse_mountinfo(std::string_view text, std::vector<std::string>* errors) {
    std::vector<MountEntry> entries;
    int line_number = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        ++line_number;
        if (line.empty()) continue;
        const auto fields = split_spaces(line);
        // id parent maj:min root mount-point options [optional fields...] - fstype source
        // super-options
        std::size_t separator = 6;
        while (separator < fields.size() && fields[separator] != "-")
            ++separator;
        auto complain = [&](std::string_view why) {
            if (errors) errors->push_back(fmt::format("line {}: {}", line_number, why));
        };
        if (fields.size() < 6 || separator + 3 > fields.size()) {
            complain("fewer fields than mountinfo has");
            continue;
        }
        MountEntry e;
        const std::string_view devno = fields[2];
        const std::size_t colon = devno.find(':');
        if (!to_number(fields[0], e.id) || !to_number(fields[1], e.parent_id) ||
            colon == std::string_view::npos || !to_number(devno.substr(0, colon), e.major) ||
            !to_number(devno.substr(colon + 1), e.minor)) {
            complain("bad mount id or major:minor");
            continue;
        }
        e.root = unescape(fields[3]);
        e.mount_point = unescape(fields[4]);
        e.mount_options = std::string(fields[5]);
        e.fs_type = unescape(fields[separator + 1]);
        e.source = unescape(fields[separator + 2]);
        e.super_options =
            separator + 3 < fields.size() ? std::string(fields[separator + 3]) : std::string();
        entries.push_back(std::move(e));
    }
    return entries;
}

std::vector<MountEntry> read_mountinfo(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return parse_mountinfo(text.str());
}

std::optional<MountEntry> containing_mount(const std::vector<MountEntry>& mounts,
                                           std::string_view path) {
    const MountEntry* best = nullptr;
    for (const MountEntry& m : mounts) {
        const std::string& mp = m.mount_point;
        const bool prefix = mp == "/" || (path.substr(0, mp.size()) == mp &&
                                          (path.size() == mp.size() || path[mp.size()] == '/'));
        if (!prefix) continue;
        if (best == nullptr || mp.size() >= best->mount_point.size()) best = &m;
    }
    if (best == nullptr) return std::nullopt;
    return *best;
}

} // namespace iosig::calibrate
