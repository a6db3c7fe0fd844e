// Values of parameters: the parenthesised group after a keyword and the quantity inside it
// (Parser members; the rest of the grammar is in signature_parser.cpp).
#include "iosig/units.hpp"
#include "signature_parser.hpp"
#include "signature_spelling.hpp"

#include <fmt/format.h>

namespace iosig::sig {

std::optional<Value> Parser::parse_group(const Keyword& keyword, std::size_t open) {
    std::size_t close = std::string_view::npos;
    std::size_t stop = open + 1;
    for (; stop < text_.size(); ++stop) {
        if (text_[stop] == ')') {
            close = stop;
            break;
        }
        if (text_[stop] == '(') break;
    }
    struct Span {
        std::size_t begin, end;
    };
    std::vector<Span> words;
    for (std::size_t i = open + 1; i < stop;) {
        if (is_space(text_[i])) {
            ++i;
            continue;
        }
        std::size_t j = i;
        while (j < stop && !is_space(text_[j]))
            ++j;
        words.push_back({i, j});
        i = j;
    }
    if (words.empty()) {
        if (close != std::string_view::npos) {
            scanner_.error(open, close + 1 - open,
                           fmt::format("{} needs {} between the parentheses, e.g. {}",
                                       keyword.spelling, describe_value(keyword.value),
                                       keyword.example));
            scanner_.move_to(close + 1);
        } else {
            scanner_.error(open, stop - open,
                           fmt::format("unterminated '{}(': expected {} and ')'", keyword.spelling,
                                       describe_value(keyword.value)));
            scanner_.move_to(stop);
        }
        return std::nullopt;
    }

    const auto word_text = [&](Span span) {
        return text_.substr(span.begin, span.end - span.begin);
    };
    const auto is_bare_number = [&](Span span) {
        const std::string_view w = word_text(span);
        return is_value_start(w.front()) && (is_digit(w.back()) || w.back() == '.');
    };
    const auto is_keyword = [&](Span span) { return looks_like_keyword(word_text(span)); };
    const auto is_unit = [&](Span span) {
        const std::string_view w = word_text(span);
        for (char c : w)
            if (is_digit(c) || c == '(' || c == ')') return false;
        return (is_letter(w.front()) || w.front() == '%' || !is_ascii(w.front())) &&
               !is_keyword(span);
    };

    // "16 M": the number and its unit may stand apart.
    std::size_t used = 1;
    if (words.size() >= 2 && is_bare_number(words[0]) && is_unit(words[1])) used = 2;
    const std::size_t value_begin = words[0].begin;
    const std::size_t value_end = words[used - 1].end;
    const std::string value_text = printable(text_.substr(value_begin, value_end - value_begin));

    if (close != std::string_view::npos && used == words.size()) {
        auto value = parse_value(keyword, value_begin, value_end);
        scanner_.move_to(close + 1);
        return value;
    }
    if (close != std::string_view::npos && !is_keyword(words[used])) {
        const std::size_t extra = words[used].begin;
        scanner_.error(extra, words.back().end - extra,
                       fmt::format("unexpected '{}' in {}(...): it takes one value",
                                   printable(text_.substr(extra, words.back().end - extra)),
                                   keyword.spelling),
                       "");
        auto value = parse_value(keyword, value_begin, value_end);
        scanner_.move_to(close + 1);
        return value;
    }
    // No ')' before the next parameter or the end: close the value where it ends.
    scanner_.error(value_end, 0,
                   fmt::format("missing ')' after '{}({}'", keyword.spelling, value_text), ")");
    auto value = parse_value(keyword, value_begin, value_end);
    scanner_.move_to(value_end);
    return value;
}

std::optional<Value> Parser::parse_value(const Keyword& keyword, std::size_t begin,
                                         std::size_t end) {
    const std::string_view text = text_.substr(begin, end - begin);
    for (std::size_t i = begin; i < end; ++i) {
        if (is_ascii(text_[i])) continue;
        const auto code_point = spelling::decode_utf8(text_, i);
        if (!code_point) break;
        const auto ascii = spelling::ascii_lookalike(code_point->value);
        if (ascii && (*ascii == " " || ascii->empty())) {
            scanner_.error(i, code_point->length,
                           fmt::format("{} in the value of {}: use a plain space",
                                       spelling::code_point_name(code_point->value),
                                       keyword.spelling),
                           " ");
            return std::nullopt;
        }
        i += code_point->length - 1;
    }
    const auto report = [&](const UnitError& error) {
        scanner_.error(begin + error.offset, error.length,
                       fmt::format("{}: {}", keyword.spelling, error.message), error.replacement);
    };
    switch (keyword.value) {
    case ValueKind::size: {
        const auto size = parse_size(text);
        if (!size) {
            report(size.error);
            return std::nullopt;
        }
        if (*size.value == 0) {
            scanner_.error(begin, end - begin,
                           fmt::format("{} must be at least 1 byte", keyword.spelling));
            return std::nullopt;
        }
        return Value{*size.value, 0};
    }
    case ValueKind::duration: {
        if (is_value_start(text.front()) && (is_digit(text.back()) || text.back() == '.')) {
            scanner_.error(end, 0,
                           fmt::format("{} needs a unit (s, min, h, d, w or y): did you mean {}y?",
                                       keyword.spelling, printable(text)),
                           "y");
            return std::nullopt;
        }
        const auto seconds = parse_duration_seconds(text);
        if (!seconds) {
            report(seconds.error);
            return std::nullopt;
        }
        if (!(*seconds.value > 0)) {
            scanner_.error(begin, end - begin,
                           fmt::format("{} must be longer than zero", keyword.spelling));
            return std::nullopt;
        }
        return Value{0, *seconds.value};
    }
    case ValueKind::probability: {
        const auto probability = parse_probability(text);
        if (!probability) {
            report(probability.error);
            return std::nullopt;
        }
        return Value{0, *probability.value};
    }
    case ValueKind::none:
        break;
    }
    return std::nullopt;
}

} // namespace iosig::sig
