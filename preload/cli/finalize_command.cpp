// `iosig finalize [--job ID] [--recover] [--force] [--state DIR]`: bring a job's redirected files
// home (persist) or delete them (temp). Idempotent; --recover finishes a run that never ended.
#include "commands.hpp"
#include "common/layout.hpp"
#include "tools/finalize.hpp"

#include <cstdio>
#include <filesystem>

namespace iosig::cli {
namespace {

using namespace iosig::preload;

struct FinalizeCommandOptions {
    std::string job;
    std::string state;
    bool recover = false;
    bool force = false;
    bool quiet = false;
};

bool finalize_one(const FinalizeCommandOptions& options, const std::string& state,
                  const std::string& job) {
    const FinalizeResult result =
        finalize_job({state, job, std::nullopt, options.recover, options.force});
    for (const auto& error : result.errors)
        std::fprintf(stderr, "iosig finalize: %s\n", error.c_str());
    for (const auto& item : result.items) {
        if (options.quiet && item.action != FinalizeAction::failed &&
            item.action != FinalizeAction::in_use && item.action != FinalizeAction::orphan_kept)
            continue;
        std::printf("%-26s %s  (%s)\n", to_string(item.action).c_str(), item.path.c_str(),
                    item.detail.c_str());
    }
    for (const auto& left : result.left_in_staging)
        std::printf("%-26s %s  (not in the journal: left alone)\n", "left in staging",
                    left.c_str());
    if (result.damaged_lines != 0)
        std::fprintf(
            stderr,
            "iosig finalize: %zu damaged journal line(s) ignored (a record torn by a crash)\n",
            result.damaged_lines);
    std::printf(
        "job %s: %zu home, %zu temp deleted, %zu kept on global mounts, %zu already done%s\n",
        job.c_str(),
        result.count(FinalizeAction::renamed_home) + result.count(FinalizeAction::copied_home),
        result.count(FinalizeAction::deleted_temp), result.count(FinalizeAction::kept_global),
        result.count(FinalizeAction::already_done) + result.count(FinalizeAction::nothing_left),
        result.ok() ? "" : ": NOT COMPLETE");
    return result.ok();
}

int finalize(const FinalizeCommandOptions& options) {
    const std::string state = options.state.empty() ? default_state_dir() : options.state;
    std::string job = options.job.empty() ? job_from_environment() : sanitize_job_id(options.job);
    if (job.empty()) {
        const auto jobs = unfinished_jobs(state);
        if (!options.recover) {
            const std::string none =
                jobs.empty() ? "; no job in " + state + " has unfinished files" : "";
            std::fprintf(stderr, "iosig finalize: which job? (--job ID, or $IOSIG_JOB)%s\n",
                         none.c_str());
            for (const auto& j : jobs)
                std::fprintf(stderr, "  unfinished: %s\n", j.c_str());
            return exit_bad_input;
        }
        bool ok = true;
        for (const auto& j : jobs)
            ok = finalize_one(options, state, j) && ok;
        if (jobs.empty()) std::printf("no unfinished job in %s\n", state.c_str());
        return ok ? exit_ok : exit_failure;
    }
    return finalize_one(options, state, job) ? exit_ok : exit_failure;
}

} // namespace

void register_finalize_command(CLI::App& app, Context& context) {
    auto options = std::make_shared<FinalizeCommandOptions>();
    auto* sub = app.add_subcommand(
        "finalize", "Move a job's redirected persist files home and delete its temp files");
    sub->add_option("--job", options->job, "Job id (default: $IOSIG_JOB or $SLURM_JOB_ID)");
    sub->add_flag(
        "--recover", options->recover,
        "Finish a job whose run did not end (crash, kill -9); without --job: every unfinished job");
    sub->add_flag("--force", options->force, "Move files even if a process still has them open");
    sub->add_option("--state", options->state,
                    "State directory (default: $IOSIG_STATE or ~/.local/state/iosig)");
    sub->add_flag("--quiet", options->quiet, "Only print problems and the summary");
    sub->callback([options, &context] { context.exit_code = finalize(*options); });
}

} // namespace iosig::cli
