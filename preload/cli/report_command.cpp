// `iosig report [FILE] [--json] [--suggest]`: what a job did per file, and signatures it calls for.
#include "commands.hpp"
#include "common/layout.hpp"
#include "tools/job_journal.hpp"
#include "tools/report_model.hpp"

#include <cstdio>
#include <filesystem>
#include <iostream>

namespace iosig::cli {
namespace {

namespace fs = std::filesystem;
using namespace iosig::preload;

struct ReportOptions {
    std::string file;
    std::string job;
    std::string state;
    bool json = false;
    bool suggest = false;
};

// The job's report.jsonl, else the most recently written one in the state directory.
std::string default_report(const ReportOptions& options, const std::string& state) {
    const std::string job =
        options.job.empty() ? job_from_environment() : sanitize_job_id(options.job);
    if (!job.empty()) return job_layout(state, job).reports;
    std::error_code ec;
    fs::path newest;
    fs::file_time_type newest_time{};
    for (const auto& entry : fs::directory_iterator(fs::path(state) / "jobs", ec)) {
        const auto candidate = entry.path() / "report.jsonl";
        std::error_code time_ec;
        const auto time = fs::last_write_time(candidate, time_ec);
        if (!time_ec && (newest.empty() || time > newest_time)) {
            newest = candidate;
            newest_time = time;
        }
    }
    return newest.string();
}

int report(const ReportOptions& options) {
    const std::string state = options.state.empty() ? default_state_dir() : options.state;
    const std::string file = options.file.empty() ? default_report(options, state) : options.file;
    if (file.empty()) {
        std::fprintf(stderr, "iosig report: no report found in %s (give FILE or --job)\n",
                     state.c_str());
        return exit_bad_input;
    }
    std::vector<nlohmann::json> processes;
    try {
        processes = read_process_reports(file);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "iosig report: %s\n", e.what());
        return exit_bad_input;
    }
    // The journal beside a job's report says where inherited descriptors came from and how it
    // ended.
    JobJournal journal;
    const fs::path beside = fs::path(file).parent_path() / "journal";
    if (fs::exists(beside)) journal = read_job_journal(beside);
    JobReport merged = build_report(processes, journal.exists ? &journal : nullptr);
    add_recorded_outcomes(merged, file);
    if (options.json) {
        auto document = to_json(merged);
        if (options.suggest) document["suggestions"] = to_json(suggest(merged));
        std::cout << document.dump(2) << "\n";
    } else {
        std::cout << render_table(merged);
        if (options.suggest) std::cout << "\n" << render_suggestions(suggest(merged));
    }
    return exit_ok;
}

} // namespace

void register_report_command(CLI::App& app, Context& context) {
    auto options = std::make_shared<ReportOptions>();
    auto* sub = app.add_subcommand(
        "report", "What a job did per file (where it went, why, observed throughput)");
    sub->add_option("file", options->file,
                    "Report: a job's report.jsonl or the JSON `iosig run` wrote");
    sub->add_option("--job", options->job,
                    "Job whose report to read (default: $IOSIG_JOB, else the latest)");
    sub->add_option("--state", options->state,
                    "State directory (default: $IOSIG_STATE or ~/.local/state/iosig)");
    sub->add_flag("--json", options->json, "Machine-readable output");
    sub->add_flag("--suggest", options->suggest,
                  "Infer a signature per file (or group) as a rule and a pragma");
    sub->callback([options, &context] { context.exit_code = report(*options); });
}

} // namespace iosig::cli
