// Spelling helpers for "did you mean" suggestions in signatures and units (internal to the
// selector).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace iosig::spelling {

std::string ascii_lower(std::string_view text);
bool equals_ignoring_case(std::string_view a, std::string_view b);

// Lower-case with '-', '_' and spaces removed: "Size_Per_IO" and "sizeperio" both give "sizeperio".
std::string squeeze(std::string_view text);

// Optimal-string-alignment distance (Levenshtein plus adjacent transpositions), byte-wise.
std::size_t edit_distance(std::string_view a, std::string_view b);

// Distance between two letters' keys on a QWERTY keyboard in key widths (case-insensitive); a large
// number for anything that is not a letter.
double keyboard_distance(char a, char b);
// True if the two letters are neighbours on a QWERTY keyboard.
bool keyboard_adjacent(char a, char b);

// The largest edit distance still taken as a typo of a word of this length: short words tolerate
// one edit, longer ones a third of their length (so "sequental" -> "sequential", but "ab" matches
// nothing two edits away).
std::size_t typo_tolerance(std::size_t length);

// The candidate closest to `word` (case-insensitive) within typo_tolerance, or nothing. Among
// equally close candidates the one sharing the longest prefix with `word` wins ("MBB" -> "MB", not
// "MiB"), then the earlier one, so callers list candidates most likely first.
std::optional<std::size_t> closest(std::string_view word,
                                   std::span<const std::string_view> candidates);

// Decodes one UTF-8 sequence at text[offset]; returns the code point and its length in bytes, or
// nothing for an invalid sequence.
struct CodePoint {
    char32_t value;
    std::size_t length;
};
std::optional<CodePoint> decode_utf8(std::string_view text, std::size_t offset);

// An ASCII stand-in for characters that copy-pasting from PDFs and word processors introduces:
// dashes and the minus sign -> "-", no-break and other spaces -> " ", curly quotes, fullwidth
// parens.
std::optional<std::string_view> ascii_lookalike(char32_t code_point);

// "U+2013" for messages.
std::string code_point_name(char32_t code_point);

} // namespace iosig::spelling
