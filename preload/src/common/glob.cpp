#include "glob.hpp"

#include <array>

namespace iosig::preload {
namespace {

// The NFA's state set: bit i = "token i is the next one to match"; bit n = accepted.
class StateSet {
public:
    static constexpr std::size_t words = (Glob::max_tokens + 1 + 63) / 64;

    void set(std::size_t i) { bits_[i / 64] |= std::uint64_t{1} << (i % 64); }
    bool test(std::size_t i) const { return (bits_[i / 64] >> (i % 64)) & 1U; }
    bool empty() const {
        for (auto w : bits_)
            if (w != 0) return false;
        return true;
    }
    template <class F>
    void for_each(std::size_t limit, F&& f) const {
        for (std::size_t w = 0; w < words; ++w) {
            std::uint64_t bits = bits_[w];
            while (bits != 0) {
                const std::size_t i = w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits));
                if (i > limit) return;
                f(i);
                bits &= bits - 1;
            }
        }
    }

private:
    std::array<std::uint64_t, words> bits_{};
};

} // namespace

std::optional<Glob> Glob::compile(std::string_view pattern, GlobError* error) {
    auto fail = [&](std::size_t offset, std::string message) -> std::optional<Glob> {
        if (error) *error = GlobError{offset, std::move(message)};
        return std::nullopt;
    };
    if (pattern.empty()) return fail(0, "empty pattern");

    Glob glob;
    glob.text_ = std::string(pattern);
    // A relative pattern matches at any directory boundary of the absolute path.
    if (pattern.front() != '/') {
        glob.tokens_.push_back({Kind::literal, '/'});
        glob.tokens_.push_back({Kind::directories_entry});
        glob.tokens_.push_back({Kind::directories_body});
    }
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        const bool at_component_start = i == 0 || pattern[i - 1] == '/';
        if (c == '*') {
            if (i + 1 < pattern.size() && pattern[i + 1] == '*') {
                // `**/` at the start of a component may also match zero directories.
                if (at_component_start && i + 2 < pattern.size() && pattern[i + 2] == '/') {
                    glob.tokens_.push_back({Kind::directories_entry});
                    glob.tokens_.push_back({Kind::directories_body});
                    i += 2;
                } else {
                    glob.tokens_.push_back({Kind::double_star});
                    i += 1;
                    while (i + 1 < pattern.size() && pattern[i + 1] == '*')
                        ++i; // `***` = `**`
                }
            } else {
                glob.tokens_.push_back({Kind::star});
            }
            ++glob.wildcards_;
        } else if (c == '?') {
            glob.tokens_.push_back({Kind::any_char});
            ++glob.wildcards_;
        } else if (c == '[') {
            std::bitset<256> members;
            std::size_t j = i + 1;
            bool negate = false;
            if (j < pattern.size() && (pattern[j] == '!' || pattern[j] == '^')) {
                negate = true;
                ++j;
            }
            bool first = true;
            for (; j < pattern.size() && (first || pattern[j] != ']'); ++j) {
                first = false;
                unsigned char lo = static_cast<unsigned char>(pattern[j]);
                if (lo == '\\' && j + 1 < pattern.size())
                    lo = static_cast<unsigned char>(pattern[++j]);
                unsigned char hi = lo;
                if (j + 2 < pattern.size() && pattern[j + 1] == '-' && pattern[j + 2] != ']') {
                    hi = static_cast<unsigned char>(pattern[j + 2]);
                    j += 2;
                    if (hi < lo) return fail(j - 2, "character range is backwards");
                }
                for (unsigned v = lo; v <= hi; ++v)
                    members.set(v);
            }
            if (j >= pattern.size()) return fail(i, "unclosed '[' in pattern");
            if (negate) members.flip();
            members.reset('/'); // a class never matches the directory separator
            glob.classes_.push_back(members);
            glob.tokens_.push_back(
                {Kind::char_class, 0, static_cast<std::uint16_t>(glob.classes_.size() - 1)});
            ++glob.wildcards_;
            i = j;
        } else {
            char literal = c;
            if (c == '\\') {
                if (i + 1 >= pattern.size()) return fail(i, "pattern ends with an escape '\\'");
                literal = pattern[++i];
            }
            glob.tokens_.push_back({Kind::literal, static_cast<unsigned char>(literal)});
            ++glob.literals_;
        }
        if (glob.tokens_.size() > max_tokens) return fail(i, "pattern is too long");
    }
    return glob;
}

bool Glob::matches(std::string_view path) const noexcept {
    const std::size_t n = tokens_.size();
    auto close = [&](StateSet& set) {
        // Epsilon moves: a star may match nothing. Increasing order lets chains of stars propagate.
        for (std::size_t i = 0; i < n; ++i) {
            if (!set.test(i)) continue;
            const Kind kind = tokens_[i].kind;
            if (kind == Kind::star || kind == Kind::double_star) {
                set.set(i + 1);
            } else if (kind == Kind::directories_entry) {
                set.set(i + 1); // into the body
                set.set(i + 2); // or past it: no directory at all
            }
        }
    };
    StateSet current;
    current.set(0);
    close(current);
    for (const char raw : path) {
        const auto c = static_cast<unsigned char>(raw);
        StateSet next;
        current.for_each(n, [&](std::size_t i) {
            if (i == n) return;
            const Token& token = tokens_[i];
            switch (token.kind) {
            case Kind::literal:
                if (c == token.ch) next.set(i + 1);
                break;
            case Kind::any_char:
                if (c != '/') next.set(i + 1);
                break;
            case Kind::char_class:
                if (classes_[token.class_index].test(c)) next.set(i + 1);
                break;
            case Kind::star:
                if (c != '/') next.set(i);
                break;
            case Kind::double_star:
                next.set(i);
                break;
            case Kind::directories_entry:
                break; // only epsilon moves
            case Kind::directories_body:
                next.set(i);
                if (c == '/') next.set(i + 1);
                break;
            }
        });
        if (next.empty()) return false;
        close(next);
        current = next;
    }
    return current.test(n);
}

} // namespace iosig::preload
