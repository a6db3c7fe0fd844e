// The CAWL model's inputs (paper 001, Sect. 4.1), resolved for one mount of one node.
//
// They come from the node YAML (`system:` = iosig::SystemParameters, the mount's device performance
// and the mount's block size), optionally overridden by what the kernel reports live (thresholds,
// write-back bandwidth, dirty ratelimit; see kernel_state.hpp). docs/cachesim.md lists which YAML
// key feeds which symbol of the paper.
#pragma once

#include "iosig/cachesim/cost_curve.hpp"
#include "iosig/node.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iosig::cachesim {

struct KernelDirtyState;

enum class Method : std::uint8_t {
    direct,   // O_DIRECT | O_SYNC write(): Eq. 2
    sync,     // O_SYNC write() through the page cache: Eq. 3-4
    buffered, // plain write(): Alg. 1 (Syscall_IO_Cost) with the page-cache model
    stdio,    // fwrite(): Alg. 2 (Lib_IO_Cost) on top of Alg. 1
};

std::string_view to_string(Method method);
std::optional<Method> parse_method(std::string_view text);

// The kernel's dirty thresholds in bytes (global domain, as /proc/vmstat and the
// writeback:global_dirty_state tracepoint report them).
struct DirtyThresholds {
    double background = 0; // background writeback starts above this
    double hard = 0;       // vm.dirty_bytes / dirty_ratio applied to dirtyable memory
    double limit = 0;      // the kernel's smoothed hard limit (>= hard); 0 = same as hard

    double effective_limit() const { return limit > hard ? limit : hard; }
    // Throttling starts above freerun = (background + hard) / 2 ...
    double freerun() const { return (background + hard) / 2; }
    // ... and aims at setpoint = (freerun + limit) / 2.
    double setpoint() const { return (freerun() + effective_limit()) / 2; }
};

// The kernel's starting dirty ratelimit of a new writeback context (INIT_BW, 100 MiB/s).
inline constexpr double kernel_initial_dirty_ratelimit = 100.0 * 1024 * 1024;

struct ModelParameters {
    double page_size = 4096;                 // node.page_size
    double block_size = 4096;                // B: mount block_size (Eq. 3)
    double memory_bw = 0;                    // user-space memcpy (stdio buffer), B/s
    double page_cache_write_bw = 0;          // r_ramdisk: write() into the page cache, B/s
    double page_cache_write_bw_flushing = 0; // the same while the kernel flushes in the background
    double page_cache_rewrite_bw = 0;        // write() over pages already dirty in the cache, B/s
                                             // (just written; see rewrite_seconds_per_byte)
    double page_cache_rewrite_bw_cold = 0;   // the same long after they were written (0: unknown)
    double rewrite_cooling_time = 0;         // s, e-folding time between the two (0: unknown)
    double write_syscall_base = 0;           // L_w: fixed cost of one write(), s (right after
                                             // the previous call; see call_base_cost)
    double write_syscall_cold_base = 0;      // the same long after the previous call (0: unknown)
    double call_cooling_time = 0;            // s, e-folding time between the two (0: unknown)
    double direct_write_base = 0;       // L_sync of Eq. 2: fixed cost of an O_DIRECT|O_SYNC write
    double sync_write_syscall_base = 0; // L_sync of Eq. 3: fixed cost of an O_SYNC write(), s
    double sync_copy_per_byte = 0;      // Eq. 3: copy into the page cache of an O_SYNC write, s/B
    double stdio_call_base = 0;         // fixed cost of one fwrite() (not in the schema yet: 0)
    std::uint64_t stdio_buffer_size = 4096; // libc FILE buffer (__fbufsize)

