// What the pragma handlers learn while the preprocessor runs and the AST consumer needs afterwards:
// the sigdefs in scope, every `#pragma sig` in translation-unit order, and the plugin's
// diagnostics.
#pragma once

#include "iosig/signature.hpp"

#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/SourceLocation.h>
#include <llvm/ADT/StringMap.h>
#include <optional>
#include <string>
#include <vector>

namespace clang {
class CompilerInstance;
class Preprocessor;
} // namespace clang

namespace iosig::plugin {

// The one warning the plugin owns, -Wiosig-unused-sig, and how the command line set it.
enum class WarningLevel { ignored, warning, error };

struct Options {
    WarningLevel unused_sig = WarningLevel::warning;
    bool remarks = false; // a remark at every rewritten call (-fplugin-arg-iosig-remarks)
};

// One `#pragma sig` in the translation unit.
struct SigPragma {
    clang::SourceLocation introducer; // `#` of `#pragma`, or `_Pragma`
    clang::SourceLocation keyword;    // the `sig` token
    std::optional<std::string>
        canonical;                    // unset when the pragma had errors: claims its statement only
    bool resolved = false;            // applied or reported; nothing more to do
    bool templated = false;           // inside a template pattern: applied in each instantiation
    bool applied = false;             // at least one call rewritten
    bool seen_uninstantiable = false; // a templated pragma whose instantiated statement had no call
    clang::SourceLocation unused_statement; // that statement, for the note
};

// Diagnostics of the plugin. Clang 19 cannot give a plugin's diagnostics a warning group, so the
// warning's level is computed here from the command line (see Options and docs/plugin.md).
class PluginDiagnostics {
public:
    explicit PluginDiagnostics(clang::DiagnosticsEngine& engine);

    clang::DiagnosticBuilder signature_error(clang::SourceLocation at); // %0: the parser's message
    clang::DiagnosticBuilder redefinition(clang::SourceLocation at);    // %0: the name
    clang::DiagnosticBuilder previous_definition(clang::SourceLocation at);
    clang::DiagnosticBuilder second_sig(clang::SourceLocation at);
    clang::DiagnosticBuilder previous_sig(clang::SourceLocation at);
    clang::DiagnosticBuilder next_statement(clang::SourceLocation at);
    clang::DiagnosticBuilder not_rewritable(clang::SourceLocation at); // %0: why
    clang::DiagnosticBuilder internal_error(clang::SourceLocation at); // %0: what
    clang::DiagnosticBuilder argument_error(clang::SourceLocation at); // %0: what
    clang::DiagnosticBuilder pragma_typo(clang::SourceLocation at);    // %0: written, %1: meant
    clang::DiagnosticBuilder rewritten(clang::SourceLocation at);      // %0: callee, %1: signature
    // -Wiosig-unused-sig; nullopt when the warning is off. %0: the reason.
    std::optional<clang::DiagnosticBuilder> unused_sig(clang::SourceLocation at,
                                                       WarningLevel level);

    clang::DiagnosticsEngine& engine() { return engine_; }

private:
    clang::DiagnosticsEngine& engine_;
    unsigned signature_error_, redefinition_, previous_definition_, second_sig_, previous_sig_,
        next_statement_, not_rewritable_, internal_error_, argument_error_, pragma_typo_,
        rewritten_, unused_warning_, unused_error_;
};

class PluginState {
public:
    PluginState(clang::CompilerInstance& instance, Options options);

    clang::CompilerInstance& instance;
    Options options;
    PluginDiagnostics diagnostics;
    SigdefTable sigdefs;
    llvm::StringMap<clang::SourceLocation> sigdef_names; // where each sigdef's NAME is written
    std::vector<SigPragma> pragmas;                      // translation-unit order
};

// Registers the `sig` and `sigdef` pragma handlers on `preprocessor` (called only when an AST is
// built, so `clang -E` with the plugin loaded passes the pragmas through to its output untouched).
void add_pragma_handlers(clang::Preprocessor& preprocessor, std::shared_ptr<PluginState> state);

} // namespace iosig::plugin
