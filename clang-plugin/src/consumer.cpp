// Applies each `#pragma sig` to the statement it annotates (statement_index.hpp says which), and
// reports the pragmas that annotate nothing. At namespace scope the next declaration is used when
// it is a variable (C++ dynamic initialisation).
//
// Function bodies are rewritten when their top-level declaration reaches the consumer, which
// happens before code generation sees them. Template patterns are not rewritten; each instantiation
// is, when Sema hands it over.
#include "consumer.hpp"

#include "rewrite.hpp"
#include "state.hpp"
#include "statement_index.hpp"

#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/AST/ExprCXX.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Sema/Sema.h>
#include <clang/Sema/SemaConsumer.h>
#include <exception>
#include <llvm/ADT/DenseMap.h>
#include <memory>
#include <optional>

namespace iosig::plugin {
namespace {

using clang::SourceLocation;

class SigConsumer final : public clang::SemaConsumer {
public:
    explicit SigConsumer(std::shared_ptr<PluginState> state)
        : state_(std::move(state)), sources_(state_->instance.getSourceManager()) {}

    void InitializeSema(clang::Sema& sema) override {
        rewriter_.emplace(sema.getASTContext(), sema, *state_);
    }
    void ForgetSema() override { rewriter_.reset(); }

    bool HandleTopLevelDecl(clang::DeclGroupRef group) override {
        if (!rewriter_ || state_->pragmas.empty()) return true;
        try {
            handle_group(group);
        } catch (const std::exception& failure) {
            state_->diagnostics.internal_error((*group.begin())->getLocation()) << failure.what();
        }
        return true;
    }

    void HandleTranslationUnit(clang::ASTContext&) override {
        if (!rewriter_)
            return; // no Sema, no AST of function bodies: nothing was looked at, nothing to report
        for (SigPragma& pragma : state_->pragmas) {
            if (pragma.resolved) continue;
            if (pragma.templated) {
                if (!pragma.applied && pragma.seen_uninstantiable)
                    report_unused(pragma, pragma.unused_statement, {});
                continue;
            }
            report_no_statement(pragma);
        }
    }

private:
    bool before(SourceLocation a, SourceLocation b) const {
        return sources_.isBeforeInTranslationUnit(a, b);
    }
    bool inside(SourceLocation at, clang::SourceRange range) const {
        return before(range.getBegin(), at) && before(at, range.getEnd());
    }

    // Pragmas not yet dealt with whose introducer lies in `range` (or, with `templated`, those
    // waiting for instantiations of a pattern in that range).
    std::vector<SigPragma*> pragmas_in(clang::SourceRange range, bool templated) {
        std::vector<SigPragma*> found;
        for (SigPragma& pragma : state_->pragmas)
            if (!pragma.resolved && pragma.templated == templated &&
                inside(pragma.introducer, range))
                found.push_back(&pragma);
        return found;
    }

    void handle_group(clang::DeclGroupRef group) {
        clang::Decl* first = *group.begin();
        if (is_instantiation(*first)) {
            for (clang::Decl* decl : group)
                handle_instantiation(*decl);
            return;
        }
        // (An anonymous namespace comes with its implicit using-directive in one group.)
        std::vector<clang::Decl*> decls;
        for (clang::Decl* decl : group)
            if (!decl->isImplicit() && decl->getBeginLoc().isValid()) decls.push_back(decl);
        if (decls.empty()) return;
        handle_pragmas_before(decls);
        for (clang::Decl* decl : decls)
            handle_decl(*decl);
    }

    static bool is_instantiation(const clang::Decl& decl) {
        if (const auto* function = llvm::dyn_cast<clang::FunctionDecl>(&decl))
            return function->isTemplateInstantiation();
        if (const auto* var = llvm::dyn_cast<clang::VarDecl>(&decl))
            return clang::isTemplateInstantiation(var->getTemplateSpecializationKind());
        return false;
    }

    // Namespace-scope pragmas before `decls` (one declaration group): they annotate these
    // variables' initialisers, or nothing.
    void handle_pragmas_before(const std::vector<clang::Decl*>& decls) {
        const SourceLocation start = decls.front()->getBeginLoc();
        for (SigPragma& pragma : state_->pragmas) {
            if (pragma.resolved || pragma.templated || !before(pragma.introducer, start)) continue;
            pragma.resolved = true;
            std::vector<clang::VarDecl*> variables;
            for (clang::Decl* decl : decls)
                if (auto* var = llvm::dyn_cast<clang::VarDecl>(decl); var && var->getInit())
                    variables.push_back(var);
            if (variables.empty() || decls.front()->isTemplated()) {
                report_not_a_statement(pragma, start);
                continue;
            }
            CallRewriter::Outcome total;
            if (pragma.canonical)
                for (clang::VarDecl* var : variables) {
                    auto* slot = reinterpret_cast<clang::Stmt**>(var->getInitAddress());
                    CallRewriter::Outcome outcome =
                        rewriter_->rewrite_statement(*slot, *pragma.canonical);
                    total.rewritten += outcome.rewritten;
                    total.declined.insert(total.declined.end(), outcome.declined.begin(),
                                          outcome.declined.end());
                }
            if (total.rewritten == 0) report_unused(pragma, start, total.declined);
            pragma.applied = total.rewritten > 0;
        }
    }

