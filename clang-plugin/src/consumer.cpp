// Which statement a `#pragma sig` annotates, and the diagnostics when it annotates nothing.
//
// The statement is the first one that begins after the pragma in the same block: a statement of a
// `{}` block or the body/branch of a control statement, never a block itself (a pragma before `{`
// annotates the block's first statement). No `}` may lie between pragma and statement (a pragma at the
// end of a block annotates nothing) and the statement's block must have begun before the pragma (a
// pragma before a function's definition does not reach into its body). At namespace scope the next
// declaration is used when it is a variable (C++ dynamic initialisation).
//
// Function bodies are rewritten when their top-level declaration reaches the consumer, which happens
// before code generation sees them. Template patterns are not rewritten; each instantiation is, when
// Sema hands it over.
#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/AST/ExprCXX.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Sema/Sema.h>
#include <clang/Sema/SemaConsumer.h>
#include <llvm/ADT/DenseMap.h>

#include <exception>
#include <memory>
#include <optional>

#include "consumer.hpp"
#include "rewrite.hpp"
#include "state.hpp"

namespace iosig::plugin {
namespace {

using clang::SourceLocation;

// A place where a statement can stand.
struct Position {
    clang::Stmt** slot;
    SourceLocation begin;
    SourceLocation container;  // `{` of its block, or the keyword of the statement it is a body of
    bool dependent;            // in a template pattern or generic lambda: rewritten per instantiation
    bool block;                // a `{}` standing as a statement: the pragma goes to its first statement
};

struct StatementIndex {
    std::vector<Position> positions;
    std::vector<SourceLocation> closings;  // every block's `}`
};

class IndexBuilder {
public:
    explicit IndexBuilder(StatementIndex& index) : index_(index) {}

    void add_function(clang::FunctionDecl& function, bool dependent) {
        if (!function.doesThisDeclarationHaveABody())
            return;
        clang::Stmt* body = function.getBody();
        walk(body, {}, false, dependent || function.isDependentContext());
        if (auto* constructor = llvm::dyn_cast<clang::CXXConstructorDecl>(&function))
            for (clang::CXXCtorInitializer* init : constructor->inits())
                if (init->isWritten() && init->getInit()) {
                    clang::Stmt* expression = init->getInit();
                    walk(expression, {}, false, dependent);
                }
    }

    void add_record(clang::CXXRecordDecl& record, bool dependent) {
        for (clang::Decl* member : record.decls())
            add_decl(*member, dependent || record.isDependentContext());
    }

    // Any declaration that can hold statements: functions, classes (their members), variables
    // (lambdas in their initialisers).
    void add_decl(clang::Decl& decl, bool dependent) {
        if (auto* templ = llvm::dyn_cast<clang::FunctionTemplateDecl>(&decl)) {
            add_function(*templ->getTemplatedDecl(), true);
        } else if (auto* function = llvm::dyn_cast<clang::FunctionDecl>(&decl)) {
            add_function(*function, dependent);
        } else if (auto* record = llvm::dyn_cast<clang::CXXRecordDecl>(&decl)) {
            if (record->isThisDeclarationADefinition())
                add_record(*record, dependent);
        } else if (auto* var = llvm::dyn_cast<clang::VarDecl>(&decl)) {
            if (var->getInit()) {
                clang::Stmt* init = var->getInit();
                walk(init, {}, false, dependent);
            }
        }
    }

private:
    void walk(clang::Stmt*& slot, SourceLocation container, bool is_position, bool dependent) {
        clang::Stmt* statement = slot;
        if (!statement)
            return;
        if (auto* block = llvm::dyn_cast<clang::CompoundStmt>(statement)) {
            if (is_position)
                index_.positions.push_back(
                    Position{&slot, block->getLBracLoc(), container, dependent, true});
            index_.closings.push_back(block->getRBracLoc());
            for (clang::Stmt*& child : block->children())
                walk(child, block->getLBracLoc(), true, dependent);
            return;
        }
        if (is_position && !llvm::isa<clang::NullStmt>(statement))
            index_.positions.push_back(
                Position{&slot, statement->getBeginLoc(), container, dependent, false});
        if (auto* lambda = llvm::dyn_cast<clang::LambdaExpr>(statement))
            dependent = dependent || lambda->getCallOperator()->isDependentContext();
        if (auto* declarations = llvm::dyn_cast<clang::DeclStmt>(statement))
            for (clang::Decl* decl : declarations->decls())
                if (auto* record = llvm::dyn_cast<clang::CXXRecordDecl>(decl))
                    if (record->isThisDeclarationADefinition())
                        add_record(*record, dependent);
        for (clang::Stmt*& child : statement->children()) {
            const bool substatement = is_substatement_slot(statement, child);
            walk(child, substatement ? statement->getBeginLoc() : container, substatement, dependent);
        }
    }

