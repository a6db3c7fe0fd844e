#include "layout.hpp"

#include <cstdlib>
#include <ctime>
#include <unistd.h>

namespace iosig::preload {
namespace {

std::string getenv_string(const char* name) {
    const char* value = std::getenv(name);
    return value ? std::string(value) : std::string();
}

} // namespace

std::string default_state_dir() {
    if (auto state = getenv_string(env::state); !state.empty()) return state;
    if (auto xdg = getenv_string("XDG_STATE_HOME"); !xdg.empty() && xdg.front() == '/')
        return xdg + "/iosig";
    if (auto home = getenv_string("HOME"); !home.empty() && home.front() == '/')
        return home + "/.local/state/iosig";
    return "/tmp/iosig-state-" + std::to_string(getuid());
}

std::string job_from_environment() {
    if (auto job = getenv_string(env::job); !job.empty()) return sanitize_job_id(job);
    if (auto slurm = getenv_string("SLURM_JOB_ID"); !slurm.empty()) {
        if (auto step = getenv_string("SLURM_STEP_ID"); !step.empty()) slurm += "." + step;
        return sanitize_job_id(slurm);
    }
    return {};
}

std::string sanitize_job_id(std::string_view job) {
    std::string out(job.substr(0, 128));
    for (char& c : out) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '/' || u < 0x20 || u == 0x7f || c == ' ' || c == '\t') c = '_';
    }
    if (!out.empty() && out.front() == '.') out.front() = '_';
    return out;
}

std::string make_run_id() {
    char host[64] = "host";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    return sanitize_job_id("run-" + std::string(host) + "-" + std::to_string(getpid()) + "-" +
                           std::to_string(std::time(nullptr)));
}

JobLayout job_layout(std::string_view state_dir, std::string_view job) {
    JobLayout layout;
    layout.state_dir = std::string(state_dir);
    layout.job = std::string(job);
    layout.job_dir = layout.state_dir + "/jobs/" + layout.job;
    layout.journal = layout.job_dir + "/journal";
    layout.reports = layout.job_dir + "/report.jsonl";
    layout.warned_dir = layout.job_dir + "/warned";
    return layout;
}

std::string staging_user_dir_name(uid_t uid) {
    return std::string(staging_prefix) + std::to_string(uid);
}

std::string staging_job_dir(std::string_view mount, uid_t uid, std::string_view job) {
    std::string dir(mount);
    while (dir.size() > 1 && dir.back() == '/')
        dir.pop_back();
    if (dir != "/")
        dir += '/';
    else
        dir = "/";
    return dir + staging_user_dir_name(uid) + "/" + std::string(job);
}

bool contains_staging_component(std::string_view path) noexcept {
    std::size_t at = 0;
    while ((at = path.find("/.iosig-", at)) != std::string_view::npos) {
        std::size_t i = at + 8;
        const std::size_t digits_start = i;
        while (i < path.size() && path[i] >= '0' && path[i] <= '9')
            ++i;
        if (i > digits_start && (i == path.size() || path[i] == '/')) return true;
        at += 1;
    }
    return false;
}

} // namespace iosig::preload
