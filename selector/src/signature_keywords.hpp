// The parameters of the signature language and how misspellings map onto them (internal).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace iosig::sig {

// Parameters that exclude each other share a slot: a second entry for a slot is a duplicate (same
// parameter) or a contradiction (the other choice).
enum class Slot : std::uint8_t {
    visibility,
    pattern,
    persistence,
    size_per_io,
    total_size,
    mttdl,
    availability,
    archive,
    tamperproof,
};
inline constexpr std::size_t slot_count = 9;

enum class ValueKind : std::uint8_t { none, size, duration, probability };

struct Keyword {
    std::string_view canonical; // lower case, as to_canonical writes it
    std::string_view spelling;  // as the paper writes it; offered in suggestions
    Slot slot;
    std::uint8_t choice; // the enum value for choice slots (Visibility::global, ...), else 0
    ValueKind value;
    std::string_view example; // "size-per-IO(16M)"
};

std::span<const Keyword> keywords();

// Exact keyword, case-insensitively ("Size-Per-IO"); nullptr otherwise.
const Keyword* find_keyword(std::string_view word);

// The keyword a wrong word most probably meant, or nullptr: same letters without '-'/'_'
// ("sizeperIO", "size_per_io"), a common synonym ("tmp", "persistent", "shared", "chunksize"), a
// prefix ("seq", "persistently") or a typo ("sequental"). `takes_value` says whether the word is
// followed by a parenthesised value, which favours keywords that take one.
const Keyword* suggest_keyword(std::string_view word, bool takes_value);

// The keyword `word` spells once case, '-', '_' and blanks are ignored ("Size_Per_IO"), or nullptr.
const Keyword* find_respelled(std::string_view word);
// Whether find_respelled finds a keyword (such a word cannot be a NAME).
bool looks_like_keyword(std::string_view word);

// A human description of the expected value: "a size such as 16M".
std::string_view describe_value(ValueKind kind);

// The list used in "expected one of ..." messages.
std::string_view keyword_overview();

} // namespace iosig::sig
