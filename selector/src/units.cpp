// Parsing and formatting of sizes, durations, bandwidths and probabilities (see units.hpp and the
// "Quantities" section of docs/signatures.md).
#include "iosig/units.hpp"

#include "signature_spelling.hpp"
#include "units_text.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <span>
#include <string>

namespace iosig {
namespace {

using spelling::ascii_lower;
using units_text::shortest_decimal;

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}
bool is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

UnitError error_at(std::size_t offset, std::size_t length, std::string message,
                   std::optional<std::string> replacement = std::nullopt) {
    return UnitError{offset, length, std::move(message), std::move(replacement)};
}

// A quantity as written: "<number>[blanks]<unit>", optionally surrounded by blanks. The number is
// unsigned decimal with an optional fraction and exponent; an all-digit number is also kept
// exactly.
struct Quantity {
    double number = 0;
    std::optional<std::uint64_t> integer; // set when the number is written with digits only
    std::string_view unit;
    std::size_t unit_offset = 0;
    std::size_t number_offset = 0;
    std::size_t number_length = 0;
};

std::size_t scan_number(std::string_view text, std::size_t begin) {
    std::size_t end = begin;
    while (end < text.size() && (is_digit(text[end]) || text[end] == '.'))
        ++end;
    if (end > begin && end < text.size() && (text[end] == 'e' || text[end] == 'E')) {
        std::size_t exponent = end + 1;
        if (exponent < text.size() && (text[exponent] == '+' || text[exponent] == '-')) ++exponent;
        if (exponent < text.size() && is_digit(text[exponent])) {
            end = exponent;
            while (end < text.size() && is_digit(text[end]))
                ++end;
        }
    }
    return end;
}

std::optional<Quantity> split_quantity(std::string_view text, std::string_view what,
                                       UnitError& error) {
    std::size_t begin = 0;
    while (begin < text.size() && is_blank(text[begin]))
        ++begin;
    std::size_t last = text.size();
    while (last > begin && is_blank(text[last - 1]))
        --last;
    if (begin == last) {
        error = error_at(begin, 0, fmt::format("expected {}, got nothing", what));
        return std::nullopt;
    }
    if (text[begin] == '-' || text[begin] == '+') {
        const bool minus = text[begin] == '-';
        error = error_at(begin, 1,
                         minus ? fmt::format("{} cannot be negative", what)
                               : std::string("drop the '+' sign"),
                         minus ? std::nullopt : std::optional<std::string>(""));
        return std::nullopt;
    }
    const std::size_t end = scan_number(text, begin);
    if (end == begin) {
        error = error_at(begin, last - begin,
                         fmt::format("expected {} starting with a number, got '{}'", what,
                                     text.substr(begin, last - begin)));
        return std::nullopt;
    }
    Quantity out;
    out.number_offset = begin;
    out.number_length = end - begin;
    const char* first = text.data() + begin;
    const char* past = text.data() + end;
    const auto [ptr, ec] = std::from_chars(first, past, out.number);
    if (ec == std::errc::result_out_of_range || (ec == std::errc{} && !std::isfinite(out.number))) {
        error =
            error_at(begin, end - begin,
                     fmt::format("number '{}' is out of range", text.substr(begin, end - begin)));
        return std::nullopt;
    }
    if (ec != std::errc{} || ptr != past) {
        error =
            error_at(begin, end - begin,
                     fmt::format("'{}' is not a valid number", text.substr(begin, end - begin)));
        return std::nullopt;
    }
    if (std::all_of(first, past, is_digit)) {
        std::uint64_t integer = 0;
        if (std::from_chars(first, past, integer).ec == std::errc{}) out.integer = integer;
    }
    std::size_t unit = end;
    while (unit < last && is_blank(text[unit]))
        ++unit;
    if (unit < last && text[unit] == ',' && unit == end && unit + 1 < last &&
        is_digit(text[unit + 1])) {
        const std::size_t fraction_end = scan_number(text, unit + 1);
        std::string fixed(text.substr(begin, fraction_end - begin));
        fixed[unit - begin] = '.';
        error = error_at(begin, fraction_end - begin, "use '.' as the decimal point", fixed);
        return std::nullopt;
    }
    out.unit = text.substr(unit, last - unit);
    out.unit_offset = unit;
    return out;
}

struct UnitName {
    std::string_view name; // matched case-insensitively; also the spelling offered in suggestions
    double factor;
};

// Suggestion order matters: the first of several equally close names is offered.
constexpr std::array<UnitName, 24> size_units{{
    {"", 1},           {"B", 1},          {"K", 0x1p10},     {"M", 0x1p20},     {"G", 0x1p30},
    {"T", 0x1p40},     {"P", 0x1p50},     {"KiB", 0x1p10},   {"MiB", 0x1p20},   {"GiB", 0x1p30},
    {"TiB", 0x1p40},   {"PiB", 0x1p50},   {"KB", 0x1p10},    {"MB", 0x1p20},    {"GB", 0x1p30},
    {"TB", 0x1p40},    {"PB", 0x1p50},    {"bytes", 1},      {"byte", 1},       {"kbyte", 0x1p10},
    {"mbyte", 0x1p20}, {"gbyte", 0x1p30}, {"tbyte", 0x1p40}, {"pbyte", 0x1p50},
}};

// "m" is deliberately absent: minutes or months? Writing "min" removes the doubt.
constexpr std::array<UnitName, 34> duration_units{{
    {"", 1},
    {"s", 1},
    {"min", 60},
    {"h", 3600},
    {"d", 86400},
    {"w", 604800},
    {"y", seconds_per_year},
    {"ms", 1e-3},
    {"us", 1e-6},
    {"ns", 1e-9},
    {"\u00b5s", 1e-6},
    {"\u03bcs", 1e-6},
    {"sec", 1},
    {"secs", 1},
    {"second", 1},
    {"seconds", 1},
    {"mins", 60},
    {"minute", 60},
    {"minutes", 60},
    {"hr", 3600},
    {"hrs", 3600},
    {"hour", 3600},
    {"hours", 3600},
    {"day", 86400},
    {"days", 86400},
    {"week", 604800},
    {"weeks", 604800},
    {"yr", seconds_per_year},
    {"yrs", seconds_per_year},
    {"year", seconds_per_year},
    {"years", seconds_per_year},
    {"msec", 1e-3},
    {"usec", 1e-6},
    {"nsec", 1e-9},
}};

template <std::size_t N>
const UnitName* find_unit(const std::array<UnitName, N>& units, std::string_view unit) {
    for (const auto& u : units)
        if (spelling::equals_ignoring_case(unit, u.name)) return &u;
    return nullptr;
}

template <std::size_t N>
std::optional<std::string> closest_unit(const std::array<UnitName, N>& units,
                                        std::string_view unit) {
    std::array<std::string_view, N> names{};
    std::ranges::transform(units, names.begin(), &UnitName::name);
    const auto index = spelling::closest(unit, std::span<const std::string_view>(names));
    if (!index) return std::nullopt;
    return std::string(units[*index].name);
}

// A single mistyped letter is one edit away from every one-letter unit, so edit distance cannot
// choose: prefer the nearest key next to it on the keyboard ("16J" -> "16K", "16N" -> "16M"), else
// M, the commonest unit of IO sizes in signatures and configs.
std::string guess_size_letter(char typed) {
    char best = 'M';
    double best_distance = 1e9;
    for (char unit : {'M', 'K', 'G', 'T', 'P', 'B'}) {
        const double distance = spelling::keyboard_distance(typed, unit);
        if (spelling::keyboard_adjacent(typed, unit) && distance < best_distance) {
            best = unit;
            best_distance = distance;
        }
    }
    return std::string(1, best);
}

bool is_month(std::string_view unit) {
    const std::string key = ascii_lower(unit);
    return key == "mo" || key == "mon" || key == "month" || key == "months";
}

} // namespace

