// Parsing and formatting of sizes, durations, bandwidths and probabilities (see units.hpp).
#include "iosig/units.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <string>

namespace iosig {
namespace {

std::string lower(std::string_view text) {
    std::string out(text);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

UnitError error_at(std::size_t offset, std::size_t length, std::string message,
                   std::optional<std::string> replacement = std::nullopt) {
    return UnitError{offset, length, std::move(message), std::move(replacement)};
}

// Splits "<number><unit>" and parses the number (decimal, optional exponent, no sign).
struct NumberAndUnit {
    double number = 0;
    std::string_view unit;
    std::size_t unit_offset = 0;
};

std::optional<NumberAndUnit> split_number(std::string_view text, UnitError& error) {
    std::size_t end = 0;
    while (end < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.' ||
            ((text[end] == 'e' || text[end] == 'E') && end + 1 < text.size() &&
             (std::isdigit(static_cast<unsigned char>(text[end + 1])) || text[end + 1] == '-' ||
              text[end + 1] == '+')) ||
            ((text[end] == '-' || text[end] == '+') && end > 0 &&
             (text[end - 1] == 'e' || text[end - 1] == 'E'))))
        ++end;
    if (end == 0) {
        error = error_at(0, text.size(), text.empty() ? "expected a number" : "expected a number, got '" +
                                                                                  std::string(text) + "'");
        return std::nullopt;
    }
    NumberAndUnit out;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + end, out.number);
    if (ec != std::errc{} || ptr != text.data() + end || !std::isfinite(out.number)) {
        error = error_at(0, end, "'" + std::string(text.substr(0, end)) + "' is not a valid number");
        return std::nullopt;
    }
    out.unit = text.substr(end);
    out.unit_offset = end;
    return out;
}

struct UnitName {
    const char* name;
    double factor;
};

constexpr std::array<UnitName, 22> size_units{{
    {"", 1},           {"b", 1},
    {"k", 0x1p10},     {"kb", 0x1p10},  {"kib", 0x1p10},
    {"m", 0x1p20},     {"mb", 0x1p20},  {"mib", 0x1p20},
    {"g", 0x1p30},     {"gb", 0x1p30},  {"gib", 0x1p30},
    {"t", 0x1p40},     {"tb", 0x1p40},  {"tib", 0x1p40},
    {"p", 0x1p50},     {"pb", 0x1p50},  {"pib", 0x1p50},
    {"byte", 1},       {"bytes", 1},    {"kbyte", 0x1p10}, {"mbyte", 0x1p20}, {"gbyte", 0x1p30},
}};

constexpr std::array<UnitName, 22> duration_units{{
    {"", 1},          {"s", 1},         {"sec", 1},        {"secs", 1},
    {"ns", 1e-9},     {"us", 1e-6},     {"ms", 1e-3},
    {"min", 60},      {"mins", 60},     {"m", 60},
    {"h", 3600},      {"hr", 3600},     {"hrs", 3600},
    {"d", 86400},     {"day", 86400},   {"days", 86400},
    {"w", 604800},    {"week", 604800}, {"weeks", 604800},
    {"y", seconds_per_year}, {"year", seconds_per_year}, {"years", seconds_per_year},
}};

template <std::size_t N>
const UnitName* find_unit(const std::array<UnitName, N>& units, std::string_view unit) {
    const std::string key = lower(unit);
    for (const auto& u : units)
        if (key == u.name) return &u;
    return nullptr;
}

// The unit name closest to `unit` in edit distance <= 1 on letters (for "16Q" -> none, "kbb" -> "kb").
template <std::size_t N>
std::optional<std::string> closest_unit(const std::array<UnitName, N>& units, std::string_view unit) {
    const std::string key = lower(unit);
    for (const auto& u : units) {
        const std::string_view name = u.name;
        if (name.empty()) continue;
        const std::size_t a = key.size(), b = name.size();
        if (a + 1 < b || b + 1 < a) continue;
        std::size_t i = 0;
        while (i < a && i < b && key[i] == name[i]) ++i;
        // one substitution, insertion or deletion after the common prefix
        const std::string_view ka = std::string_view(key).substr(std::min(i + 1, a));
        const std::string_view nb = name.substr(std::min(i + 1, b));
        if (ka == nb || std::string_view(key).substr(i) == nb ||
            ka == name.substr(i))
            return std::string(name);
    }
    return std::nullopt;
}

} // namespace

UnitResult<std::uint64_t> parse_size(std::string_view text) {
    UnitResult<std::uint64_t> result;
    auto parts = split_number(text, result.error);
    if (!parts) return result;
    const UnitName* unit = find_unit(size_units, parts->unit);
    if (!unit) {
        auto guess = closest_unit(size_units, parts->unit);
        std::string message = "unknown size unit '" + std::string(parts->unit) +
                              "' (use B, K, M, G, T or P; all base 1024)";
        if (!guess && parts->unit.size() == 1) guess = "M";  // a single stray letter: offer the common one
        result.error = error_at(parts->unit_offset, parts->unit.size(), std::move(message),
                                guess ? std::optional<std::string>(fmt::format(
                                            "{}", std::string(1, static_cast<char>(std::toupper(
                                                                     static_cast<unsigned char>((*guess)[0])))) +
                                                      guess->substr(1)))
                                      : std::nullopt);
        return result;
    }
    const double bytes = parts->number * unit->factor;
    if (bytes >= 0x1p64) {
        result.error = error_at(0, text.size(), "size '" + std::string(text) + "' is too large");
        return result;
    }
    result.value = static_cast<std::uint64_t>(std::llround(bytes));
    return result;
}

