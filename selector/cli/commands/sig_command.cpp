// `iosig sig check [--json] [--def "sigdef NAME ..."]... SIGNATURE...`: the canonical form of a
// signature or directive (exit 0), or every problem with a caret under it and the fix (exit 2).
// The words of SIGNATURE may be given as one argument or several; they are joined with blanks.
// Language reference: docs/signatures.md.
#include "commands.hpp"
#include "iosig/signature.hpp"

#include <cctype>
#include <cstdio>
#include <fmt/format.h>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace iosig::cli {
namespace {

struct CheckOptions {
    std::vector<std::string> words;
    std::vector<std::string> definitions;
    bool json = false;
};

// What was checked and what came out of it.
struct Outcome {
    std::string text;
    std::string what; // "signature", "sig" or "sigdef"
    std::vector<SigError> errors;
    std::string canonical;
    std::optional<std::string> name;
    std::optional<Signature>
        signature; // the parameters (resolved through --def when a NAME is used)
};

std::string join(const std::vector<std::string>& words) {
    std::string text;
    for (const std::string& word : words)
        text += (text.empty() ? "" : " ") + word;
    return text;
}

std::string first_word(std::string_view text) {
    std::size_t begin = 0;
    while (begin < text.size() && std::isspace(static_cast<unsigned char>(text[begin])))
        ++begin;
    std::size_t end = begin;
    while (end < text.size() && std::isalpha(static_cast<unsigned char>(text[end])))
        ++end;
    std::string word(text.substr(begin, end - begin));
    for (char& c : word)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return word;
}

Outcome check(const std::string& text, const SigdefTable& table, bool resolve_names) {
    Outcome out;
    out.text = text;
    const std::string head = first_word(text);
    const bool pasted_pragma = text.find_first_not_of(" \t") != std::string::npos &&
                               text[text.find_first_not_of(" \t")] == '#';
    if (head == "sigdef" || (head == "sig" && !resolve_names) || pasted_pragma) {
        auto parsed = parse_directive(text);
        out.what = parsed && parsed.value->kind == DirectiveKind::sigdef ? "sigdef"
                   : head == "sigdef"                                    ? "sigdef"
                                                                         : "sig";
        out.errors = std::move(parsed.errors);
        if (parsed) {
            out.canonical = to_canonical(*parsed.value);
            out.name = parsed.value->name;
            out.signature = parsed.value->params;
        }
        return out;
    }
    if (resolve_names) {
        // "sig ckpt temp" or "ckpt temp": NAME looked up among the --def definitions.
        out.what = head == "sig" ? "sig" : "signature";
        auto resolved = resolve_sig(text, table);
        out.errors = std::move(resolved.errors);
        if (resolved) {
            out.signature = *resolved.value;
            out.canonical = to_canonical(*resolved.value);
        }
        return out;
    }
    out.what = "signature";
    auto parsed = parse_signature(text);
    out.errors = std::move(parsed.errors);
    if (parsed) {
        out.signature = *parsed.value;
        out.canonical = to_canonical(*parsed.value);
    }
    return out;
}

// The text with every suggested fix applied, if that makes it valid.
std::optional<std::string> corrected(const Outcome& outcome, const SigdefTable& table,
                                     bool resolve_names) {
    auto fixed = apply_replacements(outcome.text, outcome.errors);
    if (!fixed || !check(*fixed, table, resolve_names).errors.empty()) return std::nullopt;
    return fixed;
}

void print_errors(const std::string& where, const Outcome& outcome,
                  const std::optional<std::string>& fix) {
    for (const SigError& error : outcome.errors) {
        std::string rendered = render_sig_error(outcome.text, error);
        std::fprintf(stderr, "%s:%zu: error: %s", where.c_str(), error.offset + 1,
                     rendered.c_str());
    }
    if (fix) std::fprintf(stderr, "did you mean: %s\n", fix->c_str());
}

nlohmann::json signature_json(const Signature& s) {
    using nlohmann::json;
    const auto choice = [](auto value, const char* first, const char* second) -> json {
        switch (static_cast<int>(value)) {
        case 1:
            return first;
        case 2:
            return second;
        default:
            return nullptr;
        }
    };
    const auto optional = [](const auto& value) -> json {
        return value ? json(*value) : json(nullptr);
    };
    return json{{"visibility", choice(s.visibility, "global", "local")},
                {"pattern", choice(s.pattern, "random", "sequential")},
                {"persistence", choice(s.persistence, "persist", "temp")},
                {"size_per_io_bytes", optional(s.size_per_io)},
                {"total_size_bytes", optional(s.total_size)},
                {"mttdl_seconds", optional(s.mttdl_seconds)},
                {"availability", optional(s.availability)},
                {"archive", s.archive},
                {"tamperproof", s.tamperproof}};
}

nlohmann::json errors_json(const std::vector<SigError>& errors) {
    nlohmann::json list = nlohmann::json::array();
    for (const SigError& e : errors)
        list.push_back({{"offset", e.offset},
                        {"length", e.length},
                        {"column", e.offset + 1},
                        {"message", e.message},
                        {"replacement", e.replacement ? nlohmann::json(*e.replacement)
                                                      : nlohmann::json(nullptr)}});
    return list;
}

int run_check(const CheckOptions& options) {
    SigdefTable table;
    nlohmann::json json_definitions = nlohmann::json::array();
    bool bad_definition = false;
    for (std::size_t i = 0; i < options.definitions.size(); ++i) {
        const std::string& text = options.definitions[i];
        const std::string where = fmt::format("--def {}", i + 1);
        Outcome outcome = check(text, table, false);
        if (outcome.errors.empty() && outcome.what != "sigdef")
            outcome.errors.push_back(
                {0, 0, "--def takes a definition: sigdef NAME params...", "sigdef NAME "});
        if (outcome.errors.empty() && !table.define(*outcome.name, *outcome.signature)) {
            const std::size_t at = parse_directive(text).value->name_offset;
            outcome.errors.push_back({at, outcome.name->size(),
                                      fmt::format("'{}' is defined twice", *outcome.name),
                                      std::nullopt});
        }
        if (!outcome.errors.empty()) {
            bad_definition = true;
            if (!options.json) print_errors("iosig sig check: " + where, outcome, std::nullopt);
        }
        json_definitions.push_back(
            {{"text", text},
             {"ok", outcome.errors.empty()},
             {"canonical", outcome.errors.empty() ? nlohmann::json(outcome.canonical) : nullptr},
             {"errors", errors_json(outcome.errors)}});
    }

    const std::string text = join(options.words);
    const bool resolve_names = !options.definitions.empty();
    const Outcome outcome = check(text, table, resolve_names);
    const bool ok = outcome.errors.empty() && !bad_definition;
    const std::optional<std::string> fix =
        outcome.errors.empty() ? std::nullopt : corrected(outcome, table, resolve_names);

    if (options.json) {
        nlohmann::json report{{"ok", ok},
                              {"text", text},
                              {"kind", outcome.what},
                              {"errors", errors_json(outcome.errors)}};
        if (outcome.errors.empty()) {
            report["canonical"] = outcome.canonical;
            report["signature"] = signature_json(*outcome.signature);
            if (outcome.name) report["name"] = *outcome.name;
        }
        if (fix) report["suggestion"] = *fix;
        if (!options.definitions.empty()) report["definitions"] = json_definitions;
        std::fputs((report.dump(2) + "\n").c_str(), stdout);
    } else if (outcome.errors.empty()) {
        std::fputs((outcome.canonical + "\n").c_str(), stdout);
    } else {
        print_errors("iosig sig check", outcome, fix);
    }
    return ok ? exit_ok : exit_bad_input;
}

} // namespace

void register_sig_command(CLI::App& app, Context& context) {
    CLI::App* sig = app.add_subcommand("sig", "Check IO signatures (docs/signatures.md)");
    sig->require_subcommand(1);

    auto options = std::make_shared<CheckOptions>();
    CLI::App* check_command =
        sig->add_subcommand("check", "Print the canonical form of a signature or sig/sigdef "
                                     "directive, or its errors with a caret "
                                     "under each and the fix (exit status 2)");
    check_command
        ->add_option(
            "signature", options->words,
            "The signature, e.g. \"random persist size-per-IO(16M)\", or a directive "
            "\"sig NAME params\" / \"sigdef NAME params\" (several words are joined with blanks)")
        ->required();
    check_command->add_option(
        "--def", options->definitions,
        "A definition \"sigdef NAME params\" that the signature may use by NAME (repeatable)");
    check_command->add_flag("--json", options->json, "Print a JSON report instead of text");
    check_command->callback([options, &context] { context.exit_code = run_check(*options); });
}

} // namespace iosig::cli
