// Reading one YAML map of a node file (a device, a mount, `system`, ...) into typed fields: each
// accessor converts one key with its unit, checks its range, records where it came from and its
// provenance tag, and reports problems at the value's file:line:col. Keys nobody asked for are
// warned about ("unknown key ... did you mean").
#pragma once

#include "node_yaml_internal.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iosig::node_yaml_detail {

struct ReadContext {
    Diagnostics& diagnostics;
    Locations& locations;
    std::map<std::string, Provenance>& provenance;
};

// Records where the value at `path` came from and its provenance tag (unknown tags: a warning).
void record_value(ReadContext& context, const std::string& path, const Tree& value);

enum class SizeRule : std::uint8_t { any, positive, power_of_two };
enum class DurationRule : std::uint8_t { non_negative, positive };

class Section {
public:
    // `value` may be null (section absent) or a map; anything else is reported as an error and read
    // as empty. `what` names the section in messages ("device 'ssd0'").
    Section(const Tree* value, std::string path, std::string what,
            std::vector<std::string_view> known_keys, ReadContext& context);

    const std::string& path() const { return path_; }
    const std::string& what() const { return what_; }
    SourceLocation where() const { return where_; }
    bool has(std::string_view key) const; // given and not null

    // The raw value of `key` (nullptr when absent or null); records its location and provenance.
    const Tree* value(std::string_view key);
    // A nested map (`performance:`); absent reads as an empty section.
    Section section(std::string_view key, std::vector<std::string_view> known_keys);

    // Each returns true iff the key was given and valid; `out` is left unchanged otherwise.
    bool size(std::string_view key, std::uint64_t& out, SizeRule rule);
    bool size(std::string_view key, std::optional<std::uint64_t>& out, SizeRule rule);
    bool bandwidth(std::string_view key, double& out); // > 0
    bool bandwidth(std::string_view key, std::optional<double>& out);
    bool duration(std::string_view key, double& out, DurationRule rule);
    bool duration(std::string_view key, std::optional<double>& out, DurationRule rule);
    bool probability(std::string_view key, std::optional<double>& out); // 0 < p < 1
    bool ratio(std::string_view key, std::optional<double>& out);       // 0 <= r <= 1
    bool number(std::string_view key, double& out);                     // plain, >= 0
    bool number(std::string_view key, std::optional<double>& out);
    bool count(std::string_view key, unsigned& out, unsigned minimum);
    bool flag(std::string_view key, bool& out);
    bool text(std::string_view key, std::string& out);
    bool text_list(std::string_view key, std::vector<std::string>& out);
    // Matches one of `names` (the to_string of E's values, in declaration order).
    template <class E>
    bool enumeration(std::string_view key, E& out, const std::vector<std::string_view>& names) {
        std::size_t index = 0;
        if (!choice(key, names, index)) return false;
        out = static_cast<E>(index);
        return true;
    }
    // A free-form map kept as YAML text.
    bool yaml_text(std::string_view key, std::string& out);

    void error(const SourceLocation& where, std::string message) const;
    std::string key_path(std::string_view key) const;

private:
    const Tree* scalar(std::string_view key, std::string_view expected);
    bool choice(std::string_view key, const std::vector<std::string_view>& names,
                std::size_t& index);
    template <class T, class Parse>
    bool unit_value(std::string_view key, std::string_view expected, Parse parse, T& out);

    const Tree* map_ = nullptr;
    std::string path_;
    std::string what_;
    SourceLocation where_;
    ReadContext& context_;
};

} // namespace iosig::node_yaml_detail
