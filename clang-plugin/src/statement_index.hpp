// Where statements stand in a declaration's bodies, and which one a pragma at some location
// annotates (docs/plugin.md, "Which statement a #pragma sig annotates"):
//
// The first statement that begins after the pragma in the same block: a statement of a `{}` block
// or the body/branch of a control statement, never a block itself (a pragma before `{` annotates
// the block's first statement). No `}` may lie between pragma and statement (a pragma at the end of
// a block annotates nothing) and the statement's block must have begun before the pragma (a pragma
// before a function's definition does not reach into its body).
#pragma once

#include <clang/Basic/SourceLocation.h>
#include <vector>

namespace clang {
class CXXRecordDecl;
class Decl;
class FunctionDecl;
class SourceManager;
class Stmt;
} // namespace clang

namespace iosig::plugin {

// A place where a statement can stand.
struct Position {
    clang::Stmt** slot;
    clang::SourceLocation begin;
    clang::SourceLocation
        container;  // `{` of its block, or the keyword of the statement it is a body of
    bool dependent; // in a template pattern or generic lambda: rewritten per instantiation
    bool block;     // a `{}` standing as a statement: the pragma goes to its first statement
};

struct StatementIndex {
    std::vector<Position> positions;
    std::vector<clang::SourceLocation> closings; // every block's `}`

    // The statement a pragma at `pragma` annotates, or null.
    const Position* next_statement(clang::SourceLocation pragma,
                                   const clang::SourceManager& sources) const;
};

// Fills a StatementIndex from declarations' bodies (and lambdas, local classes, member
// initialisers).
class IndexBuilder {
public:
    explicit IndexBuilder(StatementIndex& index) : index_(index) {}

    // Any declaration that can hold statements: functions, classes (their members), variables
    // (lambdas in their initialisers). `dependent`: inside a template pattern.
    void add_decl(clang::Decl& decl, bool dependent);
    void add_function(clang::FunctionDecl& function, bool dependent);
    void add_record(clang::CXXRecordDecl& record, bool dependent);

private:
    void walk(clang::Stmt*& slot, clang::SourceLocation container, bool is_position,
              bool dependent);

    StatementIndex& index_;
};

} // namespace iosig::plugin
