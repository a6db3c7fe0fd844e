// Builds the rewritten expressions described in rewrite.hpp.
//
// Evaluate-once is done with a PseudoObjectExpr: its semantic expressions are evaluated in order,
// each OpaqueValueExpr among them binds its source expression's value once, and every later use of
// that OpaqueValueExpr reads the bound value. The original call stays as the syntactic form, so
// diagnostics and AST printing still show the source as written. Nodes are built directly (not
// through Sema) so that nothing already checked is diagnosed twice.
#include "rewrite.hpp"

#include "ast_build.hpp"
#include "state.hpp"

#include <array>
#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/StmtCXX.h>
#include <clang/Sema/Sema.h>
#include <optional>

namespace iosig::plugin {

bool is_substatement_slot(const clang::Stmt* parent, const clang::Stmt* child) {
    if (!child) return false;
    if (const auto* branch = llvm::dyn_cast<clang::IfStmt>(parent))
        return child == branch->getThen() || child == branch->getElse();
    if (const auto* loop = llvm::dyn_cast<clang::ForStmt>(parent)) return child == loop->getBody();
    if (const auto* loop = llvm::dyn_cast<clang::WhileStmt>(parent))
        return child == loop->getBody();
    if (const auto* loop = llvm::dyn_cast<clang::DoStmt>(parent)) return child == loop->getBody();
    if (const auto* loop = llvm::dyn_cast<clang::CXXForRangeStmt>(parent))
        return child == loop->getBody();
    if (const auto* choice = llvm::dyn_cast<clang::SwitchStmt>(parent))
        return child == choice->getBody();
    if (const auto* label = llvm::dyn_cast<clang::SwitchCase>(parent))
        return child == label->getSubStmt();
    if (const auto* label = llvm::dyn_cast<clang::LabelStmt>(parent))
        return child == label->getSubStmt();
    if (const auto* attributed = llvm::dyn_cast<clang::AttributedStmt>(parent))
        return child == attributed->getSubStmt();
    // Anything else that is a statement but neither an expression nor a declaration (try blocks,
    // handlers, captured regions) is a statement of its own.
    return !llvm::isa<clang::Expr>(child) && !llvm::isa<clang::DeclStmt>(child);
}

namespace {

using clang::Expr;
using clang::QualType;
using clang::SourceLocation;

// The C library functions with a runtime entry point, by the name they link to (an asm label such
// as glibc's `open` -> `open64` under _FILE_OFFSET_BITS=64 decides; the fortified `__open_2` family
// takes the same arguments as the plain call without mode).
struct CFunction {
    llvm::StringLiteral link_name;
    llvm::StringLiteral runtime;
    unsigned path_index;
    unsigned fixed_params;
    bool variadic;
};
constexpr std::array c_functions{
    CFunction{"open", "iosig_open", 0, 2, true},
    CFunction{"open64", "iosig_open64", 0, 2, true},
    CFunction{"__open_2", "iosig_open", 0, 2, true},
    CFunction{"__open64_2", "iosig_open64", 0, 2, true},
    CFunction{"openat", "iosig_openat", 1, 3, true},
    CFunction{"openat64", "iosig_openat64", 1, 3, true},
    CFunction{"__openat_2", "iosig_openat", 1, 3, true},
    CFunction{"__openat64_2", "iosig_openat64", 1, 3, true},
    CFunction{"creat", "iosig_creat", 0, 2, false},
    CFunction{"creat64", "iosig_creat64", 0, 2, false},
    CFunction{"fopen", "iosig_fopen", 0, 2, false},
    CFunction{"fopen64", "iosig_fopen64", 0, 2, false},
    CFunction{"freopen", "iosig_freopen", 0, 3, false},
    CFunction{"freopen64", "iosig_freopen64", 0, 3, false},
};
constexpr std::array<llvm::StringLiteral, 10> source_names{
    "open",    "open64", "openat",  "openat64", "creat",
    "creat64", "fopen",  "fopen64", "freopen",  "freopen64"};

const CFunction* find_c_function(llvm::StringRef link_name) {
    for (const CFunction& function : c_functions)
        if (function.link_name == link_name) return &function;
    return nullptr;
}

bool is_char_pointer(QualType type) {
    return type->isPointerType() && type->getPointeeType()->isCharType();
}

} // namespace

CallRewriter::CallRewriter(clang::ASTContext& context, clang::Sema& sema, PluginState& state)
    : context_(context), sema_(sema), state_(state) {}

namespace {

// Expressions whose operands are not evaluated as part of this statement (or are already ours).
bool skip_expression(const clang::Stmt* statement) {
    return llvm::isa<clang::LambdaExpr, clang::StmtExpr, clang::BlockExpr, clang::PseudoObjectExpr,
                     clang::UnaryExprOrTypeTraitExpr, clang::CXXNoexceptExpr, clang::CXXTypeidExpr,
                     clang::OpaqueValueExpr, clang::ConstantExpr>(statement);
}

} // namespace

CallRewriter::Outcome CallRewriter::rewrite_statement(clang::Stmt*& slot,
                                                      llvm::StringRef signature) {
    Outcome outcome;
    walk(slot, true, signature, outcome);
    return outcome;
}

void CallRewriter::walk(clang::Stmt*& slot, bool root, llvm::StringRef signature,
                        Outcome& outcome) {
    clang::Stmt* statement = slot;
    if (!statement || skip_expression(statement)) return;
    if (!root && !llvm::isa<clang::Expr>(statement) && !llvm::isa<clang::DeclStmt>(statement))
        return;
    for (clang::Stmt*& child : statement->children())
        if (!is_substatement_slot(statement, child)) walk(child, false, signature, outcome);
    if (auto* expression = llvm::dyn_cast<Expr>(statement))
        if (Expr* replacement = rewrite(*expression, signature, outcome)) {
            slot = replacement;
            ++outcome.rewritten;
        }
}

Expr* CallRewriter::rewrite(Expr& expression, llvm::StringRef signature, Outcome& outcome) {
    if (auto* member = llvm::dyn_cast<clang::CXXMemberCallExpr>(&expression))
        return rewrite_stream_open(*member, signature, outcome);
    if (auto* construct = llvm::dyn_cast<clang::CXXConstructExpr>(&expression))
        return rewrite_stream_construct(*construct, signature, outcome);
    if (auto* call = llvm::dyn_cast<clang::CallExpr>(&expression);
        call && call->getStmtClass() == clang::Stmt::CallExprClass)
        return rewrite_c_call(*call, signature, outcome);
    return nullptr;
}

Expr* CallRewriter::rewrite_c_call(clang::CallExpr& call, llvm::StringRef signature,
                                   Outcome& outcome) {
    clang::FunctionDecl* callee = call.getDirectCallee();
    if (!callee || !callee->getIdentifier() || !llvm::is_contained(source_names, callee->getName()))
        return nullptr;
    const std::string name = callee->getName().str();
    auto decline = [&](std::string why) {
        outcome.declined.emplace_back(call.getExprLoc(), std::move(why));
        return nullptr;
    };
    if (!callee->isExternC() || !callee->isExternallyVisible())
        return decline("this '" + name + "' is not the C library's: it is not an extern \"C\" " +
                       "function with external linkage");
    const auto* prototype = callee->getType()->getAs<clang::FunctionProtoType>();
    if (!prototype) return decline("'" + name + "' is declared without a prototype");
    llvm::StringRef link_name = callee->getName();
    if (const auto* label = callee->getAttr<clang::AsmLabelAttr>()) link_name = label->getLabel();
    const CFunction* function = find_c_function(link_name);
    if (!function)
        return decline("'" + name + "' links to '" + link_name.str() +
                       "', which the iosig runtime does not provide");
    if (prototype->getNumParams() != function->fixed_params ||
        !is_char_pointer(prototype->getParamType(function->path_index)) ||
        call.getNumArgs() < function->fixed_params)
        return decline("'" + name + "' is declared with a prototype other than the C library's");

    Build build(context_);
    const SourceLocation at = call.getExprLoc();
    llvm::SmallVector<QualType, 5> params{context_.getPointerType(context_.CharTy.withConst())};
    params.append(prototype->param_type_begin(), prototype->param_type_end());
    clang::FunctionDecl* runtime =
        runtime_function(function->runtime, prototype->getReturnType(), params, function->variadic);

    llvm::SmallVector<Expr*, 8> semantics;
    llvm::SmallVector<Expr*, 5> values;
    for (Expr* argument : call.arguments()) {
        clang::OpaqueValueExpr* value = build.once(argument);
        semantics.push_back(value);
        values.push_back(value);
    }
    llvm::SmallVector<Expr*, 6> runtime_args{build.string(signature, at)};
    runtime_args.append(values.begin(), values.end());
    Expr* redirected = build.call(build.function_pointer(runtime, at), runtime_args, call.getType(),
                                  call.getValueKind(), call.getRParenLoc());
    Expr* plain = build.call(call.getCallee(), values, call.getType(), call.getValueKind(),
                             call.getRParenLoc());
    semantics.push_back(build.choose(build.present(runtime, at), redirected, plain, at));
    remark(at, name, signature);
    return clang::PseudoObjectExpr::Create(context_, &call, semantics, semantics.size() - 1);
}

clang::FunctionDecl* CallRewriter::runtime_function(llvm::StringRef name, QualType result,
                                                    llvm::ArrayRef<QualType> params,
                                                    bool variadic) {
    if (clang::FunctionDecl* known = runtime_decls_.lookup(name)) return known;
    clang::TranslationUnitDecl* unit = context_.getTranslationUnitDecl();
    clang::DeclContext* context = unit;
    if (context_.getLangOpts().CPlusPlus) {
        if (!c_linkage_)
            c_linkage_ = clang::LinkageSpecDecl::Create(context_, unit, {}, {},
                                                        clang::LinkageSpecLanguageIDs::C, false);
        context = c_linkage_;
    }
    clang::FunctionProtoType::ExtProtoInfo info;
    info.Variadic = variadic;
    const QualType type = context_.getFunctionType(result, params, info);
    clang::IdentifierInfo& identifier = context_.Idents.get(name);
    auto* function = clang::FunctionDecl::Create(
        context_, context, {}, {}, clang::DeclarationName(&identifier), type,
        context_.getTrivialTypeSourceInfo(type), clang::SC_Extern);
    llvm::SmallVector<clang::ParmVarDecl*, 5> parameters;
    for (QualType param : params)
        parameters.push_back(clang::ParmVarDecl::Create(context_, function, {}, {}, nullptr, param,
                                                        context_.getTrivialTypeSourceInfo(param),
                                                        clang::SC_None, nullptr));
    function->setParams(parameters);
    function->setImplicit();
    // Weak: with no runtime in the process the reference is null and the plain call runs.
    function->addAttr(clang::WeakAttr::CreateImplicit(context_));
    // C functions that never throw (runtime.h): no landing pads around them in C++.
    function->addAttr(clang::NoThrowAttr::CreateImplicit(context_));
    runtime_decls_[identifier.getName()] = function;
    return function;
}

void CallRewriter::remark(SourceLocation at, llvm::StringRef callee, llvm::StringRef signature) {
    if (state_.options.remarks) state_.diagnostics.rewritten(at) << callee << signature;
}

} // namespace iosig::plugin
