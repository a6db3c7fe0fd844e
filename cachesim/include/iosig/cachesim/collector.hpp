// Live dirty-page and throttling state of the kernel.
//
// The eBPF collector attaches CO-RE programs to writeback:global_dirty_state,
// writeback:balance_dirty_pages, writeback:bdi_dirty_ratelimit and
// writeback:writeback_pages_written and reads their events from a ring buffer. When BPF is
// unavailable (no BTF, no privilege, missing tracepoints, built without BPF, or
// IOSIG_CACHESIM_NO_BPF=1 in the environment) the procfs collector polls /proc/vmstat and
// /proc/sys/vm instead and the process is told so once.
#pragma once

#include "iosig/cachesim/kernel_state.hpp"

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace iosig::cachesim {

struct CollectorOptions {
    bool allow_bpf = true;       // false: use the procfs fallback
    double poll_interval = 0.05; // s between /proc/vmstat samples (fallback; BPF trigger reads)
    std::size_t history_limit = 4'000'000; // samples kept per history
    // Receives the one-time notice that the fallback is in use (default: stderr).
    std::function<void(std::string_view)> notice;
};

// Name of the environment variable that forces the procfs fallback when set to 1.
inline constexpr const char* no_bpf_environment = "IOSIG_CACHESIM_NO_BPF";

class DirtyCollector {
public:
    // The eBPF collector when it can be loaded and attached, else the procfs one. Never null.
    static std::unique_ptr<DirtyCollector> open(const CollectorOptions& options = {});

    virtual ~DirtyCollector();
    DirtyCollector(const DirtyCollector&) = delete;
    DirtyCollector& operator=(const DirtyCollector&) = delete;

    StateSource source() const { return source_; }
    // Why the eBPF collector is not in use (empty when it is).
    const std::string& fallback_reason() const { return fallback_reason_; }

    // Takes in pending events, waiting up to `timeout_ms`. Returns the number of events/samples.
    virtual int poll(int timeout_ms) = 0;

    // Reads /proc/vmstat once: a sample for the procfs collector, and with eBPF it makes the kernel
    // fire writeback:global_dirty_state.
    void trigger();

    // Runs poll() and periodic triggers on a thread of its own until stop() or destruction.
    void start();
    void stop();

    KernelDirtyState snapshot() const;
    std::vector<GlobalDirtySample> global_history() const;
    std::vector<ThrottleSample> throttle_history() const;
    std::vector<DeviceRateSample> device_history(const std::string& device) const;
    void clear_history();

protected:
    DirtyCollector(StateSource source, const CollectorOptions& options);

    // For the implementations: each takes the lock.
    void add_global(const GlobalDirtySample& sample);
    void add_device(const std::string& device, const DeviceRateSample& sample);
    void add_throttle(const ThrottleSample& sample);
    void add_pages_written(double pages);
    void add_lost(std::uint64_t count);
    void set_fallback_reason(std::string reason) { fallback_reason_ = std::move(reason); }

    CollectorOptions options_;

private:
    struct DeviceHistory {
        std::string device;
        DeviceRateSample sample;
    };

    StateSource source_;
    std::string fallback_reason_;
    mutable std::mutex mutex_;
    KernelDirtyState state_;
    std::vector<GlobalDirtySample> global_history_;
    std::vector<ThrottleSample> throttle_history_;
    std::vector<DeviceHistory> device_history_;
    std::thread thread_;
    std::atomic<bool> running_{false};
};

// The procfs collector directly (tests of the fallback path).
std::unique_ptr<DirtyCollector> open_procfs_collector(const CollectorOptions& options,
                                                      std::string reason);

#if IOSIG_CACHESIM_HAVE_BPF
// The eBPF collector, or null with `reason` set.
std::unique_ptr<DirtyCollector> open_bpf_collector(const CollectorOptions& options,
                                                   std::string* reason);
#endif

// Whether this build has the eBPF probes at all.
bool built_with_bpf();

} // namespace iosig::cachesim
