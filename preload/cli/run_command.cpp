// `iosig run [--config F]... [--rules F] [--keep] [--report F] -- CMD ARGS...`: run CMD with the
// shim, then finalize this run's files and print a short summary (docs/preload.md, "iosig run").
#include "commands.hpp"
#include "common/layout.hpp"
#include "common/rules.hpp"
#include "tools/finalize.hpp"
#include "tools/job_journal.hpp"
#include "tools/report_model.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace iosig::cli {
namespace {

namespace fs = std::filesystem;
using namespace iosig::preload;

struct RunOptions {
    std::vector<std::string> configs;
    std::string rules;
    bool keep = false;
    std::string report;
    std::string job;
    std::string state;
    bool quiet = false;
    std::vector<std::string> command;
};

volatile sig_atomic_t child_pid = 0;

void forward_signal(int signal) {
    if (child_pid > 0) kill(child_pid, signal);
}

std::string absolute(const std::string& path) {
    std::error_code ec;
    const auto result = fs::absolute(path, ec);
    return ec ? path : result.lexically_normal().string();
}

std::string join(const std::vector<std::string>& items, const char* separator) {
    std::string out;
    for (const auto& item : items)
        out += (out.empty() ? "" : separator) + item;
    return out;
}

std::vector<std::string> child_environment(const std::map<std::string, std::string>& overrides) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
        const std::string entry(*e);
        const auto equals = entry.find('=');
        if (equals != std::string::npos && overrides.count(entry.substr(0, equals))) continue;
        env.push_back(entry);
    }
    for (const auto& [key, value] : overrides)
        env.push_back(key + "=" + value);
    return env;
}

