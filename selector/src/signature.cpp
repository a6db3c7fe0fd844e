// The signature language's entry points (signature.hpp): parameters, directives, NAME resolution,
// overrides and the canonical text. The grammar itself is in signature_parser.cpp.
#include "iosig/signature.hpp"

#include "iosig/units.hpp"
#include "signature_keywords.hpp"
#include "signature_parser.hpp"
#include "signature_spelling.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <tuple>

namespace iosig {
namespace {

using sig::Parser;

template <class T>
Parsed<T> finish(std::optional<T> value, std::vector<SigError> errors) {
    Parsed<T> parsed;
    // Text order; errors at one offset keep the order they were found in. (Not std::stable_sort:
    // libstdc++ 12 implements it with the deprecated get_temporary_buffer, an error under -Werror.)
    std::vector<std::size_t> order(errors.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::ranges::sort(order, [&](std::size_t a, std::size_t b) {
        return std::tie(errors[a].offset, a) < std::tie(errors[b].offset, b);
    });
    std::vector<SigError> sorted;
    sorted.reserve(errors.size());
    for (std::size_t i : order)
        sorted.push_back(std::move(errors[i]));
    errors = std::move(sorted);
    parsed.errors = std::move(errors);
    if (parsed.errors.empty()) parsed.value = std::move(value);
    return parsed;
}

bool is_word(const sig::Word& word, std::string_view keyword) {
    return spelling::equals_ignoring_case(word.text, keyword);
}

// "#pragma sig ..." pasted whole: point at the prefix and parse the rest.
void skip_pragma_prefix(Parser& parser) {
    sig::Scanner& scanner = parser.scanner();
    scanner.skip_space();
    if (scanner.peek() != '#') return;
    const std::size_t start = scanner.position();
    std::size_t at = scanner.next_non_space(start + 1);
    const std::string_view text = scanner.text();
    if (!spelling::equals_ignoring_case(text.substr(at, 6), "pragma")) return;
    at = scanner.next_non_space(at + 6);
    scanner.error(start, at - start,
                  "leave out '#pragma': the directive starts with 'sig' or 'sigdef'", "");
    scanner.move_to(at);
}

std::string join_parameters(const std::string& head, const std::string& parameters) {
    if (parameters.empty()) return head;
    return head + " " + parameters;
}

} // namespace

Parsed<Signature> parse_signature(std::string_view text) {
    std::vector<SigError> errors;
    Parser parser(text, errors);
    sig::Body body = parser.parse_body(sig::NameMode::none);
    return finish(std::optional<Signature>(body.signature), std::move(errors));
}

Parsed<Directive> parse_directive(std::string_view text) {
    std::vector<SigError> errors;
    Parser parser(text, errors);
    sig::Scanner& scanner = parser.scanner();
    skip_pragma_prefix(parser);
    scanner.skip_space();

    Directive directive;
    std::optional<sig::Word> first;
    if (scanner.at_end()) {
        scanner.error(scanner.position(), 0,
                      "expected a directive: sig [NAME] params... or sigdef NAME params...");
    } else if (!sig::is_word_start(scanner.peek())) {
        scanner.error(scanner.position(), 0, "a directive starts with 'sig' or 'sigdef'");
    } else {
        sig::Word word = scanner.scan_word();
        if (is_word(word, "sig")) {
            directive.kind = DirectiveKind::sig;
        } else if (is_word(word, "sigdef")) {
            directive.kind = DirectiveKind::sigdef;
        } else if (spelling::edit_distance(spelling::ascii_lower(word.text), "sigdef") <= 2 &&
                   word.text.size() > 4) {
            scanner.error(word.offset, word.length(),
                          fmt::format("unknown directive '{}'; did you mean 'sigdef'?",
                                      sig::printable(word.text)),
                          "sigdef");
            directive.kind = DirectiveKind::sigdef;
        } else if (spelling::edit_distance(spelling::ascii_lower(word.text), "sig") <= 1 &&
                   word.text.size() <= 4) {
            scanner.error(word.offset, word.length(),
                          fmt::format("unknown directive '{}'; did you mean 'sig'?",
                                      sig::printable(word.text)),
                          "sig");
        } else {
            // Parameters without a directive keyword: say so, then check them as a `sig`.
            scanner.error(word.offset, 0, "a directive starts with 'sig' or 'sigdef'", "sig ");
            first = std::move(word);
        }
    }
    const auto mode =
        directive.kind == DirectiveKind::sigdef ? sig::NameMode::required : sig::NameMode::optional;
    sig::Body body = parser.parse_body(mode, std::move(first));
    directive.name = std::move(body.name);
    directive.name_offset = body.name_offset;
    directive.params = body.signature;
    return finish(std::optional<Directive>(std::move(directive)), std::move(errors));
}

Parsed<Signature> resolve_sig(std::string_view text, const SigdefTable& table) {
    std::vector<SigError> errors;
    Parser parser(text, errors);
    sig::Scanner& scanner = parser.scanner();
    skip_pragma_prefix(parser);
    scanner.skip_space();
    std::optional<sig::Word> first;
    if (sig::is_word_start(scanner.peek())) {
        sig::Word word = scanner.scan_word();
        if (is_word(word, "sigdef"))
            scanner.error(word.offset, word.length(),
                          "expected a use of a signature ('sig'), not a definition", "sig");
        else if (!is_word(word, "sig"))
            first = std::move(word);
    }
    sig::Body body = parser.parse_body(sig::NameMode::optional, std::move(first));

    const Signature* base = nullptr;
    if (body.name) {
        base = table.find(*body.name);
        if (!base) {
            std::vector<std::string_view> names;
            for (const auto& [name, definition] : table.all())
                names.push_back(name);
            std::optional<std::string> guess;
            for (std::string_view name : names)
                if (spelling::equals_ignoring_case(name, *body.name)) guess = std::string(name);
            if (!guess)
                if (const auto index = spelling::closest(*body.name, names))
                    guess = std::string(names[*index]);
            std::string message;
            if (guess) {
                message =
                    fmt::format("unknown signature '{}'; did you mean '{}'?", *body.name, *guess);
            } else if (const sig::Keyword* keyword = sig::suggest_keyword(*body.name, false)) {
                guess = std::string(keyword->spelling);
                message = fmt::format(
                    "'{}' is neither a parameter nor a defined signature; did you mean '{}'?",
                    *body.name, keyword->spelling);
            } else {
                message =
                    fmt::format("'{}' is neither a parameter nor a defined signature", *body.name);
                if (!names.empty()) {
                    const std::size_t shown = std::min<std::size_t>(names.size(), 8);
                    message += fmt::format(
                        " (defined: {}{})",
                        fmt::join(names.begin(), names.begin() + static_cast<long>(shown), ", "),
                        shown < names.size() ? ", ..." : "");
                }
            }
            scanner.error(body.name_offset, body.name_length, std::move(message), std::move(guess));
        }
    }
    return finish(
        std::optional<Signature>(apply_overrides(base ? *base : Signature{}, body.signature)),
        std::move(errors));
}

Signature apply_overrides(Signature base, const Signature& overrides) {
    if (overrides.visibility != Visibility::unspecified) base.visibility = overrides.visibility;
    if (overrides.pattern != AccessPattern::unspecified) base.pattern = overrides.pattern;
    if (overrides.persistence != Persistence::unspecified) base.persistence = overrides.persistence;
    if (overrides.size_per_io) base.size_per_io = overrides.size_per_io;
    if (overrides.total_size) base.total_size = overrides.total_size;
    if (overrides.mttdl_seconds) base.mttdl_seconds = overrides.mttdl_seconds;
    if (overrides.availability) base.availability = overrides.availability;
    base.archive = base.archive || overrides.archive;
    base.tamperproof = base.tamperproof || overrides.tamperproof;
    return base;
}

std::string to_canonical(const Signature& signature) {
    std::vector<std::string> parts;
    if (signature.visibility == Visibility::global) parts.emplace_back("global");
    if (signature.visibility == Visibility::local) parts.emplace_back("local");
    if (signature.pattern == AccessPattern::random) parts.emplace_back("random");
    if (signature.pattern == AccessPattern::sequential) parts.emplace_back("sequential");
    if (signature.persistence == Persistence::persist) parts.emplace_back("persist");
    if (signature.persistence == Persistence::temp) parts.emplace_back("temp");
    if (signature.size_per_io)
        parts.push_back(fmt::format("size-per-io({})", format_size(*signature.size_per_io)));
    if (signature.total_size)
        parts.push_back(fmt::format("totalsize({})", format_size(*signature.total_size)));
    if (signature.mttdl_seconds)
        parts.push_back(fmt::format("mttdl({})", format_duration(*signature.mttdl_seconds)));
    if (signature.availability)
        parts.push_back(
            fmt::format("availability({})", format_probability(*signature.availability)));
    if (signature.archive) parts.emplace_back("archive");
    if (signature.tamperproof) parts.emplace_back("tamperproof");
    return fmt::format("{}", fmt::join(parts, " "));
}

std::string to_canonical(const Directive& directive) {
    std::string head = directive.kind == DirectiveKind::sigdef ? "sigdef" : "sig";
    if (directive.name) head += " " + *directive.name;
    return join_parameters(head, to_canonical(directive.params));
}

bool SigdefTable::define(std::string name, Signature signature) {
    return definitions_.emplace(std::move(name), signature).second;
}

const Signature* SigdefTable::find(std::string_view name) const {
    const auto found = definitions_.find(name);
    return found == definitions_.end() ? nullptr : &found->second;
}

} // namespace iosig
