// `#pragma sigdef NAME params...` and `#pragma sig [NAME] params...`: rebuild the text from the
// tokens, parse it with the selector's parser, report its errors at the exact characters (with
// fix-its), keep sigdefs from their definition to the end of the translation unit, and queue each
// sig for the AST consumer (consumer.cpp), which applies it to the next statement.
#include "pch_sigdefs.hpp"
#include "pragma_text.hpp"
#include "state.hpp"

#include <algorithm>
#include <clang/Basic/DiagnosticLex.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Lex/Preprocessor.h>
#include <exception>
#include <memory>
#include <optional>
#include <vector>

namespace iosig::plugin {

void PragmaText::append(const std::string& spelling, clang::SourceLocation location,
                        bool leading_space, bool exact) {
    if (spelling.empty()) return;
    if (leading_space && !text_.empty()) text_ += ' ';
    pieces_.push_back(Piece{text_.size(), spelling.size(), location, exact});
    text_ += spelling;
}

clang::SourceLocation PragmaText::at(std::size_t offset) const {
    for (const Piece& piece : pieces_) {
        if (offset < piece.offset) return piece.location; // in the space before this token
        if (offset < piece.offset + piece.length)
            return piece.exact
                       ? piece.location.getLocWithOffset(
                             static_cast<clang::SourceLocation::IntTy>(offset - piece.offset))
                       : piece.location;
    }
    return end_at(text_.size());
}

clang::SourceLocation PragmaText::end_at(std::size_t offset) const {
    if (pieces_.empty()) return {};
    if (offset == 0) return pieces_.front().location;
    const std::size_t last = offset - 1;
    const Piece* owner = &pieces_.front();
    for (const Piece& piece : pieces_) {
        if (piece.offset > last) break;
        owner = &piece;
    }
    const std::size_t inside = std::min(last - owner->offset, owner->length - 1);
    if (!owner->exact) return owner->location.getLocWithOffset(1);
    return owner->location.getLocWithOffset(static_cast<clang::SourceLocation::IntTy>(inside + 1));
}

clang::CharSourceRange PragmaText::range(std::size_t offset, std::size_t length) const {
    const clang::SourceLocation begin = at(offset);
    if (length == 0) return clang::CharSourceRange::getCharRange(begin, begin);
    return clang::CharSourceRange::getCharRange(begin, end_at(offset + length));
}

namespace {

// Reads the pragma's line: its name as `keyword` (the directive keyword the parser expects), then
// the rest of the tokens. Macros are not expanded: the text is exactly what is written, as for
// every other compiler that only sees an unknown pragma. `_Pragma` in a macro gives a parameterised
// signature instead (docs/plugin.md).
PragmaText read_pragma(clang::Preprocessor& pp, const clang::Token& name, llvm::StringRef keyword) {
    PragmaText text;
    llvm::SmallString<64> buffer;
    bool invalid = false;
    const llvm::StringRef written = pp.getSpelling(name, buffer, &invalid);
    text.append(keyword.str(), name.getLocation(), false,
                !invalid && written.size() == keyword.size() && !name.needsCleaning());
    clang::Token token;
    pp.LexUnexpandedToken(token);
    while (!token.isOneOf(clang::tok::eod, clang::tok::eof)) {
        const llvm::StringRef spelling = pp.getSpelling(token, buffer, &invalid);
        if (!invalid)
            text.append(spelling.str(), token.getLocation(), token.hasLeadingSpace(),
                        !token.needsCleaning());
        pp.LexUnexpandedToken(token);
    }
    return text;
}

void report_errors(PluginDiagnostics& diagnostics, const PragmaText& text,
                   const std::vector<SigError>& errors) {
    for (const SigError& error : errors) {
        const clang::CharSourceRange range = text.range(error.offset, error.length);
        auto builder = diagnostics.signature_error(range.getBegin());
        builder << error.message;
        if (error.length > 0) builder << range;
        if (error.replacement) {
            if (error.length == 0)
                builder << clang::FixItHint::CreateInsertion(range.getBegin(), *error.replacement);
            else
                builder << clang::FixItHint::CreateReplacement(range, *error.replacement);
        }
    }
}

// Where `name` is defined: in this TU, or in a precompiled header (then it is defined here too).
std::optional<clang::SourceLocation> find_sigdef(PluginState& state, const std::string& name) {
    if (auto known = state.sigdef_names.find(name); known != state.sigdef_names.end())
        return known->second;
    std::optional<StoredSigdef> stored = find_stored_sigdef(state.instance.getPreprocessor(), name);
    if (!stored) return std::nullopt;
    state.sigdefs.define(name, stored->params);
    state.sigdef_names[name] = stored->name;
    return stored->name;
}

void handle_sigdef(PluginState& state, const PragmaText& text) {
    Parsed<Directive> parsed = parse_directive(text.text());
    report_errors(state.diagnostics, text, parsed.errors);
    if (!parsed || !parsed.value->name) return;
    const Directive& directive = *parsed.value;
    const std::string& name = *directive.name;
    const clang::CharSourceRange name_range = text.range(directive.name_offset, name.size());
    if (std::optional<clang::SourceLocation> previous = find_sigdef(state, name)) {
        state.diagnostics.redefinition(name_range.getBegin()) << name << name_range;
        state.diagnostics.previous_definition(*previous);
        return;
    }
    state.sigdefs.define(name, directive.params);
    state.sigdef_names[name] = name_range.getBegin();
    store_sigdef(state.instance.getPreprocessor(), name, directive.params, name_range.getBegin());
}

void handle_sig(PluginState& state, const PragmaText& text, clang::SourceLocation introducer) {
    // A NAME this TU has not defined may come from its precompiled header.
    Parsed<Directive> written = parse_directive(text.text());
    std::optional<std::string> name;
    if (written && written.value->name) name = written.value->name;
    const bool defined = !name || find_sigdef(state, *name).has_value();
    Parsed<Signature> resolved = resolve_sig(text.text(), state.sigdefs);
    report_errors(state.diagnostics, text, resolved.errors);
    if (!defined) {
        const std::string pch = precompiled_header_of(state.instance.getPreprocessor());
        if (!pch.empty())
            state.diagnostics.not_rewritable(text.at(written.value->name_offset))
                << "the sigdefs of precompiled header '" + pch +
                       "' are seen only if it was built with the iosig plugin";
    }
    SigPragma pragma;
    pragma.introducer = introducer;
    pragma.keyword = text.at(0);
    if (resolved) pragma.canonical = to_canonical(*resolved.value);
    state.pragmas.push_back(std::move(pragma));
}

void handle(PluginState& state, DirectiveKind kind, const PragmaText& text,
            clang::SourceLocation introducer) {
    try {
        if (kind == DirectiveKind::sigdef)
            handle_sigdef(state, text);
        else
            handle_sig(state, text, introducer);
    } catch (const std::exception& failure) {
        state.diagnostics.internal_error(text.at(0)) << failure.what();
    }
}

llvm::StringRef keyword_of(DirectiveKind kind) {
    return kind == DirectiveKind::sigdef ? "sigdef" : "sig";
}

class SignaturePragmaHandler final : public clang::PragmaHandler {
public:
    SignaturePragmaHandler(DirectiveKind kind, std::shared_ptr<PluginState> state)
        : clang::PragmaHandler(keyword_of(kind)), kind_(kind), state_(std::move(state)) {}

