// Running a workload for real: a child process opens a new file with the method's flags and
// performs the writes in order, spinning (computing) for each write's delay first, and timestamps
// every call with CLOCK_MONOTONIC (the clock of the eBPF events).
#pragma once

#include "iosig/cachesim/parameters.hpp"
#include "iosig/cachesim/workload.hpp"

#include <filesystem>
#include <string>
#include <sys/types.h>
#include <vector>

namespace iosig::cachesim::validate {

struct RunTimings {
    double t0 = 0;             // CLOCK_MONOTONIC s when the first delay began
    std::vector<double> start; // s after t0, per write
    std::vector<double> end;
    pid_t pid = 0;     // the writer process (to pick its throttle events)
    std::string error; // empty on success
    bool ok() const { return error.empty(); }
    double cost(std::size_t i) const { return end[i] - start[i]; }
};

struct RunOptions {
    bool keep_file = false;     // leave the written file (else it is synced and removed)
    bool truncate = true;       // start from an empty file (else overwrite the existing one)
    bool sync_after = true;     // fsync the file after the run (outside the timed part)
    int priority = -20;         // nice value of the writer (0: unchanged)
    bool prewarm_memory = true; // hand the writer warm memory write by write (warm_pool.hpp)
};

// Runs `workload` with `method` on the new file `file` (created, truncated). Direct IO needs sizes
// and offsets aligned to the logical block size.
RunTimings run_workload(const std::filesystem::path& file, Method method,
                        const std::vector<WriteRequest>& workload, const RunOptions& options = {});

// Waits until the kernel's dirty + write-back bytes fall to `bytes` or `timeout` seconds pass.
void wait_for_clean(double bytes, double timeout);

double monotonic_now();

} // namespace iosig::cachesim::validate
