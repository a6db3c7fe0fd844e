// Quantities with units, shared by the signature language, the node YAML and every CLI.
//
// Sizes are base 1024 throughout: K = KB = KiB = 1024 B, M = 1024 K, ..., P. A bare number is
// bytes. Decimals are allowed ("1.5G") and rounded to the nearest byte. Durations accept ns, us,
// ms, s, min, h, d, w, y (y = 365.25 d); a bare number is seconds. Bandwidths are a size per second
// ("500M/s", "500MiB/s") or a bare number of bytes per second.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace iosig {

// Why a quantity did not parse; `offset`/`length` locate the offending part inside the input text.
struct UnitError {
    std::size_t offset = 0;
    std::size_t length = 0;
    std::string message;
    std::optional<std::string>
        replacement; // a corrected spelling of [offset, offset+length), if any
};

template <class T>
struct UnitResult {
    std::optional<T> value;
    UnitError error; // meaningful only when !value
    explicit operator bool() const { return value.has_value(); }
};

UnitResult<std::uint64_t> parse_size(std::string_view text);
UnitResult<double> parse_duration_seconds(std::string_view text);
UnitResult<double> parse_bandwidth(std::string_view text);   // bytes per second
UnitResult<double> parse_probability(std::string_view text); // 0 < p < 1, e.g. "1e-6" or "0.001"

// Shortest exact text for the value, such that parse_*(format_*(x)) == x.
std::string format_size(std::uint64_t bytes);       // 16777216 -> "16M", 1000 -> "1000"
std::string format_duration(double seconds);        // 630720000 -> "20y" when exact, else seconds
std::string format_probability(double probability); // shortest round-tripping decimal

// For humans only (tables, explanations): 3 significant digits, "1.50 GiB", "812 MiB/s", "4.2 ms".
std::string human_size(double bytes);
std::string human_bandwidth(double bytes_per_second);
std::string human_duration(double seconds);

inline constexpr double seconds_per_year = 365.25 * 24 * 3600;

} // namespace iosig