    void HandlePragma(clang::Preprocessor& pp, clang::PragmaIntroducer introducer,
                      clang::Token& name) override {
        handle(*state_, kind_, read_pragma(pp, name, keyword_of(kind_)), introducer.Loc);
    }

private:
    DirectiveKind kind_;
    std::shared_ptr<PluginState> state_;
};

// Every pragma no other handler takes. The language's keywords are case-insensitive (`#pragma
// SIG`); a near miss (`#pragma sgi random`, `#pragma sigdeff ckpt temp`) whose rest is a valid
// signature is a typo: an error with a fix-it, then handled as the directive it meant. Anything
// else is what Clang makes of an unknown pragma, -Wunknown-pragmas included.
class UnknownPragmaHandler final : public clang::PragmaHandler {
public:
    explicit UnknownPragmaHandler(std::shared_ptr<PluginState> state)
        : clang::PragmaHandler(llvm::StringRef()), state_(std::move(state)) {}

    void HandlePragma(clang::Preprocessor& pp, clang::PragmaIntroducer introducer,
                      clang::Token& name) override {
        const clang::IdentifierInfo* identifier = name.getIdentifierInfo();
        const std::string written = identifier ? identifier->getName().lower() : std::string();
        for (DirectiveKind kind : {DirectiveKind::sig, DirectiveKind::sigdef}) {
            if (written == keyword_of(kind)) {
                handle(*state_, kind, read_pragma(pp, name, keyword_of(kind)), introducer.Loc);
                return;
            }
        }
        const std::optional<DirectiveKind> meant = near_miss(written);
        if (!meant) {
            pp.Diag(name, clang::diag::warn_pragma_ignored);
            return;
        }
        const PragmaText text = read_pragma(pp, name, keyword_of(*meant));
        if (!parses_cleanly(*meant, text.text())) {
            pp.Diag(name, clang::diag::warn_pragma_ignored);
            return;
        }
        const clang::CharSourceRange range = clang::CharSourceRange::getCharRange(
            name.getLocation(), name.getLocation().getLocWithOffset(name.getLength()));
        state_->diagnostics.pragma_typo(name.getLocation())
            << identifier->getName() << keyword_of(*meant) << range
            << clang::FixItHint::CreateReplacement(range, keyword_of(*meant));
        handle(*state_, *meant, text, introducer.Loc);
        if (*meant == DirectiveKind::sig && !state_->pragmas.empty())
            state_->pragmas.back().canonical.reset(); // claims its statement, applies nothing
    }

private:
    // One edit from `sig`, two from `sigdef`, counting a swap of neighbours as one (`sgi`).
    static std::optional<DirectiveKind> near_miss(llvm::StringRef written) {
        if (written.size() < 2) return std::nullopt;
        if (edits(written, "sig") <= 1) return DirectiveKind::sig;
        if (edits(written, "sigdef") <= 2) return DirectiveKind::sigdef;
        return std::nullopt;
    }