UnitResult<std::uint64_t> parse_size(std::string_view text) {
    UnitResult<std::uint64_t> result;
    const auto quantity = split_quantity(text, "a size", result.error);
    if (!quantity) return result;
    const UnitName* unit = find_unit(size_units, quantity->unit);
    if (!unit) {
        std::optional<std::string> guess = closest_unit(size_units, quantity->unit);
        if (!guess && quantity->unit.size() == 1) guess = guess_size_letter(quantity->unit[0]);
        result.error =
            error_at(quantity->unit_offset, quantity->unit.size(),
                     fmt::format("unknown size unit '{}' (use B, K, M, G, T or P; all base 1024)",
                                 quantity->unit),
                     std::move(guess));
        return result;
    }
    const std::uint64_t factor = static_cast<std::uint64_t>(unit->factor);
    if (quantity->integer) {
        if (*quantity->integer > UINT64_MAX / factor) {
            result.error = error_at(
                0, text.size(), fmt::format("size '{}' is too large (at most 16 EiB - 1 B)", text));
            return result;
        }
        result.value = *quantity->integer * factor;
        return result;
    }
    const double bytes = std::round(quantity->number * unit->factor);
    if (bytes >= 0x1p64) {
        result.error = error_at(0, text.size(),
                                fmt::format("size '{}' is too large (at most 16 EiB - 1 B)", text));
        return result;
    }
    result.value = static_cast<std::uint64_t>(bytes);
    return result;
}

