// The collector base: shared state and histories, the background thread, and the choice between the
// eBPF collector and the procfs fallback.
#include "iosig/cachesim/collector.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace iosig::cachesim {
namespace {

std::atomic<bool> fallback_announced{false};

void announce_fallback(const CollectorOptions& options, const std::string& reason) {
    if (fallback_announced.exchange(true)) return;
    const std::string text = "iosig cachesim: eBPF probes unavailable (" + reason +
                             "); polling /proc/vmstat and /proc/sys/vm instead";
    if (options.notice)
        options.notice(text);
    else
        std::fprintf(stderr, "%s\n", text.c_str());
}

bool forced_off_by_environment() {
    const char* value = std::getenv(no_bpf_environment);
    return value && std::string(value) == "1";
}

} // namespace

bool built_with_bpf() {
    return IOSIG_CACHESIM_HAVE_BPF != 0;
}

std::unique_ptr<DirtyCollector> DirtyCollector::open(const CollectorOptions& options) {
    std::string reason;
    if (!options.allow_bpf)
        reason = "disabled by the caller";
    else if (forced_off_by_environment())
        reason = std::string(no_bpf_environment) + "=1";
#if IOSIG_CACHESIM_HAVE_BPF
    if (reason.empty()) {
        if (auto collector = open_bpf_collector(options, &reason)) return collector;
    }
#else
    if (reason.empty()) reason = "built without eBPF";
#endif
    announce_fallback(options, reason);
    return open_procfs_collector(options, reason);
}

DirtyCollector::DirtyCollector(StateSource source, const CollectorOptions& options)
    : options_(options), source_(source) {
    state_.source = source;
    if (auto procfs = read_procfs_state()) {
        state_.page_size = procfs->page_size;
        state_.dirty_expire = procfs->dirty_expire;
        state_.writeback_interval = procfs->writeback_interval;
        state_.global = procfs->global; // a starting point until the first event
    }
}

DirtyCollector::~DirtyCollector() {
    stop();
}

void DirtyCollector::trigger() {
    std::ifstream vmstat("/proc/vmstat");
    std::string all((std::istreambuf_iterator<char>(vmstat)), std::istreambuf_iterator<char>());
}

void DirtyCollector::start() {
    if (running_.exchange(true)) return;
    thread_ = std::thread([this] {
        using clock = std::chrono::steady_clock;
        const auto interval = std::chrono::duration<double>(options_.poll_interval);
        auto next_trigger = clock::now();
        while (running_.load()) {
            if (clock::now() >= next_trigger) {
                if (source_ == StateSource::ebpf) trigger();
                next_trigger = clock::now() + std::chrono::duration_cast<clock::duration>(interval);
            }
            const auto wait =
                std::chrono::duration_cast<std::chrono::milliseconds>(next_trigger - clock::now());
            poll(static_cast<int>(std::max<long>(1, std::min<long>(wait.count(), 100))));
        }
    });
}

void DirtyCollector::stop() {
    if (!running_.exchange(false)) return;
    if (thread_.joinable()) thread_.join();
}

KernelDirtyState DirtyCollector::snapshot() const {
    std::lock_guard lock(mutex_);
    return state_;
}

std::vector<GlobalDirtySample> DirtyCollector::global_history() const {
    std::lock_guard lock(mutex_);
    return global_history_;
}

std::vector<ThrottleSample> DirtyCollector::throttle_history() const {
    std::lock_guard lock(mutex_);
    return throttle_history_;
}

std::vector<DeviceRateSample> DirtyCollector::device_history(const std::string& device) const {
    std::lock_guard lock(mutex_);
    std::vector<DeviceRateSample> out;
    for (const DeviceHistory& h : device_history_)
        if (device.empty() || h.device == device) out.push_back(h.sample);
    return out;
}

void DirtyCollector::clear_history() {
    std::lock_guard lock(mutex_);
    global_history_.clear();
    throttle_history_.clear();
    device_history_.clear();
}

void DirtyCollector::add_global(const GlobalDirtySample& sample) {
    std::lock_guard lock(mutex_);
    state_.global = sample;
    if (global_history_.size() < options_.history_limit) global_history_.push_back(sample);
}

void DirtyCollector::add_device(const std::string& device, const DeviceRateSample& sample) {
    std::lock_guard lock(mutex_);
    state_.devices[device] = sample;
    if (device_history_.size() < options_.history_limit)
        device_history_.push_back({device, sample});
}

void DirtyCollector::add_throttle(const ThrottleSample& sample) {
    std::lock_guard lock(mutex_);
    TaskThrottle& task = state_.tasks[sample.tgid];
    task.events += 1;
    if (sample.pause > 0) {
        task.paused_events += 1;
        task.total_pause += sample.pause;
    }
    task.last_task_ratelimit = sample.task_ratelimit;
    task.last_time = sample.time;
    state_.last_throttle = sample;
    if (throttle_history_.size() < options_.history_limit) throttle_history_.push_back(sample);
}

void DirtyCollector::add_pages_written(double pages) {
    std::lock_guard lock(mutex_);
    state_.pages_written_total += pages;
}

void DirtyCollector::add_lost(std::uint64_t count) {
    std::lock_guard lock(mutex_);
    state_.lost_events = count;
}

} // namespace iosig::cachesim
