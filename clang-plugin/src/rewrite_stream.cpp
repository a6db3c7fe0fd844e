// C++ file streams: std::basic_ifstream, basic_ofstream, basic_fstream constructors and `.open`,
// with a path given as `const char*` or as a class with `c_str()` (std::string,
// std::filesystem::path).
//
// The library opens the file itself, so the call stays; before it runs, and after all its operands
// are evaluated in their original order, `iosig_prepare_path` plants the redirection (runtime.h).
// Its open(2) flags come from the stream's openmode: folded at compile time when the mode is a
// constant, computed at run time otherwise.
#include "ast_build.hpp"
#include "rewrite.hpp"

#include <array>
#include <clang/AST/ASTContext.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/ExprCXX.h>
#include <clang/Sema/Sema.h>
#include <fcntl.h>

namespace iosig::plugin {
namespace {

using clang::Expr;
using clang::QualType;
using clang::SourceLocation;

// std::ios_base::openmode bits (the same values in libstdc++ and libc++; a test checks them) and
// the open(2) flags the file streams use for each combination ([filebuf.members], table "File open
// modes"). O_* are this (Linux) system's, which is the system the program is built for.
constexpr unsigned mode_app = 0x01, mode_in = 0x08, mode_out = 0x10, mode_trunc = 0x20;
constexpr unsigned mode_relevant = mode_app | mode_in | mode_out | mode_trunc;
struct ModeFlags {
    unsigned mode;
    int flags;
};
constexpr std::array<ModeFlags, 9> mode_table{
    ModeFlags{mode_in, O_RDONLY},
    ModeFlags{mode_out, O_WRONLY | O_CREAT | O_TRUNC},
    ModeFlags{mode_out | mode_trunc, O_WRONLY | O_CREAT | O_TRUNC},
    ModeFlags{mode_out | mode_app, O_WRONLY | O_CREAT | O_APPEND},
    ModeFlags{mode_app, O_WRONLY | O_CREAT | O_APPEND},
    ModeFlags{mode_in | mode_out, O_RDWR},
    ModeFlags{mode_in | mode_out | mode_trunc, O_RDWR | O_CREAT | O_TRUNC},
    ModeFlags{mode_in | mode_out | mode_app, O_RDWR | O_CREAT | O_APPEND},
    ModeFlags{mode_in | mode_app, O_RDWR | O_CREAT | O_APPEND},
};
// A mode the streams reject opens nothing: O_RDONLY tells the runtime not to create anything
// either.
constexpr int rejected_mode_flags = O_RDONLY;

int open_flags_for_mode(unsigned mode) {
    for (const ModeFlags& entry : mode_table)
        if (entry.mode == (mode & mode_relevant)) return entry.flags;
    return rejected_mode_flags;
}

} // namespace

std::optional<CallRewriter::StreamKind>
CallRewriter::stream_kind(const clang::CXXRecordDecl* record) {
    if (!record || !record->isInStdNamespace() || !record->getIdentifier()) return std::nullopt;
    const llvm::StringRef name = record->getName();
    if (name == "basic_ifstream") return StreamKind::input;
    if (name == "basic_ofstream") return StreamKind::output;
    if (name == "basic_fstream") return StreamKind::both;
    return std::nullopt;
}

Expr* CallRewriter::stream_prepare(Expr* path, Expr* mode, StreamKind kind,
                                   llvm::StringRef signature, std::string& why) {
    Build build(context_);
    const SourceLocation at = path->getExprLoc();
    // ifstream opens with mode | in, ofstream with mode | out ([ifstream.members],
    // [ofstream.members]).
    const unsigned implied = kind == StreamKind::input    ? mode_in
                             : kind == StreamKind::output ? mode_out
                                                          : 0;

    Expr* text = path;
    if (!(path->getType()->isPointerType() && path->getType()->getPointeeType()->isCharType())) {
        const clang::CXXRecordDecl* record = path->getType()->getAsCXXRecordDecl();
        if (!record) {
            why = "the stream's path is neither 'const char*' nor a class with c_str()";
            return nullptr;
        }
        clang::Sema::TentativeAnalysisScope quiet(sema_);
        clang::CXXScopeSpec scope;
        const clang::DeclarationNameInfo c_str(&context_.Idents.get("c_str"), at);
        clang::ExprResult member =
            sema_.BuildMemberReferenceExpr(path, path->getType(), at, false, scope,
                                           SourceLocation(), nullptr, c_str, nullptr, nullptr);
        clang::ExprResult call = member.isInvalid()
                                     ? clang::ExprError()
                                     : sema_.BuildCallExpr(nullptr, member.get(), at, {}, at);
        if (call.isInvalid() || !call.get()->getType()->isPointerType() ||
            !call.get()->getType()->getPointeeType()->isCharType()) {
            why = "the stream's path type '" + path->getType().getAsString() +
                  "' has no c_str() returning 'const char*'";
            return nullptr;
        }
        text = call.get();
    }

    Expr* flags = nullptr;
    clang::Expr::EvalResult constant;
    const Expr* mode_source =
        mode ? llvm::cast<clang::OpaqueValueExpr>(mode)->getSourceExpr() : nullptr;
    if (!mode) {
        flags = build.integer(
            open_flags_for_mode(kind == StreamKind::both ? (mode_in | mode_out) : implied), at);
    } else if (mode_source->EvaluateAsInt(constant, context_)) {
        const auto bits = static_cast<unsigned>(constant.Val.getInt().getZExtValue());
        flags = build.integer(open_flags_for_mode(bits | implied), at);
    } else if (mode->getType()->isIntegralOrUnscopedEnumerationType() ||
               mode->getType()->isEnumeralType()) {
        // ((mode | implied) & relevant) == m1 ? f1 : ... : O_RDONLY, evaluated at run time.
        Expr* value = mode;
        if (value->isGLValue())
            value =
                build.cast(value->getType().getUnqualifiedType(), clang::CK_LValueToRValue, value);
        auto masked = [&] {
            Expr* bits = build.cast(context_.IntTy, clang::CK_IntegralCast, value);
            bits = build.binary(bits, build.integer(static_cast<int>(implied), at), clang::BO_Or,
                                context_.IntTy, at);
            return build.binary(bits, build.integer(static_cast<int>(mode_relevant), at),
                                clang::BO_And, context_.IntTy, at);
        };
        flags = build.integer(rejected_mode_flags, at);
        for (const ModeFlags& entry : mode_table) {
            Expr* matches = build.binary(masked(), build.integer(static_cast<int>(entry.mode), at),
                                         clang::BO_EQ, context_.BoolTy, at);
            flags = build.choose(matches, build.integer(entry.flags, at), flags, at);
        }
    } else {
        why = "the stream's openmode has type '" + mode->getType().getAsString() +
              "', which is not an integer or enumeration";
        return nullptr;
    }

    const QualType chars = context_.getPointerType(context_.CharTy.withConst());
    clang::FunctionDecl* prepare =
        runtime_function("iosig_prepare_path", chars, {chars, chars, context_.IntTy}, false);
    Expr* call =
        build.call(build.function_pointer(prepare, at), {build.string(signature, at), text, flags},
                   chars, clang::VK_PRValue, at);
    return build.binary(build.present(prepare, at), build.to_bool(call), clang::BO_LAnd,
                        context_.BoolTy, at);
}

Expr* CallRewriter::rewrite_stream_construct(clang::CXXConstructExpr& construct,
                                             llvm::StringRef signature, Outcome& outcome) {
    const clang::CXXConstructorDecl* constructor = construct.getConstructor();
    const std::optional<StreamKind> kind = stream_kind(constructor->getParent());
    if (!kind || construct.getNumArgs() == 0 || constructor->isCopyOrMoveConstructor())
        return nullptr;
    Build build(context_);
    llvm::SmallVector<Expr*, 4> semantics;
    llvm::SmallVector<Expr*, 2> values;
    for (Expr* argument : construct.arguments()) {
        clang::OpaqueValueExpr* value = build.once(argument);
        semantics.push_back(value);
        values.push_back(value);
    }
    std::string why;
    Expr* prepare =
        stream_prepare(values[0], values.size() > 1 ? values[1] : nullptr, *kind, signature, why);
    if (!prepare) {
        outcome.declined.emplace_back(construct.getExprLoc(), why);
        return nullptr;
    }
    semantics.push_back(prepare);
    Expr* opened = nullptr;
    if (auto* temporary = llvm::dyn_cast<clang::CXXTemporaryObjectExpr>(&construct))
        opened = clang::CXXTemporaryObjectExpr::Create(
            context_, temporary->getConstructor(), temporary->getType(),
            temporary->getTypeSourceInfo(), values, temporary->getParenOrBraceRange(),
            temporary->hadMultipleCandidates(), temporary->isListInitialization(),
            temporary->isStdInitListInitialization(), temporary->requiresZeroInitialization());
    else
        opened = clang::CXXConstructExpr::Create(
            context_, construct.getType(), construct.getLocation(), construct.getConstructor(),
            construct.isElidable(), values, construct.hadMultipleCandidates(),
            construct.isListInitialization(), construct.isStdInitListInitialization(),
            construct.requiresZeroInitialization(), construct.getConstructionKind(),
            construct.getParenOrBraceRange());
    semantics.push_back(opened);
    remark(construct.getExprLoc(), constructor->getParent()->getName(), signature);
    return clang::PseudoObjectExpr::Create(context_, &construct, semantics, semantics.size() - 1);
}

Expr* CallRewriter::rewrite_stream_open(clang::CXXMemberCallExpr& call, llvm::StringRef signature,
                                        Outcome& outcome) {
    const clang::CXXMethodDecl* method = call.getMethodDecl();
    if (!method || !method->getIdentifier() || method->getName() != "open") return nullptr;
    const std::optional<StreamKind> kind = stream_kind(method->getParent());
    if (!kind || call.getNumArgs() == 0) return nullptr;
    auto* member = llvm::dyn_cast<clang::MemberExpr>(call.getCallee());
    if (!member) {
        outcome.declined.emplace_back(call.getExprLoc(),
                                      "the stream's open is not called as 'stream.open(...)'");
        return nullptr;
    }
    Build build(context_);
    // The object first, then the arguments: the order C++17 sequences them in.
    clang::OpaqueValueExpr* object = build.once(member->getBase());
    llvm::SmallVector<Expr*, 5> semantics{object};
    llvm::SmallVector<Expr*, 2> values;
    for (Expr* argument : call.arguments()) {
        clang::OpaqueValueExpr* value = build.once(argument);
        semantics.push_back(value);
        values.push_back(value);
    }
    std::string why;
    Expr* prepare =
        stream_prepare(values[0], values.size() > 1 ? values[1] : nullptr, *kind, signature, why);
    if (!prepare) {
        outcome.declined.emplace_back(call.getExprLoc(), why);
        return nullptr;
    }
    semantics.push_back(prepare);
    auto* callee = clang::MemberExpr::Create(
        context_, object, member->isArrow(), member->getOperatorLoc(), member->getQualifierLoc(),
        member->getTemplateKeywordLoc(), member->getMemberDecl(), member->getFoundDecl(),
        member->getMemberNameInfo(), nullptr, member->getType(), member->getValueKind(),
        member->getObjectKind(), member->isNonOdrUse());
    semantics.push_back(clang::CXXMemberCallExpr::Create(context_, callee, values, call.getType(),
                                                         call.getValueKind(), call.getRParenLoc(),
                                                         clang::FPOptionsOverride()));
    remark(call.getExprLoc(), "open", signature);
    return clang::PseudoObjectExpr::Create(context_, &call, semantics, semantics.size() - 1);
}

} // namespace iosig::plugin
