// See pch_sigdefs.hpp.
#include "pch_sigdefs.hpp"

#include <clang/Lex/MacroInfo.h>
#include <clang/Lex/Preprocessor.h>
#include <clang/Lex/PreprocessorOptions.h>
#include <clang/Lex/Token.h>

namespace iosig::plugin {

namespace {

// NAMEs are letters, digits, '_' and '-'; macro names cannot hold '-'. "_" -> "__", "-" -> "_h"
// keeps distinct NAMEs distinct.
std::string macro_name(std::string_view name) {
    std::string macro = "__iosig_sigdef_";
    for (char c : name) {
        if (c == '_')
            macro += "__";
        else if (c == '-')
            macro += "_h";
        else
            macro += c;
    }
    return macro;
}

} // namespace

void store_sigdef(clang::Preprocessor& preprocessor, std::string_view name, const Signature& params,
                  clang::SourceLocation at) {
    const std::string canonical = to_canonical(params);
    // The canonical form is words, digits, '(' ')' '.' and spaces: a literal needs no escapes.
    if (canonical.find_first_of("\"\\\n") != std::string::npos) return;
    clang::Token literal;
    literal.startToken();
    literal.setKind(clang::tok::string_literal);
    preprocessor.CreateString("\"" + canonical + "\"", literal, at, at);
    clang::MacroInfo* macro = preprocessor.AllocateMacroInfo(at);
    macro->setTokens({literal}, preprocessor.getPreprocessorAllocator());
    macro->setDefinitionEndLoc(at);
    // Never reported by -Wunused-macros: that list only holds macros of #define directives.
    macro->setIsUsed(true);
    preprocessor.appendDefMacroDirective(preprocessor.getIdentifierInfo(macro_name(name)), macro,
                                         at);
}

std::optional<StoredSigdef> find_stored_sigdef(clang::Preprocessor& preprocessor,
                                               std::string_view name) {
    const clang::MacroInfo* macro =
        preprocessor.getMacroInfo(preprocessor.getIdentifierInfo(macro_name(name)));
    if (macro == nullptr || macro->getNumTokens() != 1) return std::nullopt;
    const clang::Token& literal = macro->getReplacementToken(0);
    if (!literal.is(clang::tok::string_literal)) return std::nullopt;
    bool invalid = false;
    const std::string spelling = preprocessor.getSpelling(literal, &invalid);
    if (invalid || spelling.size() < 2) return std::nullopt;
    Parsed<Directive> parsed = parse_directive("sigdef " + std::string(name) + " " +
                                               spelling.substr(1, spelling.size() - 2));
    if (!parsed || !parsed.value->name || *parsed.value->name != name) return std::nullopt;
    return StoredSigdef{parsed.value->params, macro->getDefinitionLoc()};
}

std::string precompiled_header_of(const clang::Preprocessor& preprocessor) {
    return preprocessor.getPreprocessorOpts().ImplicitPCHInclude;
}

} // namespace iosig::plugin
