// Sigdefs across precompiled headers. The sigdef table lives in the plugin, not in the AST, so a
// PCH would lose it; every sigdef is therefore also recorded as a macro the PCH does store,
// `__iosig_sigdef_<NAME>` = "<canonical params>", defined at the sigdef's NAME. A TU using the PCH
// finds a NAME it does not know there (lazily, by name) and defines it as if it had read the
// pragma.
#pragma once

#include "iosig/signature.hpp"

#include <clang/Basic/SourceLocation.h>
#include <optional>
#include <string>
#include <string_view>

namespace clang {
class Preprocessor;
} // namespace clang

namespace iosig::plugin {

struct StoredSigdef {
    Signature params;
    clang::SourceLocation name; // the NAME in the (precompiled) header
};

// Records `name` = `params`, defined at `at`, as the macro a PCH carries.
void store_sigdef(clang::Preprocessor& preprocessor, std::string_view name, const Signature& params,
                  clang::SourceLocation at);

// The sigdef `name` recorded by store_sigdef in this TU or in a precompiled header it uses.
std::optional<StoredSigdef> find_stored_sigdef(clang::Preprocessor& preprocessor,
                                               std::string_view name);

// The precompiled header this TU uses, if any (for a note when a NAME is undefined).
std::string precompiled_header_of(const clang::Preprocessor& preprocessor);

} // namespace iosig::plugin
