// Spelling helpers: edit distance, keyboard neighbours, UTF-8 look-alikes (signature_spelling.hpp).
#include "signature_spelling.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <vector>

namespace iosig::spelling {
namespace {

char lower_char(char c) {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

// Row and column of each letter on a QWERTY keyboard (rows shifted as on a real keyboard).
struct KeyPosition {
    double row = -10;
    double column = -10;
};

KeyPosition key_position(char c) {
    static constexpr std::array<std::string_view, 3> rows{"qwertyuiop", "asdfghjkl", "zxcvbnm"};
    static constexpr std::array<double, 3> shift{0, 0.25, 0.75};
    c = lower_char(c);
    for (std::size_t row = 0; row < rows.size(); ++row) {
        const std::size_t column = rows[row].find(c);
        if (column != std::string_view::npos)
            return {static_cast<double>(row), static_cast<double>(column) + shift[row]};
    }
    return {};
}

} // namespace

std::string ascii_lower(std::string_view text) {
    std::string out(text);
    std::ranges::transform(out, out.begin(), lower_char);
    return out;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
    return a.size() == b.size() &&
           std::ranges::equal(a, b, [](char x, char y) { return lower_char(x) == lower_char(y); });
}

std::string squeeze(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text)
        if (c != '-' && c != '_' && c != ' ') out.push_back(lower_char(c));
    return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
    // Three rolling rows of the dynamic-programming table: two back are needed for transpositions.
    std::vector<std::size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
        previous[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        current[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                current[j] = std::min(current[j], before[j - 2] + 1);
        }
        std::swap(before, previous);
        std::swap(previous, current);
    }
    return previous[b.size()];
}

double keyboard_distance(char a, char b) {
    const KeyPosition p = key_position(a), q = key_position(b);
    if (p.row < 0 || q.row < 0) return 100;
    const double dr = p.row - q.row, dc = p.column - q.column;
    return std::sqrt(dr * dr + dc * dc);
}

bool keyboard_adjacent(char a, char b) {
    const double distance = keyboard_distance(a, b);
    return distance > 0 &&
           distance <= 1.26; // same row +-1 key, or the two touching keys of a next row
}

std::size_t typo_tolerance(std::size_t length) {
    return std::max<std::size_t>(1, length / 3);
}

std::optional<std::size_t> closest(std::string_view word,
                                   std::span<const std::string_view> candidates) {
    const std::string key = ascii_lower(word);
    const auto common_prefix = [&](const std::string& candidate) {
        std::size_t n = 0;
        while (n < key.size() && n < candidate.size() && key[n] == candidate[n])
            ++n;
        return n;
    };
    const std::size_t tolerance = typo_tolerance(key.size());
    std::optional<std::size_t> best;
    std::size_t best_distance = 0;
    std::size_t best_prefix = 0;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        const std::string candidate = ascii_lower(candidates[i]);
        if (candidate.size() > key.size() + tolerance || key.size() > candidate.size() + tolerance)
            continue;
        const std::size_t distance = edit_distance(key, candidate);
        if (distance > tolerance || distance >= candidate.size())
            continue; // too far, or nothing in common
        const std::size_t prefix = common_prefix(candidate);
        if (!best || distance < best_distance ||
            (distance == best_distance && prefix > best_prefix)) {
            best = i;
            best_distance = distance;
            best_prefix = prefix;
        }
    }
    return best;
}

std::optional<CodePoint> decode_utf8(std::string_view text, std::size_t offset) {
    if (offset >= text.size()) return std::nullopt;
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[offset + i]); };
    const unsigned char lead = byte(0);
    std::size_t length = 0;
    char32_t value = 0;
    if (lead < 0x80) return CodePoint{lead, 1};
    if ((lead & 0xE0) == 0xC0)
        length = 2, value = lead & 0x1F;
    else if ((lead & 0xF0) == 0xE0)
        length = 3, value = lead & 0x0F;
    else if ((lead & 0xF8) == 0xF0)
        length = 4, value = lead & 0x07;
    else
        return std::nullopt;
    if (offset + length > text.size()) return std::nullopt;
    for (std::size_t i = 1; i < length; ++i) {
        if ((byte(i) & 0xC0) != 0x80) return std::nullopt;
        value = (value << 6) | (byte(i) & 0x3F);
    }
    static constexpr std::array<char32_t, 5> smallest{0, 0, 0x80, 0x800, 0x10000};
    if (value < smallest[length] || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF))
        return std::nullopt; // overlong, out of range or a surrogate
    return CodePoint{value, length};
}

std::optional<std::string_view> ascii_lookalike(char32_t code_point) {
    switch (code_point) {
    case 0x2010:
    case 0x2011:
    case 0x2012:
    case 0x2013:
    case 0x2014:
    case 0x2015:
    case 0x2212:
    case 0xFE63:
    case 0xFF0D:
        return "-";
    case 0x00A0:
    case 0x2002:
    case 0x2003:
    case 0x2007:
    case 0x2009:
    case 0x200A:
    case 0x202F:
    case 0x3000:
        return " ";
    case 0xFF08:
        return "(";
    case 0xFF09:
        return ")";
    case 0xFF0C:
        return ",";
    case 0x200B:
    case 0xFEFF:
        return ""; // zero-width space, byte-order mark
    default:
        return std::nullopt;
    }
}

std::string code_point_name(char32_t code_point) {
    return fmt::format("U+{:04X}", static_cast<std::uint32_t>(code_point));
}

} // namespace iosig::spelling
