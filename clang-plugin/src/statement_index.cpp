// StatementIndex and IndexBuilder (statement_index.hpp).
#include "statement_index.hpp"

#include "rewrite.hpp"

#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/Stmt.h>
#include <clang/Basic/SourceManager.h>

namespace iosig::plugin {

const Position* StatementIndex::next_statement(clang::SourceLocation pragma,
                                               const clang::SourceManager& sources) const {
    auto before = [&](clang::SourceLocation a, clang::SourceLocation b) {
        return sources.isBeforeInTranslationUnit(a, b);
    };
    const Position* best = nullptr;
    for (const Position& position : positions)
        if (before(pragma, position.begin) && (!best || before(position.begin, best->begin)))
            best = &position;
    if (!best || (best->container.isValid() && !before(best->container, pragma))) return nullptr;
    for (clang::SourceLocation closing : closings)
        if (before(pragma, closing) && before(closing, best->begin)) return nullptr;
    // A block: its first statement (which may be a block again).
    while (best && best->block) {
        const Position* block = best;
        best = nullptr;
        for (const Position& position : positions)
            if (position.container == block->begin &&
                (!best || before(position.begin, best->begin)))
                best = &position;
    }
    return best;
}

void IndexBuilder::add_function(clang::FunctionDecl& function, bool dependent) {
    if (!function.doesThisDeclarationHaveABody()) return;
    dependent = dependent || function.isDependentContext();
    clang::Stmt* body = function.getBody();
    walk(body, {}, false, dependent);
    if (auto* constructor = llvm::dyn_cast<clang::CXXConstructorDecl>(&function))
        for (clang::CXXCtorInitializer* init : constructor->inits())
            if (init->isWritten() && init->getInit()) {
                clang::Stmt* expression = init->getInit();
                walk(expression, {}, false, dependent);
            }
}

void IndexBuilder::add_record(clang::CXXRecordDecl& record, bool dependent) {
    for (clang::Decl* member : record.decls())
        add_decl(*member, dependent || record.isDependentContext());
}

void IndexBuilder::add_decl(clang::Decl& decl, bool dependent) {
    if (auto* templ = llvm::dyn_cast<clang::FunctionTemplateDecl>(&decl)) {
        add_function(*templ->getTemplatedDecl(), true);
    } else if (auto* function = llvm::dyn_cast<clang::FunctionDecl>(&decl)) {
        add_function(*function, dependent);
    } else if (auto* record = llvm::dyn_cast<clang::CXXRecordDecl>(&decl)) {
        if (record->isThisDeclarationADefinition()) add_record(*record, dependent);
    } else if (auto* var = llvm::dyn_cast<clang::VarDecl>(&decl)) {
        if (var->getInit()) {
            clang::Stmt* init = var->getInit();
            walk(init, {}, false, dependent);
        }
    }
}

void IndexBuilder::walk(clang::Stmt*& slot, clang::SourceLocation container, bool is_position,
                        bool dependent) {
    clang::Stmt* statement = slot;
    if (!statement) return;
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
                if (record->isThisDeclarationADefinition()) add_record(*record, dependent);
    for (clang::Stmt*& child : statement->children()) {
        const bool substatement = is_substatement_slot(statement, child);
        walk(child, substatement ? statement->getBeginLoc() : container, substatement, dependent);
    }
}

} // namespace iosig::plugin
