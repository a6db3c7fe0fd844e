// Where iosig keeps its state: environment variables, the per-job state directory (journal,
// reports, warning markers) and the per-user, per-job staging directories on each mount. Shared by
// the shim and the `iosig run/finalize/report` commands so that both agree on every name.
#pragma once

#include <string>
#include <string_view>
#include <sys/types.h>

namespace iosig::preload {

namespace env {
inline constexpr const char* config = "IOSIG_CONFIG";   // node YAML files, ':'-separated
inline constexpr const char* rules = "IOSIG_RULES";     // rules file
inline constexpr const char* job = "IOSIG_JOB";         // job id (default SLURM_JOB_ID)
inline constexpr const char* run = "IOSIG_RUN";         // one `iosig run` (or top-level process)
inline constexpr const char* state = "IOSIG_STATE";     // state directory
inline constexpr const char* report = "IOSIG_REPORT";   // per-process JSON lines, appended at exit
inline constexpr const char* log = "IOSIG_LOG";         // warnings (default stderr)
inline constexpr const char* verbose = "IOSIG_VERBOSE"; // 1: log every redirection too
inline constexpr const char* disable = "IOSIG_DISABLE"; // 1: the shim does nothing
} // namespace env

struct JobLayout {
    std::string state_dir;
    std::string job;
    std::string job_dir;    // <state>/jobs/<job>
    std::string journal;    // <job_dir>/journal
    std::string reports;    // <job_dir>/report.jsonl: one JSON object per process
    std::string warned_dir; // <job_dir>/warned: one marker per warning cause (one warning per job)
};

// $IOSIG_STATE, else $XDG_STATE_HOME/iosig, else $HOME/.local/state/iosig, else
// /tmp/iosig-state-UID.
std::string default_state_dir();

// $IOSIG_JOB, else $SLURM_JOB_ID (with .$SLURM_STEP_ID when set), else "" (the caller makes one
// up).
std::string job_from_environment();

// A job id usable as one path component: '/', control characters and leading dots replaced by '_'.
std::string sanitize_job_id(std::string_view job);

// A fresh id for a run that has no job id: run-<host>-<pid>-<seconds>.
std::string make_run_id();

JobLayout job_layout(std::string_view state_dir, std::string_view job);

// <mount>/.iosig-<uid>: the user's staging directory (mode 0700) on a mount.
inline constexpr std::string_view staging_prefix = ".iosig-";
std::string staging_user_dir_name(uid_t uid);
std::string staging_job_dir(std::string_view mount, uid_t uid, std::string_view job);

// true if a component of `path` is a staging directory (".iosig-<digits>"), of any user.
bool contains_staging_component(std::string_view path) noexcept;

} // namespace iosig::preload
