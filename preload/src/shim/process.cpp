#include "process.hpp"

#include "inherit.hpp"
#include "iosig/node_yaml.hpp"
#include "iosig/units.hpp"
#include "log.hpp"
#include "report_writer.hpp"
#include "shim.h"
#include "stats.hpp"

#include <cstdlib>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

extern "C" {
IOSIG_HIDDEN __thread int iosig_reentry IOSIG_INITIAL_EXEC = 0;
}

namespace iosig::shim {
namespace {

enum State : int { not_yet = 0, ready = 1, off = 2 };

constinit std::atomic<int> init_state{not_yet};
constinit Process* instance = nullptr;
constinit long loaded_pid = 0;
constinit std::int64_t loaded_ns = 0;
std::mutex init_mutex; // constant-initialised (std::mutex has a constexpr constructor)

std::string getenv_string(const char* name) {
    const char* value = std::getenv(name);
    return value ? std::string(value) : std::string();
}

bool env_flag(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && value[0] != '\0' && value[0] != '0';
}

Process* build() {
    if (env_flag(preload::env::disable)) return nullptr;
    auto* p = new Process;
    p->uid = geteuid();
    p->job = preload::job_from_environment();
    if (p->job.empty()) p->job = preload::make_run_id();
    p->run = getenv_string(preload::env::run);
    if (p->run.empty()) p->run = p->job;
    p->layout = preload::job_layout(preload::default_state_dir(), p->job);
    p->report_path = getenv_string(preload::env::report);
    if (p->report_path.empty()) p->report_path = p->layout.reports;
    p->log_path = getenv_string(preload::env::log);
    configure_log(p->log_path.c_str(), p->layout.warned_dir.c_str(),
                  env_flag(preload::env::verbose));

    if (const auto rules_file = getenv_string(preload::env::rules); !rules_file.empty()) {
        auto loaded = preload::load_rules_file(rules_file);
        if (!loaded.ok()) {
            warn(Cause::bad_rules,
                 "%s\niosig: the rules file %s has errors: iosig is disabled and the program runs "
                 "unchanged",
                 loaded.message().c_str(), rules_file.c_str());
            delete p;
            return nullptr;
        }
        p->rules = std::move(loaded.rules);
    }
    return p;
}

void fork_prepare() {
    init_mutex.lock();
    if (instance) instance->mutex.lock();
    stats_fork_prepare();
}

void fork_parent() {
    if (instance) instance->mutex.unlock();
    init_mutex.unlock();
}

void fork_child() {
    if (instance) instance->mutex.unlock();
    init_mutex.unlock();
    loaded_pid = getpid();
    stats_fork_child();
}

std::vector<std::filesystem::path> config_files() {
    std::vector<std::filesystem::path> files;
    const std::string list = getenv_string(preload::env::config);
    if (!list.empty()) {
        std::size_t start = 0;
        while (start <= list.size()) {
            const auto colon = list.find(':', start);
            const auto item =
                list.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
            if (!item.empty()) files.emplace_back(item);
            if (colon == std::string::npos) break;
            start = colon + 1;
        }
        return files;
    }
    std::error_code ec;
    if (std::filesystem::exists("/etc/iosig/node.yaml", ec))
        files.emplace_back("/etc/iosig/node.yaml");
    if (const auto home = getenv_string("HOME"); !home.empty()) {
        const std::filesystem::path user = home + "/.config/iosig/node.yaml";
        if (std::filesystem::exists(user, ec)) files.push_back(user);
    }
    return files;
}

} // namespace

long process_pid() {
    return loaded_pid;
}
std::int64_t process_start_ns() {
    return loaded_ns;
}

bool process_initialized() {
    return init_state.load(std::memory_order_acquire) == ready;
}

Process* process() {
    const int state = init_state.load(std::memory_order_acquire);
    if (state == ready) return instance;
    if (state == off) return nullptr;
    ++iosig_reentry;
    {
        std::lock_guard lock(init_mutex);
        if (init_state.load(std::memory_order_relaxed) == not_yet) {
            Process* built = nullptr;
            try {
                built = build();
            } catch (const std::exception& e) {
                warn(Cause::internal, "initialisation failed (%s): iosig is disabled", e.what());
            } catch (...) {
                warn(Cause::internal, "initialisation failed: iosig is disabled");
            }
            instance = built;
            init_state.store(built ? ready : off, std::memory_order_release);
        }
    }
    --iosig_reentry;
    return instance;
}

const Node* node_locked(Process& p) {
    if (p.node_attempted) return p.node ? &*p.node : nullptr;
    p.node_attempted = true;
    const auto files = config_files();
    if (files.empty()) {
        warn(Cause::no_config,
             "no node configuration (IOSIG_CONFIG is unset and neither /etc/iosig/node.yaml nor "
             "~/.config/iosig/node.yaml exists): files are tracked but not redirected");
        return nullptr;
    }
    auto loaded = load_node_files(files);
    if (!loaded.ok()) {
        std::string first = "unknown error";
        for (const auto& d : loaded.diagnostics)
            if (d.severity == ConfigDiagnostic::Severity::error) {
                first = d.format();
                break;
            }
        warn(Cause::bad_config, "the node configuration does not load: %s; nothing is redirected",
             first.c_str());
        return nullptr;
    }
    p.node = std::move(loaded.node);
    for (const Mount& mount : p.node->mounts) {
        MountState state;
        state.path = mount.path;
        struct stat st{};
        if (stat(mount.path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
            state.device = st.st_dev;
            state.usable = true;
        }
        p.mounts.push_back(std::move(state));
    }
    p.selection_context = selection_context_from_environment();
    return &*p.node;
}

Placement place_locked(Process& p, const Signature& signature, std::uint64_t need) {
    const Node* node = node_locked(p);
    if (node == nullptr) return {-1, "no usable node configuration", false};
    Node candidates = *node;
    candidates.mounts.clear();
    std::vector<int> original_index;
    std::string skipped;
    for (std::size_t i = 0; i < node->mounts.size(); ++i) {
        Mount mount = node->mounts[i];
        if (!p.mounts[i].usable) {
            skipped += "; " + mount.path + ": not a directory here";
            continue;
        }
        struct statvfs fs{};
        if (statvfs(mount.path.c_str(), &fs) == 0) {
            const auto free_bytes = static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
            mount.free_space = free_bytes;
            if (free_bytes < need) {
                skipped += "; " + mount.path + ": only " +
                           human_size(static_cast<double>(free_bytes)) + " free (needs " +
                           human_size(static_cast<double>(need)) + ")";
                continue;
            }
        }
        candidates.mounts.push_back(std::move(mount));
        original_index.push_back(static_cast<int>(i));
    }
    const Selection selection = select_mount(candidates, signature, p.selection_context);
    Placement placement;
    if (!selection.choice || *selection.choice >= original_index.size()) {
        placement.why = "no mount qualifies";
        for (const auto& c : selection.candidates) {
            if (c.eligible || c.mount == nullptr) continue;
            placement.why += "; " + c.mount->path + ":";
            for (const auto& e : c.exclusions)
                placement.why += " " + e.text;
        }
        placement.why += skipped;
        return placement;
    }
    const auto& chosen = selection.candidates[*selection.choice];
    placement.mount = original_index[*selection.choice];
    placement.global = chosen.mount->global;
    placement.why = "best of " + std::to_string(candidates.mounts.size()) + " mounts by Eq. 3 (" +
                    human_bandwidth(chosen.throughput) + ")";
    if (!selection.tie_break.empty()) placement.why += ", " + selection.tie_break;
    placement.why += skipped;
    return placement;
}

} // namespace iosig::shim

using namespace iosig::shim;

extern "C" {

IOSIG_HIDDEN int iosig_active_call(void) {
    Process* p = process();
    if (p == nullptr) return 0;
    ++iosig_reentry;
    int active = 0;
    try {
        std::lock_guard lock(p->mutex);
        active = node_locked(*p) != nullptr ? 1 : 0;
    } catch (...) {
        active = 0;
    }
    --iosig_reentry;
    return active;
}

__attribute__((constructor)) static void iosig_loaded(void) {
    ++iosig_reentry;
    loaded_pid = getpid();
    loaded_ns = realtime_ns();
    if (!env_flag(iosig::preload::env::disable)) {
        try {
            const bool job_inherited = std::getenv(iosig::preload::env::job) != nullptr ||
                                       std::getenv("SLURM_JOB_ID") != nullptr;
            std::string job = iosig::preload::job_from_environment();
            if (job.empty()) job = iosig::preload::make_run_id();
            // Children (fork/exec) inherit the job through the environment.
            setenv(iosig::preload::env::job, job.c_str(), 0);
            setenv(iosig::preload::env::run, job.c_str(), 0);
            const char* report = std::getenv(iosig::preload::env::report);
            const std::string report_path =
                report && *report
                    ? std::string(report)
                    : iosig::preload::job_layout(iosig::preload::default_state_dir(),
                                                 iosig::preload::job_from_environment())
                          .reports;
            remember_report_identity(std::getenv(iosig::preload::env::job),
                                     std::getenv(iosig::preload::env::run), report_path.c_str());
            pthread_atfork(fork_prepare, fork_parent, fork_child);
            if (job_inherited) adopt_inherited_descriptors(job);
        } catch (...) {
        }
    }
    --iosig_reentry;
}

__attribute__((destructor)) static void iosig_unloading(void) {
    write_process_report(ReportMoment::exit);
}

IOSIG_HIDDEN void iosig_exiting(void) {
    write_process_report(ReportMoment::exit);
}

} // extern "C"
