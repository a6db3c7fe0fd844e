// What the kernel reports about dirty pages and throttling, in SI units (bytes, seconds, B/s).
//
// Filled by a collector (collector.hpp): from the writeback tracepoints through eBPF, or, without
// BPF, by polling /proc/vmstat and /proc/sys/vm (then the per-device and per-task parts stay
// empty).
#pragma once

#include "iosig/cachesim/parameters.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <sys/types.h>

namespace iosig::cachesim {

// writeback:global_dirty_state, or /proc/vmstat's nr_* counters.
struct GlobalDirtySample {
    double time = 0;      // CLOCK_MONOTONIC seconds
    double dirty = 0;     // bytes in NR_FILE_DIRTY
    double writeback = 0; // bytes in NR_WRITEBACK
    double background_thresh = 0;
    double dirty_thresh = 0;
    double dirty_limit = 0;   // the kernel's smoothed hard limit
    double dirtied_total = 0; // bytes ever dirtied (nr_dirtied)
    double written_total = 0; // bytes ever written back (nr_written)
    pid_t tgid = 0;           // the process the tracepoint fired in (0: polled from procfs)
};

// writeback:bdi_dirty_ratelimit: the kernel's estimate for one backing device.
struct DeviceRateSample {
    double time = 0;
    double write_bw = 0;        // measured write-back bandwidth
    double avg_write_bw = 0;    // its smoothed value
    double dirty_rate = 0;      // how fast tasks dirty pages for this device
    double dirty_ratelimit = 0; // base rate each dirtier is throttled to (before pos_ratio)
    double task_ratelimit = 0;  // dirty_ratelimit * pos_ratio at that moment
    double balanced_dirty_ratelimit = 0;
};

// writeback:balance_dirty_pages: one throttling decision for one task.
struct ThrottleSample {
    double time = 0;
    pid_t pid = 0;                                       // thread id
    pid_t tgid = 0;                                      // process id
    std::string device;                                  // bdi name, e.g. "254:0"
    double limit = 0, setpoint = 0, dirty = 0;           // bytes
    double wb_setpoint = 0, wb_dirty = 0;                // bytes (bdi_* on kernels before 6.x)
    double dirty_ratelimit = 0, task_ratelimit = 0;      // B/s
    double dirtied = 0, dirtied_pause = 0;               // bytes
    double paused = 0, pause = 0, period = 0, think = 0; // s
};

// Per-task throttling seen so far.
struct TaskThrottle {
    std::uint64_t events = 0;
    std::uint64_t paused_events = 0; // events with pause > 0
    double total_pause = 0;          // s
    double last_task_ratelimit = 0;  // B/s
    double last_time = 0;
};

enum class StateSource : std::uint8_t { none, ebpf, procfs };
std::string_view to_string(StateSource source);

// The live state a collector exposes (collector.hpp) and the estimator starts from.
struct KernelDirtyState {
    StateSource source = StateSource::none;
    double page_size = 4096;
    std::optional<GlobalDirtySample> global;         // latest
    std::map<std::string, DeviceRateSample> devices; // by bdi name ("254:0")
    std::map<pid_t, TaskThrottle> tasks;             // by tgid
    std::optional<ThrottleSample> last_throttle;
    double pages_written_total = 0; // sum of writeback_pages_written since the collector started
    std::uint64_t lost_events = 0;  // ring-buffer overruns

    // vm.* as read from /proc/sys/vm when the state was taken.
    double dirty_expire = 30;
    double writeback_interval = 5;

    std::optional<DirtyThresholds> thresholds() const;
    // Bytes the kernel counts against the hard limit: dirty + under write-back.
    double dirty_and_writeback() const;
};

// The bdi name ("MAJ:MIN") of the block device backing `path`'s file system, if it has one.
std::optional<std::string> backing_device_of(const std::string& path);

// Reads the global thresholds and counters from /proc/vmstat and vm.dirty_* from /proc/sys/vm
// (works without privileges). `error` is set when the files cannot be read.
std::optional<KernelDirtyState> read_procfs_state(std::string* error = nullptr);

// Corrects `parameters` from what the kernel measured: thresholds as reported, the starting dirty
// ratelimit of `device`, and the write-back bandwidth when the kernel measured it while throttling
// (only then is write_bw the device's capacity rather than the rate dirtiers happened to produce).
// Appends a human-readable line per correction to `notes`.
void apply_kernel_state(ModelParameters& parameters, const KernelDirtyState& state,
                        const std::optional<std::string>& device, std::vector<std::string>* notes);

} // namespace iosig::cachesim