UnitResult<double> parse_duration_seconds(std::string_view text) {
    UnitResult<double> result;
    auto parts = split_number(text, result.error);
    if (!parts) return result;
    const UnitName* unit = find_unit(duration_units, parts->unit);
    if (!unit) {
        auto guess = closest_unit(duration_units, parts->unit);
        result.error = error_at(parts->unit_offset, parts->unit.size(),
                                "unknown duration unit '" + std::string(parts->unit) +
                                    "' (use s, min, h, d, w or y; ms, us, ns for latencies)",
                                guess);
        return result;
    }
    result.value = parts->number * unit->factor;
    return result;
}

UnitResult<double> parse_bandwidth(std::string_view text) {
    UnitResult<double> result;
    std::string_view size_part = text;
    const std::string low = lower(text);
    for (std::string_view suffix : {"/s", "/sec", "ps"}) {
        if (low.size() > suffix.size() && std::string_view(low).ends_with(suffix) &&
            !(suffix == "ps" && low.size() >= 3 && !std::isalpha(static_cast<unsigned char>(low[low.size() - 3])))) {
            size_part = text.substr(0, text.size() - suffix.size());
            break;
        }
    }
    auto parts = split_number(size_part, result.error);
    if (!parts) return result;
    const UnitName* unit = find_unit(size_units, parts->unit);
    if (!unit) {
        result.error = error_at(parts->unit_offset, parts->unit.size(),
                                "unknown bandwidth unit '" + std::string(parts->unit) +
                                    "' (use e.g. 500M/s; base 1024)");
        return result;
    }
    result.value = parts->number * unit->factor;
    return result;
}

UnitResult<double> parse_probability(std::string_view text) {
    UnitResult<double> result;
    auto parts = split_number(text, result.error);
    if (!parts) return result;
    if (!parts->unit.empty()) {
        result.error = error_at(parts->unit_offset, parts->unit.size(),
                                "a probability takes no unit: write e.g. 1e-6 or 0.001");
        return result;
    }
    if (!(parts->number > 0 && parts->number < 1)) {
        result.error = error_at(0, text.size(),
                                "probability must lie strictly between 0 and 1, got " + std::string(text));
        return result;
    }
    result.value = parts->number;
    return result;
}

std::string format_size(std::uint64_t bytes) {
    static constexpr std::array<const char*, 6> names{"", "K", "M", "G", "T", "P"};
    std::size_t unit = 0;
    while (unit + 1 < names.size() && bytes != 0 && bytes % 1024 == 0) {
        bytes /= 1024;
        ++unit;
    }
    return fmt::format("{}{}", bytes, names[unit]);
}

std::string format_duration(double seconds) {
    static constexpr std::array<UnitName, 6> units{{{"y", seconds_per_year},
                                                   {"w", 604800},
                                                   {"d", 86400},
                                                   {"h", 3600},
                                                   {"min", 60},
                                                   {"s", 1}}};
    for (const auto& u : units) {
        const double count = seconds / u.factor;
        if (count >= 1 && count == std::floor(count) && count < 1e15 && count * u.factor == seconds)
            return fmt::format("{}{}", static_cast<std::uint64_t>(count), u.name);
    }
    return fmt::format("{}s", seconds);  // fmt's shortest round-trip representation
}

std::string format_probability(double probability) { return fmt::format("{}", probability); }

std::string human_size(double bytes) {
    static constexpr std::array<const char*, 6> names{"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    std::size_t unit = 0;
    while (unit + 1 < names.size() && bytes >= 1024) {
        bytes /= 1024;
        ++unit;
    }
    return unit == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.3g} {}", bytes, names[unit]);
}

std::string human_bandwidth(double bytes_per_second) { return human_size(bytes_per_second) + "/s"; }

std::string human_duration(double seconds) {
    if (std::isinf(seconds)) return "unbounded";
    if (seconds >= seconds_per_year) return fmt::format("{:.3g} y", seconds / seconds_per_year);
    if (seconds >= 86400) return fmt::format("{:.3g} d", seconds / 86400);
    if (seconds >= 3600) return fmt::format("{:.3g} h", seconds / 3600);
    if (seconds >= 60) return fmt::format("{:.3g} min", seconds / 60);
    if (seconds >= 1) return fmt::format("{:.3g} s", seconds);
    if (seconds >= 1e-3) return fmt::format("{:.3g} ms", seconds * 1e3);
    if (seconds >= 1e-6) return fmt::format("{:.3g} us", seconds * 1e6);
    return fmt::format("{:.3g} ns", seconds * 1e9);
}

} // namespace iosig