int run_child(const std::vector<std::string>& command, const std::vector<std::string>& env) {
    std::vector<char*> argv, envp;
    for (const auto& a : command)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (const auto& e : env)
        envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) {
        std::fprintf(stderr, "iosig run: fork: %s\n", std::strerror(errno));
        return 1;
    }
    if (pid == 0) {
        execvpe(argv[0], argv.data(), envp.data());
        std::fprintf(stderr, "iosig run: %s: %s\n", argv[0], std::strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
    }
    child_pid = pid;
    struct sigaction forward{}, old_int{}, old_term{}, old_hup{}, old_quit{};
    forward.sa_handler = forward_signal;
    sigemptyset(&forward.sa_mask);
    sigaction(SIGINT, &forward, &old_int);
    sigaction(SIGTERM, &forward, &old_term);
    sigaction(SIGHUP, &forward, &old_hup);
    sigaction(SIGQUIT, &forward, &old_quit);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
    sigaction(SIGHUP, &old_hup, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
    child_pid = 0;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 1;
}

// This run's process reports (JSON lines of every process of the job).
std::vector<nlohmann::json> run_reports(const JobLayout& layout, const std::string& run) {
    std::vector<nlohmann::json> mine;
    if (!fs::exists(layout.reports)) return mine;
    for (auto& process : read_process_reports(layout.reports))
        if (process.value("run", std::string()) == run) mine.push_back(std::move(process));
    return mine;
}

// Tracked paths that are gone when the command has exited: a file another process deleted (`rm` in
// a script) is "deleted before exit" even though its writer's report could not know (--suggest:
// temp). Taken before finalize, which deletes temp files itself.
std::set<std::string> vanished_paths(const std::vector<nlohmann::json>& processes,
                                     const JobJournal& journal) {
    std::set<std::string> gone;
    const JobReport report = build_report(processes, &journal);
    for (const auto& f : report.files) {
        struct stat st{};
        if (!f.path.empty() && lstat(f.path.c_str(), &st) != 0 && errno == ENOENT)
            gone.insert(f.path);
    }
    return gone;
}

// The run's reports merged with the journal (after finalize: its outcomes), written as one
// document. Vanished files are marked in the process entries themselves, so the written document
// keeps them.
JobReport merged_report(const JobLayout& layout, std::vector<nlohmann::json> processes,
                        const std::set<std::string>& vanished, const std::string& output) {
    for (auto& process : processes) {
        if (!process.is_object() || !process.contains("files") || !process["files"].is_array())
            continue;
        for (auto& entry : process["files"]) {
            if (!entry.is_object()) continue;
            const auto renamed = entry.value("renamed_to", nlohmann::json());
            const auto path = renamed.is_string() ? renamed : entry.value("path", nlohmann::json());
            if (path.is_string() && vanished.count(path.get<std::string>()))
                entry["deleted"] = true;
        }
    }
    const JobJournal journal = read_job_journal(layout.journal);
    JobReport report = build_report(processes, &journal);
    std::ofstream out(output, std::ios::trunc);
    out << to_json(report).dump(2) << "\n";
    if (!out) throw std::runtime_error("cannot write " + output);
    return report;
}

void print_summary(const JobReport* report, const FinalizeResult* finalized,
                   const std::string& report_path, bool keep, const std::string& job) {
    std::map<std::string, int> by_mount;
    std::size_t tracked = 0, redirected = 0;
    if (report) {
        tracked = report->files.size();
        for (const auto& f : report->files)
            if (f.redirected) {
                ++redirected;
                ++by_mount[f.mount];
            }
    }
    std::string mounts;
    for (const auto& [mount, n] : by_mount)
        mounts += fmt::format("{}{} to {}", mounts.empty() ? "" : ", ", n, mount);
    std::fprintf(stderr, "iosig: %zu tracked file%s, %zu redirected%s%s\n", tracked,
                 tracked == 1 ? "" : "s", redirected, mounts.empty() ? "" : ": ", mounts.c_str());
    if (finalized) {
        std::fprintf(stderr,
                     "iosig: finalize: %zu home, %zu temp deleted, %zu kept on global mounts%s\n",
                     finalized->count(FinalizeAction::renamed_home) +
                         finalized->count(FinalizeAction::copied_home),
                     finalized->count(FinalizeAction::deleted_temp),
                     finalized->count(FinalizeAction::kept_global),
                     finalized->ok() ? "" : " -- NOT COMPLETE, see below");
        for (const auto& item : finalized->items)
            if (item.action == FinalizeAction::failed || item.action == FinalizeAction::in_use ||
                item.action == FinalizeAction::orphan_kept)
                std::fprintf(stderr, "iosig:   %s: %s: %s\n", to_string(item.action).c_str(),
                             item.path.c_str(), item.detail.c_str());
        for (const auto& error : finalized->errors)
            std::fprintf(stderr, "iosig:   %s\n", error.c_str());
    } else if (keep) {
        std::fprintf(stderr,
                     "iosig: --keep: files stay redirected; later: iosig finalize --job %s\n",
                     job.c_str());
    }
    if (!report_path.empty())
        std::fprintf(stderr, "iosig: report: %s (iosig report %s)\n", report_path.c_str(),
                     report_path.c_str());
}

int run(const RunOptions& options, std::vector<std::string> command) {
    if (!command.empty() && command.front() == "--") command.erase(command.begin());
    if (command.empty()) {
        std::fprintf(stderr, "iosig run: no command given (iosig run [options] -- CMD ARGS...)\n");
        return exit_bad_input;
    }
    std::map<std::string, std::string> env;
    bool shim = true;
    if (!options.rules.empty()) {
        const auto rules = load_rules_file(options.rules);
        if (!rules.ok()) {
            std::fprintf(
                stderr,
                "%s\niosig: the rules file %s has errors: running the program without iosig\n",
                rules.message().c_str(), options.rules.c_str());
            shim = false;
        } else if (!rules.diagnostics.empty()) {
            std::fprintf(stderr, "%s\n", rules.message().c_str());
        }
        env[env::rules] = absolute(options.rules);
    }
    if (!shim) return run_child(command, child_environment({}));

    std::vector<std::string> configs;
    for (const auto& c : options.configs)
        configs.push_back(absolute(c));
    if (!configs.empty()) env[env::config] = join(configs, ":");
    std::string job = options.job.empty() ? job_from_environment() : sanitize_job_id(options.job);
    const std::string run_id = make_run_id();
    if (job.empty()) job = run_id;
    const std::string state = options.state.empty() ? default_state_dir() : absolute(options.state);
    const JobLayout layout = job_layout(state, job);
    std::error_code ec;
    fs::create_directories(layout.job_dir, ec);
    chmod(state.c_str(), 0700);
    append_journal_record(layout.journal, RecordType::run_begin, run_id, {join(command, " ")});

    env[env::job] = job;
    env[env::run] = run_id;
    env[env::state] = state;
    env[env::report] = layout.reports;
    const char* existing = std::getenv("LD_PRELOAD");
    env["LD_PRELOAD"] =
        preload_entries() + (existing && *existing ? std::string(":") + existing : "");

    const int status = run_child(command, child_environment(env));
    append_journal_record(layout.journal, RecordType::run_end, run_id, {std::to_string(status)});

    std::vector<nlohmann::json> processes;
    std::set<std::string> vanished;
    try {
        processes = run_reports(layout, run_id);
        vanished = vanished_paths(processes, read_job_journal(layout.journal));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "iosig: cannot read the report: %s\n", e.what());
    }
    std::optional<FinalizeResult> finalized;
    if (!options.keep) finalized = finalize_job({state, job, run_id, false, false});
    const std::string report_path = options.report.empty()
                                        ? layout.job_dir + "/report-" + run_id + ".json"
                                        : absolute(options.report);
    std::optional<JobReport> report;
    try {
        report = merged_report(layout, processes, vanished, report_path);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "iosig: cannot merge the report: %s\n", e.what());
    }
    if (!options.quiet)
        print_summary(report ? &*report : nullptr, finalized ? &*finalized : nullptr,
                      report ? report_path : "", options.keep, job);
    if (finalized && !finalized->ok() && status == 0) return exit_failure;
    return status;
}

} // namespace

void register_run_command(CLI::App& app, Context& context) {
    auto options = std::make_shared<RunOptions>();
    auto* sub = app.add_subcommand(
        "run", "Run a program with libiosig.so: new files matching the rules go to "
               "the best mount; finalize afterwards");
    sub->add_option("--config", options->configs, "Node YAML file (repeatable; layered in order)");
    sub->add_option("--rules", options->rules, "Rules file: which paths carry which signature");
    sub->add_flag("--keep", options->keep,
                  "Do not finalize: leave files redirected (iosig finalize later)");
    sub->add_option("--report", options->report, "Write the merged JSON report here");
    sub->add_option("--job", options->job,
                    "Job id (default: $IOSIG_JOB, $SLURM_JOB_ID, else a new one)");
    sub->add_option("--state", options->state,
                    "State directory (default: $IOSIG_STATE or ~/.local/state/iosig)");
    sub->add_flag("--quiet", options->quiet, "No summary");
    // Everything after `--` is the command, its options included.
    sub->add_option("command", options->command, "The program to run and its arguments (after --)")
        ->required();
    sub->callback([options, &context] { context.exit_code = run(*options, options->command); });
}

} // namespace iosig::cli
