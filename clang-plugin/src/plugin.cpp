// Entry point: `clang -fplugin=iosig-clang-plugin.so` loads this file's registration, and because
// the action runs before the main action, every compilation that builds an AST (compile,
// -fsyntax-only, -emit-llvm, -S) gets the pragma handlers and the rewriting consumer with no
// further flags.
#include "consumer.hpp"
#include "state.hpp"

#include <clang/AST/ASTConsumer.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendPluginRegistry.h>
#include <clang/Lex/Preprocessor.h>
#include <llvm/Support/raw_ostream.h>
#include <memory>

namespace iosig::plugin {

namespace {

constexpr llvm::StringLiteral unused_flag = "iosig-unused-sig";

} // namespace

PluginDiagnostics::PluginDiagnostics(clang::DiagnosticsEngine& engine) : engine_(engine) {
    using Level = clang::DiagnosticIDs::Level;
    auto id = [&](Level level, llvm::StringRef format) {
        return engine_.getDiagnosticIDs()->getCustomDiagID(level, format);
    };
    signature_error_ = id(Level::Error, "%0");
    redefinition_ = id(Level::Error, "redefinition of signature '%0'");
    previous_definition_ = id(Level::Note, "previous definition is here");
    second_sig_ = id(Level::Error, "a second '#pragma sig' for the same statement");
    previous_sig_ = id(Level::Note, "previous '#pragma sig' for this statement is here");
    next_statement_ = id(Level::Note, "the next statement is here");
    not_rewritable_ = id(Level::Note, "%0");
    internal_error_ = id(Level::Error, "iosig plugin: internal error: %0");
    argument_error_ = id(Level::Error, "iosig plugin: %0");
    pragma_typo_ = id(Level::Error, "unknown pragma '%0'; did you mean '%1'?");
    rewritten_ = id(Level::Remark, "iosig: '%0' opens with signature \"%1\"");
    // Clang appends the flag to its own warnings; ours carry it in the text, the same way.
    const bool show_flag = engine.getDiagnosticOptions().ShowOptionNames;
    unused_warning_ = id(Level::Warning, show_flag ? "%0 [-Wiosig-unused-sig]" : "%0");
    unused_error_ = id(Level::Error, show_flag ? "%0 [-Werror,-Wiosig-unused-sig]" : "%0");
}

clang::DiagnosticBuilder PluginDiagnostics::signature_error(clang::SourceLocation at) {
    return engine_.Report(at, signature_error_);
}
clang::DiagnosticBuilder PluginDiagnostics::redefinition(clang::SourceLocation at) {
    return engine_.Report(at, redefinition_);
}
clang::DiagnosticBuilder PluginDiagnostics::previous_definition(clang::SourceLocation at) {
    return engine_.Report(at, previous_definition_);
}
clang::DiagnosticBuilder PluginDiagnostics::second_sig(clang::SourceLocation at) {
    return engine_.Report(at, second_sig_);
}
clang::DiagnosticBuilder PluginDiagnostics::previous_sig(clang::SourceLocation at) {
    return engine_.Report(at, previous_sig_);
}
clang::DiagnosticBuilder PluginDiagnostics::next_statement(clang::SourceLocation at) {
    return engine_.Report(at, next_statement_);
}
clang::DiagnosticBuilder PluginDiagnostics::not_rewritable(clang::SourceLocation at) {
    return engine_.Report(at, not_rewritable_);
}
clang::DiagnosticBuilder PluginDiagnostics::internal_error(clang::SourceLocation at) {
    return engine_.Report(at, internal_error_);
}
clang::DiagnosticBuilder PluginDiagnostics::argument_error(clang::SourceLocation at) {
    return engine_.Report(at, argument_error_);
}
clang::DiagnosticBuilder PluginDiagnostics::pragma_typo(clang::SourceLocation at) {
    return engine_.Report(at, pragma_typo_);
}
clang::DiagnosticBuilder PluginDiagnostics::rewritten(clang::SourceLocation at) {
    return engine_.Report(at, rewritten_);
}
std::optional<clang::DiagnosticBuilder> PluginDiagnostics::unused_sig(clang::SourceLocation at,
                                                                      WarningLevel level) {
    switch (level) {
    case WarningLevel::ignored:
        return std::nullopt;
    case WarningLevel::warning:
        return engine_.Report(at, unused_warning_);
    case WarningLevel::error:
        return engine_.Report(at, unused_error_);
    }
    return std::nullopt;
}

PluginState::PluginState(clang::CompilerInstance& compiler, Options opts)
    : instance(compiler), options(opts), diagnostics(compiler.getDiagnostics()) {}

namespace {

// -Wiosig-unused-sig as Clang itself would treat a warning of its own: -w silences it, -Werror
// promotes it, the last of -W[no-]iosig-unused-sig, -W[no-]error=iosig-unused-sig,
// -W[no-]everything wins. Clang 19 also prints "unknown warning option" for our spelling (it checks
// before loading plugins), so the same switches are accepted as plugin arguments:
// -fplugin-arg-iosig-Wno-unused-sig.
struct WarningSwitches {
    bool enabled = true;
    std::optional<bool> as_error;

