// Typed, located reading of one YAML map (see node_yaml_section.hpp).
#include "node_yaml_section.hpp"

#include "iosig/units.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <limits>

namespace iosig::node_yaml_detail {
namespace {

std::string_view kind_name(Tree::Kind kind) {
    switch (kind) {
    case Tree::Kind::null:
        return "empty";
    case Tree::Kind::scalar:
        return "a single value";
    case Tree::Kind::sequence:
        return "a list";
    case Tree::Kind::map:
        return "a map";
    }
    return "?";
}

std::string lower(std::string_view text) {
    std::string out(text);
    for (char& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// A plain decimal number (exponent allowed) that is the whole text.
std::optional<double> plain_number(std::string_view text) {
    double value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc{} || ptr != end || !std::isfinite(value)) return std::nullopt;
    return value;
}

const std::vector<std::string_view>& provenance_tags() {
    static const std::vector<std::string> spelled = [] {
        std::vector<std::string> tags;
        for (std::string_view name : provenance_names())
            tags.push_back("!" + std::string(name));
        return tags;
    }();
    static const std::vector<std::string_view> views(spelled.begin(), spelled.end());
    return views;
}

bool is_standard_tag(std::string_view tag) {
    return tag.empty() || tag == "?" || tag == "!" || tag.starts_with("tag:yaml.org,2002:");
}

} // namespace

void record_value(ReadContext& context, const std::string& path, const Tree& v) {
    context.locations[path] = v.where;
    if (is_standard_tag(v.tag)) return;
    const std::string name = v.tag.starts_with('!') ? v.tag.substr(1) : v.tag;
    if (const auto provenance = provenance_from_tag(name)) {
        context.provenance[path] = *provenance;
        return;
    }
    const std::size_t dot = path.rfind('.');
    context.diagnostics.warning(
        v.where, fmt::format("unknown tag '{}' on '{}'{}; provenance tags are !measured, !derived, "
                             "!detected, !default and !user",
                             v.tag, dot == std::string::npos ? path : path.substr(dot + 1),
                             did_you_mean(v.tag, provenance_tags())));
}

Section::Section(const Tree* value, std::string path, std::string what,
                 std::vector<std::string_view> known_keys, ReadContext& context)
    : path_(std::move(path)), what_(std::move(what)), context_(context) {
    if (!value) return;
    where_ = value->where;
    if (value->kind == Tree::Kind::null) return;
    if (value->kind != Tree::Kind::map) {
        error(value->where,
              fmt::format("{} must be a map of keys, not {}", what_, kind_name(value->kind)));
        return;
    }
    map_ = value;
    for (const TreeEntry& entry : map_->entries) {
        if (std::find(known_keys.begin(), known_keys.end(), entry.key) != known_keys.end())
            continue;
        context_.diagnostics.warning(entry.key_where,
                                     fmt::format("unknown key '{}' in {}{}; ignored", entry.key,
                                                 what_, did_you_mean(entry.key, known_keys)));
    }
}

std::string Section::key_path(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

void Section::error(const SourceLocation& where, std::string message) const {
    context_.diagnostics.error(where, std::move(message));
}

bool Section::has(std::string_view key) const {
    if (!map_) return false;
    const TreeEntry* entry = map_->find(key);
    return entry && entry->value.kind != Tree::Kind::null;
}

const Tree* Section::value(std::string_view key) {
    if (!map_) return nullptr;
    const TreeEntry* entry = map_->find(key);
    if (!entry || entry->value.kind == Tree::Kind::null) return nullptr;
    const Tree& v = entry->value;
    record_value(context_, key_path(key), v);
    return &v;
}

Section Section::section(std::string_view key, std::vector<std::string_view> known_keys) {
    return Section(value(key), key_path(key), fmt::format("'{}' of {}", key, what_),
                   std::move(known_keys), context_);
}

const Tree* Section::scalar(std::string_view key, std::string_view expected) {
    const Tree* v = value(key);
    if (!v) return nullptr;
    if (v->kind != Tree::Kind::scalar) {
        error(v->where, fmt::format("'{}' of {} must be {}, not {}", key, what_, expected,
                                    kind_name(v->kind)));
        return nullptr;
    }
    return v;
}

template <class T, class Parse>
bool Section::unit_value(std::string_view key, std::string_view expected, Parse parse, T& out) {
    const Tree* v = scalar(key, expected);
    if (!v) return false;
    const std::string& text = v->scalar;
    if (text.starts_with('-')) {
        error(v->where, fmt::format("'{}' of {} must not be negative, got '{}'", key, what_, text));
        return false;
    }
    const auto parsed = parse(text);
    if (parsed.value) {
        out = *parsed.value;
        return true;
    }
    SourceLocation where = v->where;
    if (text.find('\n') == std::string::npos && parsed.error.offset <= text.size())
        where.column += static_cast<int>(parsed.error.offset);
    std::string message =
        fmt::format("'{}' of {} must be {}: {}", key, what_, expected, parsed.error.message);
    if (parsed.error.replacement && parsed.error.offset <= text.size()) {
        std::string fixed = text;
        fixed.replace(parsed.error.offset, parsed.error.length, *parsed.error.replacement);
        message += fmt::format(" (did you mean '{}'?)", fixed);
    }
    error(where, std::move(message));
    return false;
}

bool Section::size(std::string_view key, std::uint64_t& out, SizeRule rule) {
    std::uint64_t value = 0;
    if (!unit_value(key, "a size such as 4K or 256G", parse_size, value)) return false;
    const SourceLocation& where = context_.locations[key_path(key)];
    if (rule != SizeRule::any && value == 0) {
        error(where, fmt::format("'{}' of {} must be greater than 0", key, what_));
        return false;
    }
    if (rule == SizeRule::power_of_two && !std::has_single_bit(value)) {
        error(where, fmt::format("'{}' of {} must be a power of two such as 4K, got {} bytes", key,
                                 what_, value));
        return false;
    }
    out = value;
    return true;
}

bool Section::size(std::string_view key, std::optional<std::uint64_t>& out, SizeRule rule) {
    std::uint64_t value = 0;
    if (!size(key, value, rule)) return false;
    out = value;
    return true;
}

bool Section::bandwidth(std::string_view key, double& out) {
    double value = 0;
    if (!unit_value(key, "a bandwidth such as 500M/s", parse_bandwidth, value)) return false;
    if (!(value > 0)) {
        error(context_.locations[key_path(key)],
              fmt::format("'{}' of {} must be greater than 0 (leave it out when unknown)", key,
                          what_));
        return false;
    }
    out = value;
    return true;
}

bool Section::bandwidth(std::string_view key, std::optional<double>& out) {
    double value = 0;
    if (!bandwidth(key, value)) return false;
    out = value;
    return true;
}

bool Section::duration(std::string_view key, double& out, DurationRule rule) {
    double value = 0;
    if (!unit_value(key, "a duration such as 5ms, 1d or 10y", parse_duration_seconds, value))
        return false;
    if (rule == DurationRule::positive && !(value > 0)) {
        error(context_.locations[key_path(key)],
              fmt::format("'{}' of {} must be greater than 0", key, what_));
        return false;
    }
    out = value;
    return true;
}

bool Section::duration(std::string_view key, std::optional<double>& out, DurationRule rule) {
    double value = 0;
    if (!duration(key, value, rule)) return false;
    out = value;
    return true;
}

bool Section::probability(std::string_view key, std::optional<double>& out) {
    double value = 0;
    if (!unit_value(key, "a probability such as 1e-6", parse_probability, value)) return false;
    out = value;
    return true;
}

bool Section::ratio(std::string_view key, std::optional<double>& out) {
    const Tree* v = scalar(key, "a fraction between 0 and 1");
    if (!v) return false;
    const auto value = plain_number(v->scalar);
    if (!value || *value < 0 || *value > 1) {
        error(v->where, fmt::format("'{}' of {} must be a fraction between 0 and 1 (e.g. 0.2 for "
                                    "20 %), got '{}'",
                                    key, what_, v->scalar));
        return false;
    }
    out = *value;
    return true;
}

bool Section::number(std::string_view key, double& out) {
    const Tree* v = scalar(key, "a number");
    if (!v) return false;
    const auto value = plain_number(v->scalar);
    if (!value || *value < 0) {
        error(v->where, fmt::format("'{}' of {} must be a plain non-negative number such as 1e-9, "
                                    "got '{}'",
                                    key, what_, v->scalar));
        return false;
    }
    out = *value;
    return true;
}

bool Section::number(std::string_view key, std::optional<double>& out) {
    double value = 0;
    if (!number(key, value)) return false;
    out = value;
    return true;
}

bool Section::count(std::string_view key, unsigned& out, unsigned minimum) {
    const Tree* v = scalar(key, "a whole number");
    if (!v) return false;
    const std::string& text = v->scalar;
    unsigned long long value = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || ptr != text.data() + text.size() ||
        value > std::numeric_limits<unsigned>::max()) {
        error(v->where,
              fmt::format("'{}' of {} must be a whole number, got '{}'", key, what_, text));
        return false;
    }
    if (value < minimum) {
        error(v->where,
              fmt::format("'{}' of {} must be at least {}, got {}", key, what_, minimum, value));
        return false;
    }
    out = static_cast<unsigned>(value);
    return true;
}

bool Section::flag(std::string_view key, bool& out) {
    const Tree* v = scalar(key, "true or false");
    if (!v) return false;
    const std::string word = lower(v->scalar);
    if (word == "true" || word == "yes" || word == "on") {
        out = true;
        return true;
    }
    if (word == "false" || word == "no" || word == "off") {
        out = false;
        return true;
    }
    error(v->where,
          fmt::format("'{}' of {} must be true or false, got '{}'", key, what_, v->scalar));
    return false;
}

bool Section::text(std::string_view key, std::string& out) {
    const Tree* v = scalar(key, "a string");
    if (!v) return false;
    out = v->scalar;
    return true;
}

bool Section::text_list(std::string_view key, std::vector<std::string>& out) {
    const Tree* v = value(key);
    if (!v) return false;
    if (v->kind == Tree::Kind::scalar) { // `labels: scratch` is read as [scratch]
        out = {v->scalar};
        context_.locations[key_path(key) + "[0]"] = v->where;
        return true;
    }
    if (v->kind != Tree::Kind::sequence) {
        error(v->where, fmt::format("'{}' of {} must be a list such as [a, b], not {}", key, what_,
                                    kind_name(v->kind)));
        return false;
    }
    std::vector<std::string> items;
    bool ok = true;
    for (std::size_t i = 0; i < v->items.size(); ++i) {
        const Tree& item = v->items[i];
        if (item.kind != Tree::Kind::scalar || item.scalar.empty()) {
            error(item.where,
                  fmt::format("item {} of '{}' in {} must be a non-empty name", i + 1, key, what_));
            ok = false;
            continue;
        }
        context_.locations[fmt::format("{}[{}]", key_path(key), items.size())] = item.where;
        items.push_back(item.scalar);
    }
    if (ok) out = std::move(items);
    return ok;
}

bool Section::choice(std::string_view key, const std::vector<std::string_view>& names,
                     std::size_t& index) {
    const Tree* v = scalar(key, "a name");
    if (!v) return false;
    const std::string word = lower(v->scalar);
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (names[i] == word) {
            index = i;
            return true;
        }
    }
    error(v->where, fmt::format("'{}' of {} must be one of {}; got '{}'{}", key, what_,
                                fmt::join(names, ", "), v->scalar, did_you_mean(word, names)));
    return false;
}

bool Section::yaml_text(std::string_view key, std::string& out) {
    const Tree* v = value(key);
    if (!v) return false;
    if (v->kind != Tree::Kind::map) {
        error(v->where, fmt::format("'{}' of {} must be a map (free-form), not {}", key, what_,
                                    kind_name(v->kind)));
        return false;
    }
    out = v->yaml_text;
    return true;
}

} // namespace iosig::node_yaml_detail
