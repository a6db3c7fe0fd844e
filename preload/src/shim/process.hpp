// What the shim knows about this process: its environment (job, run, state directory, log), the
// rules, and (loaded on first need) the node model with one cached placement per signature.
// Initialised lazily by the first intercepted call that needs it, under one mutex; fork-safe
// through pthread_atfork.
#pragma once

#include "../common/layout.hpp"
#include "../common/rules.hpp"
#include "iosig/node.hpp"
#include "iosig/selection.hpp"

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace iosig::shim {

// A mount of the node as seen by this process.
struct MountState {
    std::string path;
    dev_t device = 0;
    bool usable = false; // exists and is a directory
};

// Where a signature goes, decided once per process (and re-decided when the mount fills up).
struct Placement {
    int mount = -1;      // index into Process::mounts; -1: none qualifies
    std::string why;     // one line: the choice and its Eq. 3 figure, or why nothing qualified
    bool global = false; // the chosen mount is global
};

struct Process {
    // Environment, fixed at initialisation.
    bool disabled = false; // IOSIG_DISABLE or a bad rules file
    uid_t uid = 0;
    std::string job;
    std::string run;
    preload::JobLayout layout;
    std::string report_path; // IOSIG_REPORT or the job's report.jsonl
    std::string log_path;
    std::optional<preload::RuleSet> rules;

    // Node, loaded on first need (guarded by `mutex`).
    bool node_attempted = false;
    std::optional<Node> node;
    std::vector<MountState> mounts;
    SelectionContext selection_context;
    std::map<std::size_t, Placement> rule_placements;             // by rule index
    std::map<std::string, Placement, std::less<>> sig_placements; // runtime-ABI signature text

    // Paths iosig_prepare_path redirected: their later open is tracked with that signature.
    std::atomic<int> prepared_count{0};
    std::map<std::string, std::string, std::less<>> prepared; // path -> signature text

    std::mutex mutex;
};

// The process state after initialisation; nullptr if iosig is disabled in this process.
// Never throws; the first call reads the environment and the rules file.
Process* process();

// Initialisation result without triggering it (for iosig_runtime_active and the report).
bool process_initialized();

// The node for selection, loaded on first call (caller holds process()->mutex). nullptr on failure
// (warned once).
const Node* node_locked(Process& p);

// Placement for a signature (caller holds the mutex). `need` = bytes that must be free on the
// mount.
Placement place_locked(Process& p, const Signature& signature, std::uint64_t need);

// Fixed at load: pid of this process image and when it started.
long process_pid();
std::int64_t process_start_ns();

} // namespace iosig::shim