    StatementIndex& index_;
};

class SigConsumer final : public clang::SemaConsumer {
public:
    explicit SigConsumer(std::shared_ptr<PluginState> state)
        : state_(std::move(state)), sources_(state_->instance.getSourceManager()) {}

    void InitializeSema(clang::Sema& sema) override {
        sema_ = &sema;
        rewriter_.emplace(sema.getASTContext(), sema, *state_);
    }
    void ForgetSema() override {
        rewriter_.reset();
        sema_ = nullptr;
    }

    bool HandleTopLevelDecl(clang::DeclGroupRef group) override {
        if (!rewriter_ || state_->pragmas.empty())
            return true;
        try {
            handle_group(group);
        } catch (const std::exception& failure) {
            state_->diagnostics.internal_error((*group.begin())->getLocation()) << failure.what();
        }
        return true;
    }

    void HandleTranslationUnit(clang::ASTContext&) override {
        for (SigPragma& pragma : state_->pragmas) {
            if (pragma.resolved)
                continue;
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

    // Pragmas not yet dealt with whose introducer lies in `range` (or, with `templated`, those waiting
    // for instantiations of a pattern in that range).
    std::vector<SigPragma*> pragmas_in(clang::SourceRange range, bool templated) {
        std::vector<SigPragma*> found;
        for (SigPragma& pragma : state_->pragmas)
            if (!pragma.resolved && pragma.templated == templated && inside(pragma.introducer, range))
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
            if (!decl->isImplicit() && decl->getBeginLoc().isValid())
                decls.push_back(decl);
        if (decls.empty())
            return;
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

    // Namespace-scope pragmas before `decls` (one declaration group): they annotate these variables'
    // initialisers, or nothing.
    void handle_pragmas_before(const std::vector<clang::Decl*>& decls) {
        const SourceLocation start = decls.front()->getBeginLoc();
        for (SigPragma& pragma : state_->pragmas) {
            if (pragma.resolved || pragma.templated || !before(pragma.introducer, start))
                continue;
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
                    CallRewriter::Outcome outcome = rewriter_->rewrite_statement(*slot, *pragma.canonical);
                    total.rewritten += outcome.rewritten;
                    total.declined.insert(total.declined.end(), outcome.declined.begin(),
                                          outcome.declined.end());
                }
            if (total.rewritten == 0)
                report_unused(pragma, start, total.declined);
            pragma.applied = total.rewritten > 0;
        }
    }

    void handle_decl(clang::Decl& decl) {
        const clang::SourceRange range = decl.getSourceRange();
        if (range.isInvalid())
            return;
        if (decl.isTemplated() || llvm::isa<clang::TemplateDecl>(decl)) {
            for (SigPragma* pragma : pragmas_in(range, false))
                pragma->templated = true;
            return;
        }
        if (auto* context = llvm::dyn_cast<clang::DeclContext>(&decl);
            context && (llvm::isa<clang::NamespaceDecl>(decl) || llvm::isa<clang::LinkageSpecDecl>(decl) ||
                        llvm::isa<clang::ExportDecl>(decl))) {
            handle_sequence(*context, range);
            return;
        }
        std::vector<SigPragma*> inner = pragmas_in(range, false);
        if (inner.empty())
            return;
        StatementIndex index;
        IndexBuilder(index).add_decl(decl, false);
        for (SigPragma* pragma : inner)
            apply(*pragma, index, false);
    }

    // A namespace (or extern "C" block): like the translation unit, one declaration after another.
    void handle_sequence(clang::DeclContext& context, clang::SourceRange range) {
        std::vector<clang::Decl*> run;
        auto flush = [&] {
            if (run.empty())
                return;
            handle_pragmas_before(run);
            for (clang::Decl* decl : run)
                handle_decl(*decl);
            run.clear();
        };
        for (clang::Decl* decl : context.decls()) {
            if (decl->isImplicit() || decl->getBeginLoc().isInvalid())
                continue;
            // int a = ..., b = ...; is one group: same start.
            if (!run.empty() && run.front()->getBeginLoc() != decl->getBeginLoc())
                flush();
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
        if (!function || !function->doesThisDeclarationHaveABody())
            return;
        // Every pragma inside an instantiation's range is in a template pattern, even one whose
        // enclosing function has not reached the consumer yet (a generic lambda is instantiated
        // while the function around it is still being parsed).
        std::vector<SigPragma*> waiting = pragmas_in(function->getSourceRange(), false);
        for (SigPragma* pragma : waiting)
            pragma->templated = true;
        for (SigPragma* pragma : pragmas_in(function->getSourceRange(), true))
            if (!llvm::is_contained(waiting, pragma))
                waiting.push_back(pragma);
        if (waiting.empty())
            return;
        StatementIndex index;
        IndexBuilder(index).add_function(*function, false);
        for (SigPragma* pragma : waiting)
            apply(*pragma, index, true);
    }

    const Position* next_statement(const SigPragma& pragma, const StatementIndex& index) const {
        const Position* best = nullptr;
        for (const Position& position : index.positions)
            if (before(pragma.introducer, position.begin) &&
                (!best || before(position.begin, best->begin)))
                best = &position;
        if (!best || (best->container.isValid() && !before(best->container, pragma.introducer)))
            return nullptr;
        for (SourceLocation closing : index.closings)
            if (before(pragma.introducer, closing) && before(closing, best->begin))
                return nullptr;
        // A block: its first statement (which may be a block again).
        while (best && best->block) {
            const Position* block = best;
            best = nullptr;
            for (const Position& position : index.positions)
                if (position.container == block->begin && (!best || before(position.begin, best->begin)))
                    best = &position;
        }
        return best;
    }

    void apply(SigPragma& pragma, const StatementIndex& index, bool instantiation) {
        const Position* position = next_statement(pragma, index);
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
        if (!instantiation) {
            pragma.resolved = true;
            auto [claim, fresh] = claims_.try_emplace(statement, &pragma);
            if (!fresh) {
                state_->diagnostics.second_sig(pragma.keyword);
                state_->diagnostics.previous_sig(claim->second->keyword);
                return;
            }
        }
        if (!pragma.canonical)
            return;  // its errors are reported; it still claims the statement
        CallRewriter::Outcome outcome = rewriter_->rewrite_statement(*position->slot, *pragma.canonical);
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

    // A pragma with errors has been diagnosed already: it never also warns that it applies to nothing.
    void report_unused(const SigPragma& pragma, SourceLocation statement,
                       const std::vector<std::pair<SourceLocation, std::string>>& declined) {
        if (!pragma.canonical)
            return;
        auto warning = state_->diagnostics.unused_sig(pragma.keyword, state_->options.unused_sig);
        if (!warning)
            return;
        *warning << "'#pragma sig' has no effect: the next statement contains no supported open call";
        warning.reset();
        state_->diagnostics.next_statement(statement);
        for (const auto& [where, why] : declined)
            state_->diagnostics.not_rewritable(where) << why;
    }

    void report_no_statement(const SigPragma& pragma) {
        if (!pragma.canonical)
            return;
        auto warning = state_->diagnostics.unused_sig(pragma.keyword, state_->options.unused_sig);
        if (warning)
            *warning << "'#pragma sig' has no effect: no statement follows it in the same block";
    }

    void report_not_a_statement(const SigPragma& pragma, SourceLocation declaration) {
        if (!pragma.canonical)
            return;
        auto warning = state_->diagnostics.unused_sig(pragma.keyword, state_->options.unused_sig);
        if (!warning)
            return;
        *warning << "'#pragma sig' has no effect: it must precede a statement, or a variable whose "
                    "initialiser opens a file";
        warning.reset();
        state_->diagnostics.next_statement(declaration);
    }

    std::shared_ptr<PluginState> state_;
    clang::SourceManager& sources_;
    clang::Sema* sema_ = nullptr;
    std::optional<CallRewriter> rewriter_;
    llvm::DenseMap<const clang::Stmt*, SigPragma*> claims_;
};

} // namespace

std::unique_ptr<clang::ASTConsumer> make_consumer(std::shared_ptr<PluginState> state) {
    return std::make_unique<SigConsumer>(std::move(state));
}

} // namespace iosig::plugin