    // Optimal-string-alignment distance (Levenshtein plus adjacent transpositions).
    static std::size_t edits(llvm::StringRef a, llvm::StringRef b) {
        std::vector<std::vector<std::size_t>> d(a.size() + 1,
                                                std::vector<std::size_t>(b.size() + 1));
        for (std::size_t i = 0; i <= a.size(); ++i)
            d[i][0] = i;
        for (std::size_t j = 0; j <= b.size(); ++j)
            d[0][j] = j;
        for (std::size_t i = 1; i <= a.size(); ++i)
            for (std::size_t j = 1; j <= b.size(); ++j) {
                const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
                d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
                if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                    d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
            }
        return d[a.size()][b.size()];
    }

    bool parses_cleanly(DirectiveKind kind, llvm::StringRef text) const {
        try {
            if (kind == DirectiveKind::sigdef) {
                const Parsed<Directive> parsed = parse_directive(text);
                return parsed && parsed.value->name.has_value();
            }
            return resolve_sig(text, state_->sigdefs).errors.empty();
        } catch (const std::exception&) {
            return false;
        }
    }

    std::shared_ptr<PluginState> state_;
};

} // namespace

void add_pragma_handlers(clang::Preprocessor& preprocessor, std::shared_ptr<PluginState> state) {
    preprocessor.AddPragmaHandler(new SignaturePragmaHandler(DirectiveKind::sigdef, state));
    preprocessor.AddPragmaHandler(new SignaturePragmaHandler(DirectiveKind::sig, state));
    preprocessor.AddPragmaHandler(new UnknownPragmaHandler(state));
}

} // namespace iosig::plugin
