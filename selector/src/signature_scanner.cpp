// Character-level scanning of signature text (signature_scanner.hpp).
#include "signature_scanner.hpp"

#include "signature_spelling.hpp"

#include <fmt/format.h>

namespace iosig::sig {
namespace {

std::string describe_character(char32_t code_point) {
    switch (code_point) {
    case 0x00A0:
        return "U+00A0 (no-break space)";
    case 0x2010:
        return "U+2010 (hyphen)";
    case 0x2011:
        return "U+2011 (non-breaking hyphen)";
    case 0x2013:
        return "U+2013 (en dash)";
    case 0x2014:
        return "U+2014 (em dash)";
    case 0x2212:
        return "U+2212 (minus sign)";
    case 0x200B:
        return "U+200B (zero-width space)";
    case 0xFEFF:
        return "U+FEFF (byte-order mark)";
    default:
        return spelling::code_point_name(code_point);
    }
}

} // namespace

void Scanner::error(std::size_t offset, std::size_t length, std::string message,
                    std::optional<std::string> replacement) {
    errors_.push_back(SigError{offset, length, std::move(message), std::move(replacement)});
}

std::size_t Scanner::lookalike_space_length(std::size_t at) const {
    if (at >= text_.size() || is_ascii(text_[at])) return 0;
    const auto code_point = spelling::decode_utf8(text_, at);
    if (!code_point) return 0;
    const auto ascii = spelling::ascii_lookalike(code_point->value);
    return ascii && (*ascii == " " || ascii->empty()) ? code_point->length : 0;
}

bool Scanner::skip_space() {
    const std::size_t start = position_;
    while (!at_end()) {
        if (is_space(peek())) {
            ++position_;
        } else if (const std::size_t length = lookalike_space_length(position_)) {
            const auto code_point = spelling::decode_utf8(text_, position_);
            const bool invisible = spelling::ascii_lookalike(code_point->value)->empty();
            error(position_, length,
                  fmt::format("{} looks like {} but is not: retype it",
                              describe_character(code_point->value),
                              invisible ? "nothing" : "a space"),
                  invisible ? "" : " ");
            position_ += length;
        } else {
            break;
        }
    }
    return position_ != start;
}

std::size_t Scanner::next_non_space(std::size_t from) const {
    while (from < text_.size()) {
        if (is_space(text_[from]))
            ++from;
        else if (const std::size_t length = lookalike_space_length(from))
            from += length;
        else
            break;
    }
    return from;
}

std::size_t Scanner::hyphen_length(std::size_t at) const {
    if (at >= text_.size()) return 0;
    if (text_[at] == '-') return 1;
    if (is_ascii(text_[at])) return 0;
    const auto code_point = spelling::decode_utf8(text_, at);
    if (!code_point) return 0;
    const auto ascii = spelling::ascii_lookalike(code_point->value);
    return ascii && *ascii == "-" ? code_point->length : 0;
}

Word Scanner::scan_word() {
    Word word;
    word.offset = position_;
    for (;;) {
        while (!at_end() && is_word_char(peek()))
            word.text.push_back(text_[position_++]);
        // A hyphen continues the word only when a word character follows it, blanks allowed around.
        std::size_t at = position_;
        while (at < text_.size() && (text_[at] == ' ' || text_[at] == '\t'))
            ++at;
        const std::size_t hyphen = hyphen_length(at);
        if (hyphen == 0) break;
        std::size_t next = at + hyphen;
        while (next < text_.size() && (text_[next] == ' ' || text_[next] == '\t'))
            ++next;
        if (next >= text_.size() || !is_word_start(text_[next])) break;
        if (hyphen > 1) {
            const auto code_point = spelling::decode_utf8(text_, at);
            error(at, hyphen,
                  fmt::format("{} is not the ASCII hyphen '-'",
                              describe_character(code_point->value)),
                  "-");
        }
        word.text.push_back('-');
        position_ = next;
    }
    word.end = position_;
    return word;
}

std::size_t Scanner::value_token_end(std::size_t from) const {
    while (from < text_.size() && !is_space(text_[from]) && text_[from] != '(' &&
           text_[from] != ')' && text_[from] != ',')
        ++from;
    return from;
}

void Scanner::report_stray() {
    const std::size_t start = position_;
    const char c = peek();
    if (is_ascii(c)) {
        // One error for a run of punctuation ("=>", ";;").
        while (!at_end() && is_ascii(peek()) && !is_space(peek()) && !is_word_char(peek()) &&
               peek() != '(' && peek() != ')' && peek() != ',')
            ++position_;
        const std::string_view run = text_.substr(start, position_ - start);
        std::string message = fmt::format("unexpected '{}'", printable(run));
        if (run == ";")
            message += ": a signature needs no terminator";
        else if (run == "#")
            message += ": write the signature without '#pragma'";
        error(start, run.size(), std::move(message), "");
        return;
    }
    const auto code_point = spelling::decode_utf8(text_, position_);
    if (!code_point) {
        ++position_;
        error(start, 1, fmt::format("invalid UTF-8 byte 0x{:02X}", static_cast<unsigned char>(c)),
              "");
        return;
    }
    position_ += code_point->length;
    const auto ascii = spelling::ascii_lookalike(code_point->value);
    if (ascii && (*ascii == "(" || *ascii == ")" || *ascii == ",")) {
        error(start, code_point->length,
              fmt::format("{} looks like '{}' but is not ASCII",
                          describe_character(code_point->value), *ascii),
              std::string(*ascii));
    } else {
        error(start, code_point->length,
              fmt::format("unexpected character {}", describe_character(code_point->value)), "");
    }
}

std::string printable(std::string_view text) {
    std::string out;
    for (std::size_t i = 0; i < text.size();) {
        const auto code_point = spelling::decode_utf8(text, i);
        if (code_point && code_point->value >= 0x20 && code_point->value != 0x7F) {
            out.append(text.substr(i, code_point->length));
            i += code_point->length;
        } else {
            out += fmt::format("\\x{:02X}", static_cast<unsigned char>(text[i]));
            ++i;
        }
    }
    return out;
}

} // namespace iosig::sig
