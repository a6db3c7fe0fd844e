// Rewriting of the open calls a `#pragma sig` annotates (docs/plugin.md, "What is rewritten").
//
// A C call `open(a, b, c)` becomes, as one expression that Clang's code generator understands:
//     evaluate a, b, c once, left to right, into temporaries ta, tb, tc
//     iosig_open ? iosig_open("<canonical>", ta, tb, tc) : open(ta, tb, tc)
// where iosig_open is a weak reference: without an iosig runtime in the process the plain call
// runs. A C++ file stream constructor or `.open` keeps its call; after its arguments are evaluated
// (and before the stream opens) `iosig_prepare_path("<canonical>", path, flags-of-mode)` plants the
// redirection, again only when the runtime is present.
#pragma once

#include <clang/AST/Stmt.h>
#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/StringRef.h>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace clang {
class ASTContext;
class CXXConstructExpr;
class CXXMemberCallExpr;
class CXXRecordDecl;
class CallExpr;
class DeclContext;
class Expr;
class FunctionDecl;
class QualType;
class Sema;
} // namespace clang

namespace iosig::plugin {

class PluginState;

class CallRewriter {
public:
    CallRewriter(clang::ASTContext& context, clang::Sema& sema, PluginState& state);

    struct Outcome {
        unsigned rewritten = 0;
        // Calls that look like opens but are not the C library's or the standard library's (a local
        // `open`, a stream class of another library): where, and why they were left alone.
        std::vector<std::pair<clang::SourceLocation, std::string>> declined;
    };

    // Rewrites every supported open call in the statement held by `slot`, looking only at its own
    // expressions (conditions, initialisers, operands), not into nested statements or lambdas.
    Outcome rewrite_statement(clang::Stmt*& slot, llvm::StringRef signature);

private:
    enum class StreamKind { input, output, both };

    void walk(clang::Stmt*& slot, bool root, llvm::StringRef signature, Outcome& outcome);
    clang::Expr* rewrite(clang::Expr& expression, llvm::StringRef signature, Outcome& outcome);
    clang::Expr* rewrite_c_call(clang::CallExpr& call, llvm::StringRef signature, Outcome& outcome);
    clang::Expr* rewrite_stream_construct(clang::CXXConstructExpr& construct,
                                          llvm::StringRef signature, Outcome& outcome);
    clang::Expr* rewrite_stream_open(clang::CXXMemberCallExpr& call, llvm::StringRef signature,
                                     Outcome& outcome);
    // `iosig_prepare_path && iosig_prepare_path(signature, path, flags)`, or null with `why` set.
    clang::Expr* stream_prepare(clang::Expr* path, clang::Expr* mode, StreamKind kind,
                                llvm::StringRef signature, std::string& why);
    static std::optional<StreamKind> stream_kind(const clang::CXXRecordDecl* record);

    // A weak extern "C" declaration of a runtime entry point (made once, invisible to name lookup).
    clang::FunctionDecl* runtime_function(llvm::StringRef name, clang::QualType result,
                                          llvm::ArrayRef<clang::QualType> params, bool variadic);
    void remark(clang::SourceLocation at, llvm::StringRef callee, llvm::StringRef signature);

    clang::ASTContext& context_;
    clang::Sema& sema_;
    PluginState& state_;
    // The weak runtime declarations made so far, by name.
    llvm::DenseMap<llvm::StringRef, clang::FunctionDecl*> runtime_decls_;
    clang::DeclContext* c_linkage_ = nullptr;
};

// Statements whose children are statements of their own (bodies, branches), as opposed to the
// expressions they evaluate: the rewriter does not enter them, the consumer treats them as
// positions.
bool is_substatement_slot(const clang::Stmt* parent, const clang::Stmt* child);

} // namespace iosig::plugin
