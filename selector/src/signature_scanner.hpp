// Character-level scanning of signature text: blanks, words with their hyphens, stray characters
// (internal to the signature parser).
#pragma once

#include "iosig/signature.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iosig::sig {

inline bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}
inline bool is_digit(char c) {
    return c >= '0' && c <= '9';
}
inline bool is_letter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
inline bool is_word_start(char c) {
    return is_letter(c) || c == '_';
}
inline bool is_word_char(char c) {
    return is_word_start(c) || is_digit(c);
}
inline bool is_value_start(char c) {
    return is_digit(c) || c == '.';
}
inline bool is_ascii(char c) {
    return static_cast<unsigned char>(c) < 0x80;
}

// A keyword or NAME as written. Parts joined by '-' may have blanks around the '-' (Clang hands
// pragma tokens over one by one: "size - per - IO"); `text` has them removed.
struct Word {
    std::size_t offset = 0;
    std::size_t end = 0;
    std::string text;
    std::size_t length() const { return end - offset; }
};

// Appends to the errors it is given: look-alike characters (a typographic dash inside a word, a
// no-break space) are reported once, where the scanner first consumes them.
class Scanner {
public:
    Scanner(std::string_view text, std::vector<SigError>& errors) : text_(text), errors_(errors) {}

    std::string_view text() const { return text_; }
    std::size_t position() const { return position_; }
    void move_to(std::size_t position) { position_ = position; }
    bool at_end() const { return position_ >= text_.size(); }
    char peek() const { return at_end() ? '\0' : text_[position_]; }

    // Skips blanks (and reports non-ASCII spaces); true if there were any.
    bool skip_space();
    // Where the next non-blank character is, from `from`, reporting nothing.
    std::size_t next_non_space(std::size_t from) const;

    // Precondition: is_word_start(peek()).
    Word scan_word();
    // A run that starts like a number ("16M", "1e-6", "20years"), up to a blank, '(', ')' or ','.
    std::size_t value_token_end(std::size_t from) const;
    // Consumes one character that cannot start anything (punctuation, a stray non-ASCII character,
    // a byte that is not UTF-8) and reports it.
    void report_stray();

    void error(std::size_t offset, std::size_t length, std::string message,
               std::optional<std::string> replacement = std::nullopt);

private:
    // The length of a hyphen at `at` ('-' or a typographic dash), or 0.
    std::size_t hyphen_length(std::size_t at) const;
    std::size_t lookalike_space_length(std::size_t at) const;

    std::string_view text_;
    std::vector<SigError>& errors_;
    std::size_t position_ = 0;
};

// Text safe to quote in a message: control characters and bytes >= 0x80 as \xNN.
std::string printable(std::string_view text);

} // namespace iosig::sig
