#include "rules.hpp"

#include "iosig/units.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <yaml-cpp/yaml.h>

namespace iosig::preload {

const Rule* RuleSet::match(std::string_view path) const noexcept {
    for (const Rule& rule : rules_)
        if (rule.pattern.matches(path)) return &rule; // sorted most specific first
    return nullptr;
}

bool RuleSet::excluded(std::string_view path) const noexcept {
    for (const Glob& glob : excludes_)
        if (glob.matches(path)) return true;
    return false;
}

std::string RulesLoadResult::message() const {
    std::string text;
    for (const auto& d : diagnostics) {
        if (!text.empty()) text += '\n';
        text += d.where.file;
        if (d.where.line > 0) text += ":" + std::to_string(d.where.line);
        if (d.where.column > 0) text += ":" + std::to_string(d.where.column);
        text += d.severity == ConfigDiagnostic::Severity::error ? ": error: " : ": warning: ";
        text += d.message;
    }
    return text;
}

class RulesParser {
public:
    explicit RulesParser(std::string name) { set_.file_ = std::move(name); }

    RulesLoadResult parse(std::string_view text) {
        YAML::Node root;
        try {
            root = YAML::Load(std::string(text));
        } catch (const YAML::Exception& e) {
            error_at(e.mark.line + 1, e.mark.column + 1, e.msg);
            return finish();
        }
        if (!root || root.IsNull()) {
            error_at(1, 1, "empty rules file: expected a mapping with a `rules:` list");
            return finish();
        }
        if (!root.IsMap()) {
            error(root, "the rules file must be a mapping with a `rules:` list");
            return finish();
        }
        for (const auto& entry : root) {
            const auto key = entry.first.as<std::string>();
            if (key == "sigdefs")
                parse_sigdefs(entry.second);
            else if (key == "exclude")
                parse_excludes(entry.second);
            else if (key == "options")
                parse_options(entry.second);
            else if (key != "rules")
                warning(entry.first,
                        "unknown key `" + key + "` (expected rules, sigdefs, exclude, options)");
        }
        if (const auto rules = root["rules"]; !rules) {
            error(root, "missing `rules:` list");
        } else if (!rules.IsSequence()) {
            error(rules, "`rules:` must be a list of {match, sig} entries");
        } else {
            for (const auto& rule : rules)
                parse_rule(rule);
        }
        // Most specific first; file order breaks ties (std::sort with the index as last key:
        // libstdc++'s stable_sort trips clang's deprecation of get_temporary_buffer).
        std::sort(set_.rules_.begin(), set_.rules_.end(), [](const Rule& a, const Rule& b) {
            if (a.pattern.literal_count() != b.pattern.literal_count())
                return a.pattern.literal_count() > b.pattern.literal_count();
            if (a.pattern.wildcard_count() != b.pattern.wildcard_count())
                return a.pattern.wildcard_count() < b.pattern.wildcard_count();
            return a.index < b.index;
        });
        return finish();
    }

private:
    SourceLocation location(const YAML::Node& node, std::size_t offset = 0) const {
        const auto mark = node.Mark();
        // A quoted scalar's mark sits on the quote; its text starts one column later.
        const int quote = node.IsScalar() && node.Tag() == "!" ? 1 : 0;
        return {set_.file_, mark.line + 1, mark.column + 1 + quote + static_cast<int>(offset)};
    }
    void error_at(int line, int column, std::string message) {
        result_.diagnostics.push_back(
            {ConfigDiagnostic::Severity::error, {set_.file_, line, column}, std::move(message)});
        failed_ = true;
    }
    void error(const YAML::Node& node, std::string message, std::size_t offset = 0) {
        result_.diagnostics.push_back(
            {ConfigDiagnostic::Severity::error, location(node, offset), std::move(message)});
        failed_ = true;
    }
    void warning(const YAML::Node& node, std::string message) {
        result_.diagnostics.push_back(
            {ConfigDiagnostic::Severity::warning, location(node), std::move(message)});
    }

    std::optional<std::string> scalar(const YAML::Node& node, std::string_view what) {
        if (!node.IsScalar()) {
            error(node, std::string(what) + " must be a string");
            return std::nullopt;
        }
        return node.Scalar();
    }

    void report_sig_errors(const YAML::Node& node, const std::vector<SigError>& errors) {
        for (const auto& e : errors) {
            // The core's message already names the suggested replacement.
            error(node, "signature: " + e.message, e.offset);
        }
    }

