// A pragma's text rebuilt from its tokens, with a map from every byte offset of that text back to a
// source location, so that the signature parser's errors (byte offsets into the text) land on the
// exact characters of the pragma, including fix-its that span several tokens (`size-per-IO(16M)` is
// eight tokens).
#pragma once

#include <clang/Basic/SourceLocation.h>
#include <cstddef>
#include <string>
#include <vector>

namespace iosig::plugin {

class PragmaText {
public:
    // Appends one token's spelling; `leading_space` inserts one space first (never before the first
    // token). `exact` says the spelling is byte-for-byte what the source holds at `location`
    // (false for tokens that needed cleaning, e.g. split by a backslash-newline): offsets inside
    // such a token map to its start.
    void append(const std::string& spelling, clang::SourceLocation location, bool leading_space,
                bool exact);

    const std::string& text() const { return text_; }
    bool empty() const { return pieces_.empty(); }

    // Where the character at `offset` is written; an offset between tokens maps to the next token,
    // one at or past the end to just after the last token.
    clang::SourceLocation at(std::size_t offset) const;
    // The half-open range [offset, offset + length) of the text, as characters of the source. An
    // empty range is the insertion point at `offset`.
    clang::CharSourceRange range(std::size_t offset, std::size_t length) const;

private:
    struct Piece {
        std::size_t offset;
        std::size_t length;
        clang::SourceLocation location;
        bool exact;
    };
    // Just after the character at offset - 1 (the end of a range ending at `offset`).
    clang::SourceLocation end_at(std::size_t offset) const;

    std::string text_;
    std::vector<Piece> pieces_;
};

} // namespace iosig::plugin