    // false if `option` (without the leading -W) is not about our warning.
    bool apply(llvm::StringRef option) {
        if (option == "everything" || option == unused_flag)
            enabled = true;
        else if (option == "no-everything" || option == (llvm::Twine("no-") + unused_flag).str())
            enabled = false;
        else if (option == (llvm::Twine("error=") + unused_flag).str())
            enabled = true, as_error = true;
        else if (option == (llvm::Twine("no-error=") + unused_flag).str())
            as_error = false;
        else
            return false;
        return true;
    }
};

class IosigAction final : public clang::PluginASTAction {
protected:
    std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance& instance,
                                                          llvm::StringRef) override {
        Options options;
        options.remarks = remarks_;
        const clang::DiagnosticsEngine& engine = instance.getDiagnostics();
        WarningSwitches switches;
        for (const std::string& option : instance.getDiagnosticOpts().Warnings)
            switches.apply(option);
        for (const std::string& option : warning_args_)
            switches.apply(option);
        if (!switches.enabled || engine.getIgnoreAllWarnings())
            options.unused_sig = WarningLevel::ignored;
        else if (switches.as_error.value_or(engine.getWarningsAsErrors()))
            options.unused_sig = WarningLevel::error;

        auto state = std::make_shared<PluginState>(instance, options);
        for (const std::string& problem : argument_errors_)
            state->diagnostics.argument_error({}) << problem;
        add_pragma_handlers(instance.getPreprocessor(), state);
        return make_consumer(state);
    }

    bool ParseArgs(const clang::CompilerInstance&, const std::vector<std::string>& args) override {
        for (const std::string& arg : args) {
            llvm::StringRef text(arg);
            if (text == "remarks") {
                remarks_ = true;
            } else if (text == "help") {
                llvm::errs() << "iosig clang plugin arguments (-fplugin-arg-iosig-ARG):\n"
                                "  remarks              a remark at every rewritten open call\n"
                                "  Wunused-sig          warn about a #pragma sig that applies to "
                                "nothing (default)\n"
                                "  Wno-unused-sig       do not\n"
                                "  Werror=unused-sig    make that warning an error\n"
                                "  Wno-error=unused-sig keep it a warning under -Werror\n";
            } else if (text.consume_front("W") && text.contains("unused-sig")) {
                // Accept both Wno-unused-sig and Wno-iosig-unused-sig.
                std::string option = text.str();
                if (!text.contains(unused_flag)) option.insert(option.find("unused-sig"), "iosig-");
                if (WarningSwitches{}.apply(option))
                    warning_args_.push_back(option);
                else
                    argument_errors_.push_back("unknown plugin argument '" + arg +
                                               "' (-fplugin-arg-iosig-help lists them)");
            } else {
                argument_errors_.push_back("unknown plugin argument '" + arg +
                                           "' (-fplugin-arg-iosig-help lists them)");
            }
        }
        return true;
    }

    ActionType getActionType() override { return AddBeforeMainAction; }

private:
    bool remarks_ = false;
    std::vector<std::string> warning_args_;
    std::vector<std::string> argument_errors_;
};

} // namespace
} // namespace iosig::plugin

static clang::FrontendPluginRegistry::Add<iosig::plugin::IosigAction>
    iosig_registration("iosig", "apply #pragma sig IO signatures to the opens they annotate");