    void handle_decl(clang::Decl& decl) {
        const clang::SourceRange range = decl.getSourceRange();
        if (range.isInvalid()) return;
        if (decl.isTemplated() || llvm::isa<clang::TemplateDecl>(decl)) {
            for (SigPragma* pragma : pragmas_in(range, false))
                pragma->templated = true;
            return;
        }
        if (auto* context = llvm::dyn_cast<clang::DeclContext>(&decl);
            context &&
            (llvm::isa<clang::NamespaceDecl>(decl) || llvm::isa<clang::LinkageSpecDecl>(decl) ||
             llvm::isa<clang::ExportDecl>(decl))) {
            handle_sequence(*context, range);
            return;
        }
        std::vector<SigPragma*> inner = pragmas_in(range, false);
        if (inner.empty()) return;
        StatementIndex index;
        IndexBuilder(index).add_decl(decl, false);
        for (SigPragma* pragma : inner)
            apply(*pragma, index, false);
    }

    // A namespace (or extern "C" block): like the translation unit, one declaration after another.
    void handle_sequence(clang::DeclContext& context, clang::SourceRange range) {
        std::vector<clang::Decl*> run;
        auto flush = [&] {
            if (run.empty()) return;
            handle_pragmas_before(run);
            for (clang::Decl* decl : run)
                handle_decl(*decl);
            run.clear();
        };
        for (clang::Decl* decl : context.decls()) {
            if (decl->isImplicit() || decl->getBeginLoc().isInvalid()) continue;
            // int a = ..., b = ...; is one group: same start.
            if (!run.empty() && run.front()->getBeginLoc() != decl->getBeginLoc()) flush();
            run.push_back(decl);
        }
        flush();
        for (SigPragma* pragma : pragmas_in(range, false)) {
            pragma->resolved = true;
            report_no_statement(*pragma);
        }
    }

    void handle_instantiation(clang::Decl& decl) {
        auto* function = llvm::dyn_cast<clang::FunctionDecl>(&decl);
        if (!function || !function->doesThisDeclarationHaveABody()) return;
        // Every pragma inside an instantiation's range is in a template pattern, even one whose
        // enclosing function has not reached the consumer yet (a generic lambda is instantiated
        // while the function around it is still being parsed).
        std::vector<SigPragma*> waiting = pragmas_in(function->getSourceRange(), false);
        for (SigPragma* pragma : waiting)
            pragma->templated = true;
        for (SigPragma* pragma : pragmas_in(function->getSourceRange(), true))
            if (!llvm::is_contained(waiting, pragma)) waiting.push_back(pragma);
        if (waiting.empty()) return;
        StatementIndex index;
        IndexBuilder(index).add_function(*function, false);
        for (SigPragma* pragma : waiting)
            apply(*pragma, index, true);
    }

    void apply(SigPragma& pragma, const StatementIndex& index, bool instantiation) {
        const Position* position = index.next_statement(pragma.introducer, sources_);
        if (!position) {
            if (!instantiation) {
                pragma.resolved = true;
                report_no_statement(pragma);
            }
            return;
        }
        if (position->dependent) {
            pragma.templated = true;
            return;
        }
        clang::Stmt* statement = *position->slot;
        if (!instantiation) pragma.resolved = true;
        // (Each instantiation has statements of its own: a second pragma is found in the first.)
        auto [claim, fresh] = claims_.try_emplace(statement, &pragma);
        if (!fresh && claim->second != &pragma) {
            pragma.resolved = true;
            state_->diagnostics.second_sig(pragma.keyword);
            state_->diagnostics.previous_sig(claim->second->keyword);
            return;
        }
        if (!pragma.canonical) return; // its errors are reported; it still claims the statement
        CallRewriter::Outcome outcome =
            rewriter_->rewrite_statement(*position->slot, *pragma.canonical);
        if (outcome.rewritten > 0) {
            pragma.applied = true;
            return;
        }
        if (instantiation) {
            pragma.seen_uninstantiable = true;
            pragma.unused_statement = position->begin;
            return;
        }
        report_unused(pragma, position->begin, outcome.declined);
    }

    // A pragma with errors has been diagnosed already: it never also warns that it applies to
    // nothing.
    void report_unused(const SigPragma& pragma, SourceLocation statement,
                       const std::vector<std::pair<SourceLocation, std::string>>& declined) {
        if (!pragma.canonical) return;
        auto warning = state_->diagnostics.unused_sig(pragma.keyword, state_->options.unused_sig);
        if (!warning) return;
        *warning
            << "'#pragma sig' has no effect: the next statement contains no supported open call";
        warning.reset();
        state_->diagnostics.next_statement(statement);
        for (const auto& [where, why] : declined)
            state_->diagnostics.not_rewritable(where) << why;
    }

    void report_no_statement(const SigPragma& pragma) {
        if (!pragma.canonical) return;
        auto warning = state_->diagnostics.unused_sig(pragma.keyword, state_->options.unused_sig);
        if (warning)
            *warning << "'#pragma sig' has no effect: no statement follows it in the same block";
    }

    void report_not_a_statement(const SigPragma& pragma, SourceLocation declaration) {
        if (!pragma.canonical) return;
        auto warning = state_->diagnostics.unused_sig(pragma.keyword, state_->options.unused_sig);
        if (!warning) return;
        *warning << "'#pragma sig' has no effect: it must precede a statement, or a variable whose "
                    "initialiser opens a file";
        warning.reset();
        state_->diagnostics.next_statement(declaration);
    }

    std::shared_ptr<PluginState> state_;
    clang::SourceManager& sources_;
    std::optional<CallRewriter> rewriter_;
    llvm::DenseMap<const clang::Stmt*, SigPragma*> claims_;
};

} // namespace

std::unique_ptr<clang::ASTConsumer> make_consumer(std::shared_ptr<PluginState> state) {
    return std::make_unique<SigConsumer>(std::move(state));
}

} // namespace iosig::plugin
