// Formatting of sizes, durations and probabilities: exact texts that parse back to the same value,
// and rounded texts for people (units.hpp).
#include "iosig/units.hpp"
#include "units_text.hpp"

#include <array>
#include <cmath>
#include <fmt/format.h>
#include <optional>
#include <string>
#include <string_view>

namespace iosig {

namespace units_text {

// "1e-06" -> "1e-6", "1e+20" -> "1e20": fmt's shortest round-trip text with a tidier exponent.
std::string shortest_decimal(double value) {
    std::string text = fmt::format("{}", value);
    const std::size_t e = text.find('e');
    if (e == std::string::npos) return text;
    std::size_t digits = e + 1;
    if (text[digits] == '+')
        text.erase(digits, 1);
    else if (text[digits] == '-')
        ++digits;
    while (digits + 1 < text.size() && text[digits] == '0')
        text.erase(digits, 1);
    return text;
}

} // namespace units_text

namespace {

using units_text::shortest_decimal;

struct TimeUnit {
    std::string_view name;
    double factor;
};

} // namespace

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
    // Shortest text that parses back to exactly `seconds`; on equal length the larger unit wins
    // ("2min", not "120s"). Every candidate is verified, so the round trip holds by construction.
    static constexpr std::array<TimeUnit, 9> units{{{"y", seconds_per_year},
                                                    {"w", 604800},
                                                    {"d", 86400},
                                                    {"h", 3600},
                                                    {"min", 60},
                                                    {"s", 1},
                                                    {"ms", 1e-3},
                                                    {"us", 1e-6},
                                                    {"ns", 1e-9}}};
    if (!std::isfinite(seconds) || seconds <= 0)
        return shortest_decimal(seconds) + "s"; // not parseable
    std::optional<std::string> best;
    for (const auto& u : units) {
        std::string candidate = shortest_decimal(seconds / u.factor) + std::string(u.name);
        if (best && candidate.size() >= best->size()) continue;
        const auto parsed = parse_duration_seconds(candidate);
        if (parsed && *parsed.value == seconds) best = std::move(candidate);
    }
    return best ? *best : shortest_decimal(seconds) + "s";
}

std::string format_probability(double probability) {
    return shortest_decimal(probability);
}

std::string human_size(double bytes) {
    static constexpr std::array<const char*, 6> names{"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    std::size_t unit = 0;
    while (unit + 1 < names.size() && bytes >= 1024) {
        bytes /= 1024;
        ++unit;
    }
    return unit == 0 ? fmt::format("{:.0f} B", bytes)
                     : fmt::format("{:.3g} {}", bytes, names[unit]);
}

std::string human_bandwidth(double bytes_per_second) {
    return human_size(bytes_per_second) + "/s";
}

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
