// The signature grammar: a list of parameters, optionally preceded by a NAME (internal; the public
// entry points are in signature.cpp). Grammar and error catalogue: docs/signatures.md.
#pragma once

#include "iosig/signature.hpp"
#include "signature_keywords.hpp"
#include "signature_scanner.hpp"

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iosig::sig {

enum class NameMode : std::uint8_t {
    none,     // parameters only
    optional, // `sig [NAME] params`
    required, // `sigdef NAME params`
};

// A parameter's value, in the unit the Signature stores.
struct Value {
    std::uint64_t bytes = 0; // sizes
    double real = 0;         // durations (seconds), probabilities
    friend bool operator==(const Value&, const Value&) = default;
};

struct Body {
    Signature signature; // the parameters written (complete only if no error was reported)
    std::optional<std::string> name;
    std::size_t name_offset = 0;
    std::size_t name_length = 0;
};

class Parser {
public:
    Parser(std::string_view text, std::vector<SigError>& errors)
        : text_(text), scanner_(text, errors) {}

    Scanner& scanner() { return scanner_; }

    // Parses from the scanner's position to the end of the text. `first` is a word the caller has
    // scanned already (while looking for a directive keyword) and that belongs to the body.
    Body parse_body(NameMode mode, std::optional<Word> first = std::nullopt);

private:
    struct Occurrence {
        const Keyword* keyword = nullptr;
        std::size_t offset = 0, end = 0; // as written, for messages
        std::optional<Value> value;      // a valid value; Value{} for flags
    };
    struct SpelledApart {
        const Keyword* keyword;
        std::size_t end;
    };

    bool parse_name(NameMode mode, Word word);
    void parse_word(Word word);
    void parse_keyword(const Keyword& keyword, const Word& word, bool record);
    void parse_unknown_word(const Word& word);
    std::optional<Value> parse_group(const Keyword& keyword, std::size_t open);
    std::optional<Value> parse_value(const Keyword& keyword, std::size_t begin, std::size_t end);
    void note(const Keyword& keyword, std::size_t offset, std::size_t end,
              const std::optional<Value>& value);
    void apply(const Keyword& keyword, const Value& value);
    std::optional<SpelledApart> spelled_apart(const Word& word) const;
    bool followed_by_group(const Word& word) const;
    std::size_t group_end(std::size_t open) const;

    std::string_view text_;
    Scanner scanner_;
    NameMode mode_ = NameMode::none;
    Body body_;
    std::array<std::optional<Occurrence>, slot_count> seen_;
};

} // namespace iosig::sig