UnitResult<double> parse_duration_seconds(std::string_view text) {
    UnitResult<double> result;
    const auto quantity = split_quantity(text, "a duration", result.error);
    if (!quantity) return result;
    const UnitName* unit = find_unit(duration_units, quantity->unit);
    if (!unit) {
        const std::string_view u = quantity->unit;
        std::string message =
            fmt::format("unknown duration unit '{}' (use s, min, h, d, w or y; ms, us, ns "
                        "for latencies)",
                        u);
        std::optional<std::string> guess;
        if (spelling::equals_ignoring_case(u, "m")) {
            message = "'m' is ambiguous (minutes or months?): write 'min' for minutes";
            guess = "min";
        } else if (is_month(u)) {
            message = "months vary in length and are not a unit: use d, w or y";
        } else {
            guess = closest_unit(duration_units, u);
        }
        result.error =
            error_at(quantity->unit_offset, u.size(), std::move(message), std::move(guess));
        return result;
    }
    result.value = quantity->number * unit->factor;
    if (!std::isfinite(*result.value)) {
        result.value.reset();
        result.error = error_at(0, text.size(), fmt::format("duration '{}' is out of range", text));
    }
    return result;
}

UnitResult<double> parse_bandwidth(std::string_view text) {
    UnitResult<double> result;
    std::string_view size_part = text;
    while (!size_part.empty() && is_blank(size_part.back()))
        size_part.remove_suffix(1);
    const std::string low = ascii_lower(size_part);
    for (std::string_view suffix : {"/s", "/sec", "ps"}) {
        if (!std::string_view(low).ends_with(suffix)) continue;
        const std::string_view before = std::string_view(low).substr(0, low.size() - suffix.size());
        // "ps" only after a unit letter ("MBps"); "5ps" would be picoseconds, not a rate.
        if (suffix == "ps" && (before.empty() || before.back() < 'a' || before.back() > 'z'))
            continue;
        size_part = size_part.substr(0, before.size());
        break;
    }
    const auto quantity = split_quantity(size_part, "a bandwidth", result.error);
    if (!quantity) return result;
    const UnitName* unit = find_unit(size_units, quantity->unit);
    if (!unit) {
        result.error = error_at(
            quantity->unit_offset, quantity->unit.size(),
            fmt::format("unknown bandwidth unit '{}' (use e.g. 500M/s; base 1024)", quantity->unit),
            closest_unit(size_units, quantity->unit));
        return result;
    }
    result.value = quantity->number * unit->factor;
    return result;
}

UnitResult<double> parse_probability(std::string_view text) {
    UnitResult<double> result;
    const auto quantity = split_quantity(text, "a probability", result.error);
    if (!quantity) return result;
    const std::size_t whole = quantity->number_offset;
    const std::size_t whole_length = quantity->unit_offset + quantity->unit.size() - whole;
    if (quantity->unit == "%") {
        const double fraction = quantity->number / 100;
        result.error = error_at(
            whole, whole_length, "write a probability as a fraction, not a percentage",
            fraction > 0 && fraction < 1 ? std::optional<std::string>(shortest_decimal(fraction))
                                         : std::nullopt);
        return result;
    }
    if (quantity->unit.starts_with('/')) {
        UnitError ignored;
        const auto denominator = split_quantity(quantity->unit.substr(1), "a number", ignored);
        std::optional<std::string> fixed;
        if (denominator && denominator->unit.empty() && denominator->number > 0 &&
            quantity->number / denominator->number > 0 &&
            quantity->number / denominator->number < 1)
            fixed = shortest_decimal(quantity->number / denominator->number);
        result.error =
            error_at(whole, whole_length, "write a probability as a decimal number, not a fraction",
                     std::move(fixed));
        return result;
    }
    if (!quantity->unit.empty()) {
        result.error = error_at(quantity->unit_offset, quantity->unit.size(),
                                "a probability takes no unit: write e.g. 1e-6 or 0.001");
        return result;
    }
    if (!(quantity->number > 0 && quantity->number < 1)) {
        result.error = error_at(whole, quantity->number_length,
                                fmt::format("probability must lie strictly between 0 and 1, got {}",
                                            text.substr(whole, quantity->number_length)));
        return result;
    }
    result.value = quantity->number;
    return result;
}

} // namespace iosig