    double device_write_bw = 0;         // B_dev: synchronous write bandwidth of the device, B/s
    double device_read_bw = 0;          // B_read: for the read of a partial block (Eq. 3)
    double seek_latency = 0;            // L_seek, added to every non-sequential direct/sync write
    double sync_completion_quantum = 0; // s: synchronous writes complete on ticks of this length
                                        // (a VM's timer-driven completions; 0 = continuous)
    double writeback_bw = 0;            // the flusher's write-back rate (default: device_write_bw)
    double writeback_start_latency = 0; // s from crossing the background threshold to the flusher
                                        // writing (0: at once, as in CAWL)
    double dirty_ratelimit = kernel_initial_dirty_ratelimit; // the kernel's per-device ratelimit
    double throttle_sleep = 0; // s: how long one balance_dirty_pages sleep of a throttled writer
                               // lasts (median_sleep_time); 0 = not measured, pauses continuous
    // Measured per-size costs (cost_curve.hpp). When set, the direct curve replaces Eq. 2's
    // L_sync + s / B_dev, and the sync curve Eq. 3's L_sync + s * c_copy + whole blocks / B_dev
    // (it is measured at whole-block sizes; the partial-block terms stay).
    CostCurve direct_write_curve;
    CostCurve sync_write_curve;

    DirtyThresholds thresholds;    // bytes
    double dirty_expire = 30;      // s: dirty data older than this is written back
    double writeback_interval = 5; // s: how often the flusher looks for expired data
};

// What resolve_parameters found, or which YAML keys were missing for the method asked for.
struct ResolvedParameters {
    std::optional<ModelParameters> parameters;
    std::vector<std::string> missing; // YAML paths, e.g. "system.page_cache_write_bw"
    std::vector<std::string> notes;   // defaults taken, live values used
    bool ok() const { return parameters.has_value(); }
};

// Picks the mount whose path is the longest prefix of `path` (a file or directory below a mount).
const Mount* mount_for_path(const Node& node, std::string_view path);

// Resolves the parameters `method` needs for `mount` of `node`. When `live` is given, its dirty
// thresholds replace the node's and its measured write-back bandwidth and ratelimit correct the
// model's (see apply_kernel_state).
ResolvedParameters resolve_parameters(const Node& node, const Mount& mount, Method method,
                                      const KernelDirtyState* live = nullptr);

// What a measurement produced, to be stored in a node through the core schema.
struct MeasuredParameters {
    std::optional<double> memory_bw;
    std::optional<double> page_cache_write_bw;
    std::optional<double> page_cache_write_bw_flushing;
    std::optional<double> page_cache_rewrite_bw;
    std::optional<double> page_cache_rewrite_bw_cold;
    std::optional<double> rewrite_cooling_time;
    std::optional<double> write_syscall_base;
    std::optional<double> write_syscall_cold_base;
    std::optional<double> call_cooling_time;
    std::optional<double> write_syscall_per_byte;
    std::optional<double> sync_write_syscall_base;
    std::optional<double> sync_write_syscall_per_byte;
    std::optional<std::uint64_t> stdio_buffer_size;
    std::optional<double> device_write_bw;
    std::optional<double> device_read_bw;
    std::optional<double> seek_latency;
    std::optional<double> op_latency;
    std::optional<double> writeback_bw;
    std::optional<double> sync_completion_quantum;
    std::optional<double> writeback_start_latency;
    std::optional<double> throttle_sleep;
    std::optional<CostCurve> direct_write_curve;
    std::optional<CostCurve> sync_write_curve;
};

// Writes the measured values into node.system and the device's performance, tagged !measured.
void store_parameters(Node& node, std::string_view device_name, const MeasuredParameters& measured);

// Device figures the schema has no key for yet live in the device's free-form `calibration:` map as
// `cachesim: {writeback_bw: 1.2G/s, sync_completion_quantum: 4ms, writeback_start_latency: 3ms,
// throttle_sleep: 13ms, direct_write_curve: {4K: 127us, 64K: 224us, ...}, sync_write_curve: {...}}`
// (other entries preserved).
std::optional<double> stored_writeback_bandwidth(const Device& device);
std::optional<double> stored_completion_quantum(const Device& device);
std::optional<double> stored_writeback_start_latency(const Device& device);
std::optional<double> stored_throttle_sleep(const Device& device);
// `key` is "direct_write_curve" or "sync_write_curve"; nullopt when absent or unreadable, and then
// `problem` (if given) names the entry and what is wrong with it.
std::optional<CostCurve> stored_cost_curve(const Device& device, const char* key,
                                           std::string* problem = nullptr);
// Stores the measured figures that go to the calibration map (writeback_bw,
// sync_completion_quantum, writeback_start_latency, throttle_sleep, the two curves); the others
// are ignored.
void store_device_calibration(Device& device, const MeasuredParameters& values);

} // namespace iosig::cachesim