    void parse_sigdefs(const YAML::Node& node) {
        auto define = [&](const YAML::Node& where, std::string name, const YAML::Node& params) {
            const auto text = scalar(params, "a sigdef's parameters");
            if (!text) return;
            auto parsed = resolve_sig(*text, set_.sigdefs_);
            if (!parsed) return report_sig_errors(params, parsed.errors);
            if (!set_.sigdefs_.define(name, *parsed.value))
                error(where, "sigdef `" + name + "` is defined twice");
        };
        if (node.IsMap()) {
            for (const auto& entry : node)
                define(entry.first, entry.first.as<std::string>(), entry.second);
        } else if (node.IsSequence()) {
            // - "sigdef NAME params"
            for (const auto& item : node) {
                const auto text = scalar(item, "a sigdef");
                if (!text) continue;
                auto parsed = parse_directive(*text);
                if (!parsed) {
                    report_sig_errors(item, parsed.errors);
                    continue;
                }
                if (parsed.value->kind != DirectiveKind::sigdef || !parsed.value->name) {
                    error(item, "expected `sigdef NAME params`");
                    continue;
                }
                Signature signature = parsed.value->params;
                if (!set_.sigdefs_.define(*parsed.value->name, signature))
                    error(item, "sigdef `" + *parsed.value->name + "` is defined twice");
            }
        } else {
            error(node, "`sigdefs:` must map NAME to parameters");
        }
    }

    void parse_excludes(const YAML::Node& node) {
        if (!node.IsSequence()) return error(node, "`exclude:` must be a list of patterns");
        for (const auto& item : node) {
            const auto text = scalar(item, "an exclude pattern");
            if (!text) continue;
            GlobError glob_error;
            if (auto glob = Glob::compile(*text, &glob_error))
                set_.excludes_.push_back(std::move(*glob));
            else
                error(item, glob_error.message, glob_error.offset);
        }
    }

    void parse_options(const YAML::Node& node) {
        if (!node.IsMap()) return error(node, "`options:` must be a mapping");
        for (const auto& entry : node) {
            const auto key = entry.first.as<std::string>();
            const auto& value = entry.second;
            if (key == "keep_global") {
                const auto text = scalar(value, "keep_global");
                if (!text) continue;
                if (*text == "true" || *text == "yes")
                    set_.options_.keep_global = true;
                else if (*text == "false" || *text == "no")
                    set_.options_.keep_global = false;
                else
                    error(value, "keep_global must be true or false");
            } else if (key == "min_free") {
                const auto text = scalar(value, "min_free");
                if (!text) continue;
                const auto size = parse_size(*text);
                if (!size)
                    error(value, "min_free: " + size.error.message, size.error.offset);
                else
                    set_.options_.min_free = *size.value;
            } else {
                warning(entry.first,
                        "unknown option `" + key + "` (expected keep_global, min_free)");
            }
        }
    }

    void parse_rule(const YAML::Node& node) {
        if (!node.IsMap()) return error(node, "a rule must be a mapping with `match:` and `sig:`");
        for (const auto& entry : node) {
            const auto key = entry.first.as<std::string>();
            if (key != "match" && key != "sig")
                warning(entry.first, "unknown rule key `" + key + "` (expected match, sig)");
        }
        const auto match = node["match"];
        if (!match) return error(node, "rule without `match:`");
        const auto pattern_text = scalar(match, "`match:`");
        if (!pattern_text) return;
        GlobError glob_error;
        auto glob = Glob::compile(*pattern_text, &glob_error);
        if (!glob) return error(match, glob_error.message, glob_error.offset);

        Rule rule{std::move(*glob), std::nullopt, {}, location(match), set_.rules_.size()};
        if (const auto sig = node["sig"]) {
            const auto text = scalar(sig, "`sig:`");
            if (!text) return;
            auto parsed = resolve_sig(*text, set_.sigdefs_);
            if (!parsed) return report_sig_errors(sig, parsed.errors);
            rule.signature = *parsed.value;
            rule.signature_text = to_canonical(*parsed.value);
        }
        set_.rules_.push_back(std::move(rule));
    }

    RulesLoadResult finish() {
        if (!failed_) result_.rules = std::move(set_);
        std::vector<ConfigDiagnostic> ordered; // errors first, each kind in file order
        for (auto severity :
             {ConfigDiagnostic::Severity::error, ConfigDiagnostic::Severity::warning})
            for (auto& d : result_.diagnostics)
                if (d.severity == severity) ordered.push_back(std::move(d));
        result_.diagnostics = std::move(ordered);
        return std::move(result_);
    }

    RuleSet set_;
    RulesLoadResult result_;
    bool failed_ = false;
};

RulesLoadResult load_rules_text(std::string_view text, std::string_view name) {
    try {
        return RulesParser(std::string(name)).parse(text);
    } catch (const std::exception& e) {
        RulesLoadResult result;
        result.diagnostics.push_back(
            {ConfigDiagnostic::Severity::error, {std::string(name), 0, 0}, e.what()});
        return result;
    }
}

RulesLoadResult load_rules_file(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
        RulesLoadResult result;
        result.diagnostics.push_back(
            {ConfigDiagnostic::Severity::error,
             {file.string(), 0, 0},
             "cannot read the rules file: " + std::string(std::strerror(errno))});
        return result;
    }
    std::ostringstream text;
    text << in.rdbuf();
    return load_rules_text(text.str(), file.string());
}

} // namespace iosig::preload
