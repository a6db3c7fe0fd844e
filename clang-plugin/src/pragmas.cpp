// `#pragma sigdef NAME params...` and `#pragma sig [NAME] params...`: rebuild the text from the tokens,
// parse it with the selector's parser, report its errors at the exact characters (with fix-its), keep
// sigdefs from their definition to the end of the translation unit, and queue each sig for the AST
// consumer (consumer.cpp), which applies it to the next statement.
#include <clang/Basic/SourceManager.h>
#include <clang/Lex/Preprocessor.h>

#include <algorithm>
#include <exception>
#include <memory>

#include "pragma_text.hpp"
#include "state.hpp"

namespace iosig::plugin {

void PragmaText::append(const std::string& spelling, clang::SourceLocation location,
                        bool leading_space, bool exact) {
    if (spelling.empty())
        return;
    if (leading_space && !text_.empty())
        text_ += ' ';
    pieces_.push_back(Piece{text_.size(), spelling.size(), location, exact});
    text_ += spelling;
}

clang::SourceLocation PragmaText::at(std::size_t offset) const {
    for (const Piece& piece : pieces_) {
        if (offset < piece.offset)
            return piece.location;  // in the space before this token
        if (offset < piece.offset + piece.length)
            return piece.exact ? piece.location.getLocWithOffset(
                                     static_cast<clang::SourceLocation::IntTy>(offset - piece.offset))
                               : piece.location;
    }
    return end_at(text_.size());
}

clang::SourceLocation PragmaText::end_at(std::size_t offset) const {
    if (pieces_.empty())
        return {};
    if (offset == 0)
        return pieces_.front().location;
    const std::size_t last = offset - 1;
    const Piece* owner = &pieces_.front();
    for (const Piece& piece : pieces_) {
        if (piece.offset > last)
            break;
        owner = &piece;
    }
    const std::size_t inside = std::min(last - owner->offset, owner->length - 1);
    if (!owner->exact)
        return owner->location.getLocWithOffset(1);
    return owner->location.getLocWithOffset(static_cast<clang::SourceLocation::IntTy>(inside + 1));
}

clang::CharSourceRange PragmaText::range(std::size_t offset, std::size_t length) const {
    const clang::SourceLocation begin = at(offset);
    if (length == 0)
        return clang::CharSourceRange::getCharRange(begin, begin);
    return clang::CharSourceRange::getCharRange(begin, end_at(offset + length));
}

namespace {

// Reads the rest of the pragma line. Macros are not expanded: the text is exactly what is written, as
// for every other compiler that only sees an unknown pragma. `_Pragma` in a macro gives a
// parameterised signature instead (docs/plugin.md).
PragmaText read_pragma(clang::Preprocessor& pp, clang::Token& first) {
    PragmaText text;
    clang::Token token = first;
    llvm::SmallString<64> buffer;
    while (!token.isOneOf(clang::tok::eod, clang::tok::eof)) {
        bool invalid = false;
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
        if (error.length > 0)
            builder << range;
        if (error.replacement) {
            if (error.length == 0)
                builder << clang::FixItHint::CreateInsertion(range.getBegin(), *error.replacement);
            else
                builder << clang::FixItHint::CreateReplacement(range, *error.replacement);
        }
    }
}

void handle_sigdef(PluginState& state, const PragmaText& text) {
    Parsed<Directive> parsed = parse_directive(text.text());
    report_errors(state.diagnostics, text, parsed.errors);
    if (!parsed || !parsed.value->name)
        return;
    const Directive& directive = *parsed.value;
    const std::string& name = *directive.name;
    const clang::CharSourceRange name_range = text.range(directive.name_offset, name.size());
    if (auto previous = state.sigdef_names.find(name); previous != state.sigdef_names.end()) {
        state.diagnostics.redefinition(name_range.getBegin()) << name << name_range;
        state.diagnostics.previous_definition(previous->second);
        return;
    }
    state.sigdefs.define(name, directive.params);
    state.sigdef_names[name] = name_range.getBegin();
}

void handle_sig(PluginState& state, const PragmaText& text, clang::SourceLocation introducer) {
    Parsed<Signature> resolved = resolve_sig(text.text(), state.sigdefs);
    report_errors(state.diagnostics, text, resolved.errors);
    SigPragma pragma;
    pragma.introducer = introducer;
    pragma.keyword = text.at(0);
    if (resolved)
        pragma.canonical = to_canonical(*resolved.value);
    state.pragmas.push_back(std::move(pragma));
}

class SignaturePragmaHandler final : public clang::PragmaHandler {
public:
    SignaturePragmaHandler(llvm::StringRef name, DirectiveKind kind,
                           std::shared_ptr<PluginState> state)
        : clang::PragmaHandler(name), kind_(kind), state_(std::move(state)) {}

    void HandlePragma(clang::Preprocessor& pp, clang::PragmaIntroducer introducer,
                      clang::Token& first) override {
        const PragmaText text = read_pragma(pp, first);
        try {
            if (kind_ == DirectiveKind::sigdef)
                handle_sigdef(*state_, text);
            else
                handle_sig(*state_, text, introducer.Loc);
        } catch (const std::exception& failure) {
            state_->diagnostics.internal_error(first.getLocation()) << failure.what();
        }
    }

private:
    DirectiveKind kind_;
    std::shared_ptr<PluginState> state_;
};

} // namespace

void add_pragma_handlers(clang::Preprocessor& preprocessor, std::shared_ptr<PluginState> state) {
    preprocessor.AddPragmaHandler(new SignaturePragmaHandler("sigdef", DirectiveKind::sigdef, state));
    preprocessor.AddPragmaHandler(new SignaturePragmaHandler("sig", DirectiveKind::sig, state));
}

} // namespace iosig::plugin
