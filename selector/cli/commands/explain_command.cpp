// `iosig explain --config FILE... --sig "SIGNATURE" [--json]`: which mount a stream would go to,
// and why every other mount would not (docs/selection.md, "iosig explain").
#include "commands.hpp"
#include "iosig/node_yaml.hpp"
#include "iosig/selection.hpp"
#include "iosig/signature.hpp"
#include "iosig/throughput.hpp"
#include "iosig/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace iosig::cli {
namespace {

struct ExplainOptions {
    std::vector<std::string> configs;
    std::string signature;
    bool json = false;
};

std::string_view reason_code(ExclusionReason reason) {
    switch (reason) {
    case ExclusionReason::not_global:
        return "not_global";
    case ExclusionReason::not_local:
        return "not_local";
    case ExclusionReason::is_volatile:
        return "volatile";
    case ExclusionReason::mttdl_too_low:
        return "mttdl_too_low";
    case ExclusionReason::loss_too_likely:
        return "loss_too_likely";
    case ExclusionReason::not_archive:
        return "not_archive";
    case ExclusionReason::not_tamperproof:
        return "not_tamperproof";
    case ExclusionReason::too_small:
        return "too_small";
    case ExclusionReason::file_too_large:
        return "file_too_large";
    }
    return "?";
}

// The signature with a caret line under every problem, as `iosig sig check` shows it.
void report_signature_errors(std::string_view text, const std::vector<SigError>& errors) {
    for (const SigError& e : errors) {
        std::fprintf(stderr, "iosig explain: --sig:%zu: error: %s\n", e.offset + 1,
                     e.message.c_str());
        const std::size_t offset = std::min(e.offset, text.size());
        const std::size_t length =
            std::max<std::size_t>(1, std::min(e.length, text.size() - offset));
        std::fprintf(stderr, "  %.*s\n  %s^%s\n", static_cast<int>(text.size()), text.data(),
                     std::string(offset, ' ').c_str(), std::string(length - 1, '~').c_str());
        if (e.replacement && e.message.find("'" + *e.replacement + "'") == std::string::npos)
            std::fprintf(stderr, "  %sdid you mean '%s'?\n", std::string(offset, ' ').c_str(),
                         e.replacement->c_str());
    }
}

std::string mttdl_text(double seconds) {
    return seconds > 0 ? human_mttdl(seconds) : std::string("not reliable");
}

void print_table(const Selection& s, const Signature& sig, const SelectionContext& context) {
    const std::uint64_t mttdl_size = sig.total_size.value_or(default_reliability_file_size);
    fmt::print("signature:   {}\n", to_canonical(sig).empty() ? "(no demands)" : to_canonical(sig));
    fmt::print("size-per-IO: {}{}\n", human_size(static_cast<double>(s.size_per_io)),
               sig.size_per_io ? "" : " (default: the signature gives none)");
    if (sig.availability)
        fmt::print("job lifetime: {} ({})\n", human_duration(context.job_lifetime),
                   context.job_lifetime_source);
    fmt::print("\n");

    struct Row {
        std::string mount, device, fs, eligible, throughput, mttdl;
    };
    std::vector<Row> rows{{"MOUNT", "DEVICE", "FS", "ELIGIBLE", "THROUGHPUT",
                           fmt::format("MTTDL ({})", human_size(static_cast<double>(mttdl_size)))}};
    for (const Candidate& c : s.candidates)
        rows.push_back(
            {c.mount->path, c.mount->device, c.mount->fs_type.empty() ? "-" : c.mount->fs_type,
             c.eligible ? "yes" : "no", human_bandwidth(c.throughput), mttdl_text(c.mttdl)});
    std::size_t w[5] = {};
    for (const Row& r : rows) {
        w[0] = std::max(w[0], r.mount.size());
        w[1] = std::max(w[1], r.device.size());
        w[2] = std::max(w[2], r.fs.size());
        w[3] = std::max(w[3], r.eligible.size());
        w[4] = std::max(w[4], r.throughput.size());
    }
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        const bool chosen = i > 0 && s.choice && *s.choice == i - 1;
        fmt::print("{} {:<{}}  {:<{}}  {:<{}}  {:<{}}  {:>{}}  {}\n", chosen ? '*' : ' ', r.mount,
                   w[0], r.device, w[1], r.fs, w[2], r.eligible, w[3], r.throughput, w[4], r.mttdl);
        if (i == 0) continue;
        for (const Exclusion& e : s.candidates[i - 1].exclusions)
            fmt::print("      - {}\n", e.text);
    }
    fmt::print("\n");
    if (const Mount* m = s.chosen()) {
        fmt::print("choice: {} (device {}, {} predicted)\n", m->path, m->device,
                   human_bandwidth(s.candidates[*s.choice].throughput));
        if (!s.tie_break.empty()) fmt::print("tie: {}\n", s.tie_break);
    } else {
        fmt::print("choice: none: no mount satisfies the signature (reasons above)\n");
    }
}

