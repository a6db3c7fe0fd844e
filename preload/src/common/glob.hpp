// Path patterns of rule files: `*` and `?` stay inside one path component, `**` crosses
// directories,
// `**/` also matches no directory at all, `[abc]`, `[a-z]`, `[!x]` are character classes and `\`
// escapes. A pattern that does not start with `/` may match at any directory boundary (`*.tmp` =
// `**/*.tmp`).
//
// Matching runs a compiled NFA over the text with a fixed-size state set on the stack: linear in
// the path length, no backtracking blow-up, no allocation (it runs inside intercepted open calls).
#pragma once

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iosig::preload {

struct GlobError {
    std::size_t offset = 0; // into the pattern text
    std::string message;
};

class Glob {
public:
    static constexpr std::size_t max_tokens = 511;

    // nullopt and `error` set when the pattern is malformed (unclosed class, too long, empty).
    static std::optional<Glob> compile(std::string_view pattern, GlobError* error = nullptr);

    // `path` is absolute and lexically normalized (no `.`, `..`, `//`).
    bool matches(std::string_view path) const noexcept;

    const std::string& text() const { return text_; }
    // Specificity (docs/preload.md, "Which rule wins"): literal characters, then fewer wildcards.
    std::size_t literal_count() const { return literals_; }
    std::size_t wildcard_count() const { return wildcards_; }

private:
    // `**/` is two tokens: an entry that may skip it (zero directories) and a body that loops over
    // any character and leaves only after a '/'.
    enum class Kind : std::uint8_t {
        literal,
        any_char,
        star,
        double_star,
        directories_entry,
        directories_body,
        char_class
    };
    struct Token {
        Kind kind;
        unsigned char ch = 0;
        std::uint16_t class_index = 0;
    };

    std::string text_;
    std::vector<Token> tokens_;
    std::vector<std::bitset<256>> classes_;
    std::size_t literals_ = 0;
    std::size_t wildcards_ = 0;
};

} // namespace iosig::preload
