// Small helpers that build Clang AST nodes directly (see rewrite.cpp for why not through Sema).
#pragma once

#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/Expr.h>

namespace iosig::plugin {

class Build {
public:
    explicit Build(clang::ASTContext& context) : ctx(context) {}

    clang::OpaqueValueExpr* once(clang::Expr* source) {
        return new (ctx)
            clang::OpaqueValueExpr(source->getExprLoc(), source->getType(), source->getValueKind(),
                                   source->getObjectKind(), source);
    }

    clang::Expr* cast(clang::QualType type, clang::CastKind kind, clang::Expr* operand) {
        return clang::ImplicitCastExpr::Create(ctx, type, kind, operand, nullptr, clang::VK_PRValue,
                                               clang::FPOptionsOverride());
    }

    clang::Expr* function_pointer(clang::FunctionDecl* function, clang::SourceLocation at) {
        const bool cxx = ctx.getLangOpts().CPlusPlus;
        auto* reference = clang::DeclRefExpr::Create(
            ctx, clang::NestedNameSpecifierLoc(), clang::SourceLocation(), function, false, at,
            function->getType(), cxx ? clang::VK_LValue : clang::VK_PRValue);
        return cast(ctx.getPointerType(function->getType()), clang::CK_FunctionToPointerDecay,
                    reference);
    }

    // `function != null` as a condition: the weak reference is null without a runtime.
    clang::Expr* present(clang::FunctionDecl* function, clang::SourceLocation at) {
        clang::Expr* pointer = function_pointer(function, at);
        if (!ctx.getLangOpts().CPlusPlus) return pointer;
        return cast(ctx.BoolTy, clang::CK_PointerToBoolean, pointer);
    }

    clang::Expr* to_bool(clang::Expr* pointer) {
        return cast(ctx.getLangOpts().CPlusPlus ? ctx.BoolTy : ctx.IntTy,
                    clang::CK_PointerToBoolean, pointer);
    }

    clang::Expr* string(llvm::StringRef text, clang::SourceLocation at) {
        const clang::QualType array = ctx.getStringLiteralArrayType(ctx.CharTy, text.size());
        auto* literal = clang::StringLiteral::Create(ctx, text, clang::StringLiteralKind::Ordinary,
                                                     false, array, at);
        const clang::QualType element = ctx.getAsArrayType(array)->getElementType();
        clang::Expr* decayed =
            cast(ctx.getPointerType(element), clang::CK_ArrayToPointerDecay, literal);
        if (element.isConstQualified()) return decayed;
        return cast(ctx.getPointerType(ctx.CharTy.withConst()), clang::CK_NoOp, decayed);
    }

    clang::Expr* integer(int value, clang::SourceLocation at) {
        return clang::IntegerLiteral::Create(
            ctx, llvm::APInt(ctx.getIntWidth(ctx.IntTy), static_cast<uint64_t>(value), true),
            ctx.IntTy, at);
    }

    clang::Expr* binary(clang::Expr* lhs, clang::Expr* rhs, clang::BinaryOperatorKind op,
                        clang::QualType type, clang::SourceLocation at) {
        return clang::BinaryOperator::Create(ctx, lhs, rhs, op, type, clang::VK_PRValue,
                                             clang::OK_Ordinary, at, clang::FPOptionsOverride());
    }

    clang::Expr* choose(clang::Expr* condition, clang::Expr* yes, clang::Expr* no,
                        clang::SourceLocation at) {
        return new (ctx) clang::ConditionalOperator(condition, at, yes, at, no, yes->getType(),
                                                    yes->getValueKind(), yes->getObjectKind());
    }

    clang::CallExpr* call(clang::Expr* callee, llvm::ArrayRef<clang::Expr*> args,
                          clang::QualType type, clang::ExprValueKind kind,
                          clang::SourceLocation end) {
        return clang::CallExpr::Create(ctx, callee, args, type, kind, end,
                                       clang::FPOptionsOverride());
    }

    clang::ASTContext& ctx;
};

} // namespace iosig::plugin
