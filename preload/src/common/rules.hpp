// Rule files: which paths carry which signature (docs/preload.md, "Rules file").
//
//   sigdefs:                     # optional: NAME: params (the core signature language)
//     ckpt: "sequential persist size-per-IO(64M)"
//   exclude: ["/scratch/keep/**"]  # optional: never tracked, never redirected
//   options:                     # optional
//     keep_global: false         # finalize leaves persist data that sits on a global mount there
//     min_free: 64M              # a mount needs this much free space for a file without totalsize
//   rules:
//     - match: "/scratch/**/ckpt-*.h5"
//       sig: "ckpt totalsize(20G)"
//     - match: "*.log"           # no sig: statistics only (and `iosig report --suggest`)
//
// The most specific matching rule wins: most literal characters, then fewest wildcards, then the
// one written first. Errors name file:line:col.
#pragma once

#include "glob.hpp"
#include "iosig/node_yaml.hpp"
#include "iosig/signature.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iosig::preload {

struct Rule {
    Glob pattern;
    std::optional<Signature> signature; // nullopt: track only
    std::string signature_text;         // canonical form of `signature`
    SourceLocation where;               // of the `match:` value
    std::size_t index = 0;              // position in the file (0-based)
};

struct RuleOptions {
    bool keep_global = false;
    std::uint64_t min_free = std::uint64_t{64} << 20;
};

class RuleSet {
public:
    // The winning rule for an absolute normalized path, or nullptr. No allocation.
    const Rule* match(std::string_view path) const noexcept;
    bool excluded(std::string_view path) const noexcept;

    const std::vector<Rule>& rules() const { return rules_; } // most specific first
    const std::vector<Glob>& excludes() const { return excludes_; }
    const RuleOptions& options() const { return options_; }
    const SigdefTable& sigdefs() const { return sigdefs_; }
    const std::string& file() const { return file_; }

private:
    friend class RulesParser;
    std::vector<Rule> rules_;
    std::vector<Glob> excludes_;
    RuleOptions options_;
    SigdefTable sigdefs_;
    std::string file_;
};

struct RulesLoadResult {
    std::optional<RuleSet> rules;              // set iff no error
    std::vector<ConfigDiagnostic> diagnostics; // errors, then warnings
    bool ok() const { return rules.has_value(); }
    // All diagnostics, one per line, "file:line:col: error: message".
    std::string message() const;
};

RulesLoadResult load_rules_file(const std::filesystem::path& file);
RulesLoadResult load_rules_text(std::string_view text, std::string_view name = "<rules>");

} // namespace iosig::preload
