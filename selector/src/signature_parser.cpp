// The signature grammar (signature_parser.hpp): names, parameters, duplicates and
// contradictions, and the recovery that lets one pass report every problem.
#include "signature_parser.hpp"

#include "signature_spelling.hpp"

#include <fmt/format.h>

namespace iosig::sig {
namespace {

std::string_view why_exclusive(Slot slot) {
    switch (slot) {
    case Slot::visibility:
        return "data is either global (one place for the whole job) or local to a node";
    case Slot::pattern:
        return "a stream is either random or sequential";
    case Slot::persistence:
        return "data either persists or is temporary";
    default:
        return "";
    }
}

bool is_blank(char c) {
    return c == ' ' || c == '\t';
}

} // namespace

Body Parser::parse_body(NameMode mode, std::optional<Word> first) {
    mode_ = mode;
    bool had_item = false; // something a ',' may follow
    bool separated = true; // blanks or a ',' since the last item
    std::optional<std::size_t> pending_comma;

    if (!first && mode != NameMode::none) {
        scanner_.skip_space();
        if (is_word_start(scanner_.peek())) first = scanner_.scan_word();
    }
    if (first) {
        if (mode == NameMode::none || !parse_name(mode, *first)) parse_word(*first);
        had_item = true;
        separated = false;
    } else if (mode == NameMode::required) {
        scanner_.error(scanner_.position(), 0, "sigdef needs a NAME first: sigdef NAME params...");
    }

    for (;;) {
        if (scanner_.skip_space()) separated = true;
        if (scanner_.at_end()) break;
        const std::size_t at = scanner_.position();
        const char c = scanner_.peek();
        if (c == ',') {
            if (!had_item)
                scanner_.error(at, 1, "unexpected ',' before the first parameter", "");
            else if (pending_comma)
                scanner_.error(at, 1, "unexpected second ','", "");
            else
                pending_comma = at;
            scanner_.move_to(at + 1);
            separated = true;
        } else if (c == ')') {
            scanner_.error(at, 1, "unmatched ')'", "");
            scanner_.move_to(at + 1);
        } else if (c == '(') {
            const std::size_t end = group_end(at);
            scanner_.error(at, end - at,
                           "a value in parentheses must follow the parameter it belongs to, e.g. "
                           "size-per-IO(16M)");
            scanner_.move_to(end);
        } else if (is_word_start(c) || is_value_start(c)) {
            if (had_item && !separated)
                scanner_.error(at, 0, "missing space between two parameters", " ");
            if (is_word_start(c)) {
                parse_word(scanner_.scan_word());
            } else {
                const std::size_t end = scanner_.value_token_end(at);
                const std::string value = printable(text_.substr(at, end - at));
                scanner_.error(
                    at, end - at,
                    fmt::format(
                        "'{}' is a value without its parameter: write e.g. size-per-IO({}) or "
                        "totalsize({})",
                        value, value, value));
                scanner_.move_to(end);
            }
            had_item = true;
            separated = false;
            pending_comma.reset();
        } else {
            scanner_.report_stray();
            separated = true;
        }
    }
    if (pending_comma) scanner_.error(*pending_comma, 1, "trailing ','", "");
    return std::move(body_);
}

bool Parser::parse_name(NameMode mode, Word word) {
    if (looks_like_keyword(word.text) || followed_by_group(word) || spelled_apart(word)) {
        if (mode == NameMode::required)
            scanner_.error(
                word.offset, 0,
                fmt::format("sigdef needs a NAME before its parameters; '{}' is a parameter",
                            printable(word.text)));
        return false;
    }
    if (spelling::equals_ignoring_case(word.text, "sig") ||
        spelling::equals_ignoring_case(word.text, "sigdef")) {
        scanner_.error(word.offset, word.length(),
                       fmt::format("'{}' cannot be a NAME: it is a directive keyword", word.text));
        return true;
    }
    body_.name = word.text;
    body_.name_offset = word.offset;
    body_.name_length = word.length();
    return true;
}

void Parser::parse_word(Word word) {
    if (const Keyword* keyword = find_keyword(word.text)) {
        parse_keyword(*keyword, word, true);
        return;
    }
    if (const auto apart = spelled_apart(word)) {
        const std::string_view spelling = apart->keyword->spelling;
        scanner_.error(word.offset, apart->end - word.offset,
                       fmt::format("write '{}' as one word", spelling), std::string(spelling));
        scanner_.move_to(apart->end);
        word.end = apart->end;
        word.text = spelling;
        parse_keyword(*apart->keyword, word, true);
        return;
    }
    parse_unknown_word(word);
}

void Parser::parse_unknown_word(const Word& word) {
    const bool has_group = followed_by_group(word);
    if (mode_ == NameMode::none && (spelling::equals_ignoring_case(word.text, "sig") ||
                                    spelling::equals_ignoring_case(word.text, "sigdef"))) {
        scanner_.error(
            word.offset, word.length(),
            fmt::format("'{}' starts a directive; only parameters are expected here", word.text),
            "");
        return;
    }
    // "size-per-IO16M", "MTTDL20y": the value lost its parentheses.
    for (const Keyword& keyword : keywords()) {
        const std::string_view name = keyword.canonical;
        if (keyword.value == ValueKind::none || word.text.size() <= name.size() ||
            text_.substr(word.offset, word.length()) != word.text ||
            !spelling::equals_ignoring_case(std::string_view(word.text).substr(0, name.size()),
                                            name))
            continue;
        const std::size_t value_at = word.offset + name.size();
        if (!is_value_start(text_[value_at])) continue;
        const std::size_t end = scanner_.value_token_end(value_at);
        const std::string_view written = text_.substr(word.offset, name.size());
        const std::string_view value_text = text_.substr(value_at, end - value_at);
        scanner_.error(word.offset, end - word.offset,
                       fmt::format("{} takes its value in parentheses: {}({})", keyword.spelling,
                                   written, printable(value_text)),
                       fmt::format("{}({})", written, value_text));
        const auto value = parse_value(keyword, value_at, end);
        scanner_.move_to(end);
        note(keyword, word.offset, end, value);
        return;
    }
    if (const Keyword* guess = suggest_keyword(word.text, has_group)) {
        // Only a respelling ("sizeperIO") is certain enough to count for duplicates and
        // contradictions.
        const bool certain = looks_like_keyword(word.text);
        scanner_.error(
            word.offset, word.length(),
            certain ? fmt::format("'{}' is spelled '{}'", printable(word.text), guess->spelling)
                    : fmt::format("unknown parameter '{}'; did you mean '{}'?",
                                  printable(word.text), guess->spelling),
            std::string(guess->spelling));
        parse_keyword(*guess, word, certain);
        return;
    }
    std::string message = fmt::format("unknown parameter '{}'", printable(word.text));
    if (mode_ == NameMode::optional && !body_.name)
        message += " (a signature NAME goes right after 'sig')";
    message += fmt::format("; expected one of: {}", keyword_overview());
    scanner_.error(word.offset, word.length(), std::move(message));
    if (has_group) scanner_.move_to(group_end(scanner_.next_non_space(word.end)));
}

void Parser::parse_keyword(const Keyword& keyword, const Word& word, bool record) {
    const std::size_t next = scanner_.next_non_space(word.end);
    const bool has_group = next < text_.size() && text_[next] == '(';
    if (keyword.value == ValueKind::none) {
        if (has_group) {
            const std::size_t end = group_end(next);
            scanner_.error(next, end - next, fmt::format("'{}' takes no value", keyword.spelling),
                           "");
            scanner_.move_to(end);
        }
        if (record) note(keyword, word.offset, word.end, Value{});
        return;
    }
    if (has_group) {
        const auto value = parse_group(keyword, next);
        if (record) note(keyword, word.offset, scanner_.position(), value);
        return;
    }
    // "size-per-IO 16M", "size-per-IO=16M", "size-per-IO: 16M"
    std::size_t value_at = next;
    if (value_at < text_.size() && (text_[value_at] == '=' || text_[value_at] == ':'))
        value_at = scanner_.next_non_space(value_at + 1);
    if (value_at < text_.size() && is_value_start(text_[value_at])) {
        const std::size_t end = scanner_.value_token_end(value_at);
        const std::string_view value_text = text_.substr(value_at, end - value_at);
        scanner_.error(word.offset, end - word.offset,
                       fmt::format("{} takes its value in parentheses: {}({})", keyword.spelling,
                                   word.text, printable(value_text)),
                       fmt::format("{}({})", word.text, value_text));
        const auto value = parse_value(keyword, value_at, end);
        scanner_.move_to(end);
        if (record) note(keyword, word.offset, end, value);
        return;
    }
    scanner_.error(word.offset, word.length(),
                   fmt::format("{} needs {}: write e.g. {}", keyword.spelling,
                               describe_value(keyword.value), keyword.example));
    if (record) note(keyword, word.offset, word.end, std::nullopt);
}

void Parser::note(const Keyword& keyword, std::size_t offset, std::size_t end,
                  const std::optional<Value>& value) {
    auto& seen = seen_[static_cast<std::size_t>(keyword.slot)];
    if (!seen) {
        seen = Occurrence{&keyword, offset, end, value};
        if (value) apply(keyword, *value);
        return;
    }
    const std::string first = printable(text_.substr(seen->offset, seen->end - seen->offset));
    if (seen->keyword != &keyword) {
        scanner_.error(offset, end - offset,
                       fmt::format("'{}' contradicts the earlier '{}': {}",
                                   printable(text_.substr(offset, end - offset)), first,
                                   why_exclusive(keyword.slot)));
        return;
    }
    if (keyword.value == ValueKind::none) {
        scanner_.error(offset, end - offset, fmt::format("'{}' is given twice", keyword.spelling),
                       "");
        return;
    }
    const bool same = value && seen->value && *seen->value == *value;
    scanner_.error(offset, end - offset,
                   fmt::format("{} is given twice (first as '{}'){}", keyword.spelling, first,
                               same ? "" : ": keep one"),
                   same ? std::optional<std::string>("") : std::nullopt);
}

void Parser::apply(const Keyword& keyword, const Value& value) {
    Signature& s = body_.signature;
    switch (keyword.slot) {
    case Slot::visibility:
        s.visibility = static_cast<Visibility>(keyword.choice);
        break;
    case Slot::pattern:
        s.pattern = static_cast<AccessPattern>(keyword.choice);
        break;
    case Slot::persistence:
        s.persistence = static_cast<Persistence>(keyword.choice);
        break;
    case Slot::size_per_io:
        s.size_per_io = value.bytes;
        break;
    case Slot::total_size:
        s.total_size = value.bytes;
        break;
    case Slot::mttdl:
        s.mttdl_seconds = value.real;
        break;
    case Slot::availability:
        s.availability = value.real;
        break;
    case Slot::archive:
        s.archive = true;
        break;
    case Slot::tamperproof:
        s.tamperproof = true;
        break;
    }
}

std::optional<Parser::SpelledApart> Parser::spelled_apart(const Word& word) const {
    std::string joined = spelling::squeeze(word.text);
    std::size_t at = word.end;
    for (int extra = 0; extra < 2; ++extra) {
        std::size_t next = at;
        while (next < text_.size() && is_blank(text_[next]))
            ++next;
        if (next == at || next >= text_.size() || !is_word_start(text_[next])) break;
        std::size_t end = next;
        while (end < text_.size() && (is_word_char(text_[end]) || text_[end] == '-'))
            ++end;
        joined += spelling::squeeze(text_.substr(next, end - next));
        if (const Keyword* keyword = find_respelled(joined)) return SpelledApart{keyword, end};
        at = end;
    }
    return std::nullopt;
}

bool Parser::followed_by_group(const Word& word) const {
    const std::size_t next = scanner_.next_non_space(word.end);
    return next < text_.size() && text_[next] == '(';
}

std::size_t Parser::group_end(std::size_t open) const {
    for (std::size_t i = open + 1; i < text_.size(); ++i) {
        if (text_[i] == ')') return i + 1;
        if (text_[i] == '(') return i;
    }
    return text_.size();
}

} // namespace iosig::sig
