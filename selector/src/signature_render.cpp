// Presenting signature errors to people: caret lines and whole-text corrections (signature.hpp).
#include "iosig/signature.hpp"
#include "signature_scanner.hpp"
#include "signature_spelling.hpp"

#include <algorithm>

namespace iosig {
namespace {

// The text on one line, as a terminal shows it, and the display column where each byte starts.
struct DisplayLine {
    std::string text;
    std::vector<std::size_t> column; // text.size() + 1 entries
};

DisplayLine display_line(std::string_view text) {
    DisplayLine line;
    line.column.reserve(text.size() + 1);
    std::size_t column = 0;
    for (std::size_t i = 0; i < text.size();) {
        const auto code_point = spelling::decode_utf8(text, i);
        const std::size_t length = code_point ? code_point->length : 1;
        for (std::size_t k = 0; k < length; ++k)
            line.column.push_back(column);
        if (!code_point) {
            line.text.push_back('?');
        } else if (text[i] == '\t') {
            line.text.push_back('\t');
        } else if (code_point->value < 0x20 || code_point->value == 0x7F) {
            line.text.push_back(
                ' '); // a newline inside the text must not break the caret alignment
        } else {
            line.text.append(text.substr(i, length));
        }
        column += 1;
        i += length;
    }
    line.column.push_back(column);
    return line;
}

// Blanks up to a display column, copying tabs so that the caret lines up under tabbed text.
std::string indent_to(std::string_view text, const DisplayLine& line, std::size_t offset) {
    std::string out;
    for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
        if (i > 0 && line.column[i] == line.column[i - 1]) continue; // inside one UTF-8 character
        out.push_back(text[i] == '\t' ? '\t' : ' ');
    }
    return out;
}

} // namespace

std::string render_sig_error(std::string_view text, const SigError& error) {
    const DisplayLine line = display_line(text);
    const std::size_t begin = std::min(error.offset, text.size());
    const std::size_t end = std::min(begin + error.length, text.size());
    const std::size_t width = std::max<std::size_t>(1, line.column[end] - line.column[begin]);
    std::string out = error.message + "\n";
    out += "  " + line.text + "\n";
    const std::string indent = "  " + indent_to(text, line, begin);
    out += indent + "^" + std::string(width - 1, '~') + "\n";
    if (error.replacement && !error.replacement->empty()) {
        const std::string& r = *error.replacement;
        const bool blank_edge = sig::is_space(r.front()) || sig::is_space(r.back());
        out += indent + (blank_edge ? "'" + sig::printable(r) + "'" : sig::printable(r)) + "\n";
    }
    return out;
}

std::optional<std::string> apply_replacements(std::string_view text,
                                              const std::vector<SigError>& errors) {
    std::vector<const SigError*> order;
    for (const SigError& error : errors) {
        if (!error.replacement || error.offset > text.size() ||
            error.length > text.size() - error.offset)
            return std::nullopt;
        order.push_back(&error);
    }
    std::ranges::sort(order, [](const SigError* a, const SigError* b) {
        return a->offset != b->offset ? a->offset < b->offset : a < b; // pointers keep input order
    });
    std::string out;
    std::size_t copied = 0;
    for (const SigError* error : order) {
        if (error->offset < copied) return std::nullopt; // overlaps the previous replacement
        out.append(text.substr(copied, error->offset - copied));
        out += *error->replacement;
        copied = error->offset + error->length;
    }
    out.append(text.substr(copied));
    return out;
}

} // namespace iosig