nlohmann::json to_json(const Selection& s, const Signature& sig, const SelectionContext& context) {
    using nlohmann::json;
    auto number_or_null = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
    json candidates = json::array();
    for (const Candidate& c : s.candidates) {
        json reasons = json::array(), codes = json::array();
        for (const Exclusion& e : c.exclusions) {
            reasons.push_back(e.text);
            codes.push_back(reason_code(e.reason));
        }
        candidates.push_back({{"mount", c.mount->path},
                              {"device", c.mount->device},
                              {"fs_type", c.mount->fs_type},
                              {"labels", c.mount->labels},
                              {"global", c.mount->global},
                              {"eligible", c.eligible},
                              {"reasons", reasons},
                              {"reason_codes", codes},
                              {"throughput_bytes_per_s", c.throughput},
                              {"mttdl_seconds", number_or_null(c.mttdl)},
                              {"mttdl_basis", c.mttdl_basis}});
    }
    json choice = nullptr;
    if (const Mount* m = s.chosen())
        choice = {{"mount", m->path},
                  {"label", m->labels.empty() ? json(nullptr) : json(m->labels.front())},
                  {"labels", m->labels},
                  {"device", m->device},
                  {"throughput_bytes_per_s", s.candidates[*s.choice].throughput}};
    return {{"signature", to_canonical(sig)},
            {"size_per_io", s.size_per_io},
            {"size_per_io_defaulted", !sig.size_per_io.has_value()},
            {"mttdl_file_size", sig.total_size.value_or(default_reliability_file_size)},
            {"job_lifetime_seconds", context.job_lifetime},
            {"job_lifetime_source", context.job_lifetime_source},
            {"choice", choice},
            {"tie_break", s.tie_break.empty() ? json(nullptr) : json(s.tie_break)},
            {"candidates", candidates}};
}

int run_explain(const ExplainOptions& options) {
    const Parsed<Signature> sig = resolve_sig(options.signature, SigdefTable{});
    if (!sig) {
        report_signature_errors(options.signature, sig.errors);
        return exit_bad_input;
    }
    std::vector<std::filesystem::path> files(options.configs.begin(), options.configs.end());
    const NodeLoadResult loaded = load_node_files(files);
    for (const ConfigDiagnostic& d : loaded.diagnostics)
        std::fprintf(stderr, "%s\n", d.format().c_str());
    if (!loaded.ok()) {
        if (loaded.diagnostics.empty())
            std::fprintf(stderr, "iosig explain: the node configuration did not load\n");
        return exit_bad_input;
    }
    const SelectionContext context = selection_context_from_environment();
    const Selection selection = select_mount(*loaded.node, *sig.value, context);
    if (options.json)
        fmt::print("{}\n", to_json(selection, *sig.value, context).dump(2));
    else
        print_table(selection, *sig.value, context);
    if (!selection.choice) {
        std::fprintf(stderr, "iosig explain: no mount of node '%s' satisfies \"%s\"\n",
                     loaded.node->name.c_str(), to_canonical(*sig.value).c_str());
        return exit_no_choice;
    }
    return exit_ok;
}

} // namespace

void register_explain_command(CLI::App& app, Context& context) {
    auto options = std::make_shared<ExplainOptions>();
    CLI::App* explain = app.add_subcommand(
        "explain",
        "Show which mount a signature selects on a node, and why every other mount is not chosen");
    explain
        ->add_option("--config,-c", options->configs,
                     "Node YAML file; several are layered in order")
        ->required()
        ->check(CLI::ExistingFile);
    explain
        ->add_option(
            "--sig,-s", options->signature,
            "The signature, e.g. \"random persist size-per-IO(16M) totalsize(6G)\" (a leading "
            "`sig` is accepted)")
        ->required();
    explain->add_flag("--json", options->json, "Print the selection as JSON");
    explain->footer(
        "Exit status: 0 a mount was chosen, 2 bad input, 3 no mount satisfies the signature.\n"
        "Environment: IOSIG_JOB_LIFETIME (or Slurm's job times) sets the lifetime `availability` "
        "is evaluated over.");
    explain->callback([options, &context] { context.exit_code = run_explain(*options); });
}

} // namespace iosig::cli
