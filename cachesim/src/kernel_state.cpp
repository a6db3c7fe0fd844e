// The live kernel state: reading it from procfs, finding a path's backing device, and correcting
// the model's parameters with it.
#include "iosig/cachesim/kernel_state.hpp"

#include "iosig/block_device.hpp"
#include "iosig/units.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace iosig::cachesim {

std::string_view to_string(StateSource source) {
    switch (source) {
    case StateSource::none:
        return "none";
    case StateSource::ebpf:
        return "ebpf";
    case StateSource::procfs:
        return "procfs";
    }
    return "?";
}

std::optional<DirtyThresholds> KernelDirtyState::thresholds() const {
    if (!global || global->dirty_thresh <= 0) return std::nullopt;
    DirtyThresholds t;
    t.background = global->background_thresh;
    t.hard = global->dirty_thresh;
    t.limit = global->dirty_limit > 0 ? global->dirty_limit : global->dirty_thresh;
    return t;
}

double KernelDirtyState::dirty_and_writeback() const {
    return global ? global->dirty + global->writeback : 0.0;
}

std::optional<std::string> backing_device_of(const std::string& path) {
    // A path not created yet is on the file system of its nearest existing ancestor.
    std::error_code ec;
    std::filesystem::path p = std::filesystem::absolute(path, ec);
    while (!std::filesystem::exists(p, ec)) {
        if (!p.has_parent_path() || p.parent_path() == p) return std::nullopt;
        p = p.parent_path();
    }
    // Write-back happens per whole disk: a partition's bdi is its disk's.
    const std::optional<DiskOfFile> disk = disk_of(p);
    if (!disk) return std::nullopt; // tmpfs, btrfs (anonymous dev), ...
    return disk->devno;
}

namespace {

double monotonic_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::optional<double> read_number(const char* file) {
    std::ifstream in(file);
    double value = 0;
    if (!(in >> value)) return std::nullopt;
    return value;
}

} // namespace

std::optional<KernelDirtyState> read_procfs_state(std::string* error) {
    std::ifstream vmstat("/proc/vmstat");
    if (!vmstat) {
        if (error) *error = fmt::format("/proc/vmstat: {}", std::strerror(errno));
        return std::nullopt;
    }
    KernelDirtyState state;
    state.source = StateSource::procfs;
    state.page_size = static_cast<double>(::sysconf(_SC_PAGESIZE));
    GlobalDirtySample g;
    g.time = monotonic_seconds();
    int found = 0;
    std::string key;
    double value = 0;
    while (vmstat >> key >> value) {
        const double bytes = value * state.page_size;
        if (key == "nr_dirty")
            g.dirty = bytes, ++found;
        else if (key == "nr_writeback")
            g.writeback = bytes, ++found;
        else if (key == "nr_dirty_threshold")
            g.dirty_thresh = bytes, ++found;
        else if (key == "nr_dirty_background_threshold")
            g.background_thresh = bytes, ++found;
        else if (key == "nr_dirtied")
            g.dirtied_total = bytes;
        else if (key == "nr_written")
            g.written_total = bytes;
    }
    if (found < 4) {
        if (error) *error = "/proc/vmstat lacks nr_dirty, nr_writeback or the dirty thresholds";
        return std::nullopt;
    }
    g.dirty_limit = g.dirty_thresh; // the smoothed limit is only visible through the tracepoint
    state.global = g;
    if (auto v = read_number("/proc/sys/vm/dirty_expire_centisecs")) state.dirty_expire = *v / 100;
    if (auto v = read_number("/proc/sys/vm/dirty_writeback_centisecs"))
        state.writeback_interval = *v / 100;
    return state;
}

void apply_kernel_state(ModelParameters& p, const KernelDirtyState& state,
                        const std::optional<std::string>& device, std::vector<std::string>* notes) {
    auto note = [notes](std::string text) {
        if (notes) notes->push_back(std::move(text));
    };
    if (auto t = state.thresholds()) {
        p.thresholds = *t;
        note(fmt::format("dirty thresholds from the kernel ({}): background {}, hard {}, limit {}",
                         to_string(state.source), human_size(t->background), human_size(t->hard),
                         human_size(t->effective_limit())));
    }
    if (state.dirty_expire > 0) p.dirty_expire = state.dirty_expire;
    if (state.writeback_interval > 0) p.writeback_interval = state.writeback_interval;
    if (!device) return;
    const auto it = state.devices.find(*device);
    if (it == state.devices.end()) return;
    const DeviceRateSample& d = it->second;
    if (d.dirty_ratelimit > 0) {
        p.dirty_ratelimit = d.dirty_ratelimit;
        note(fmt::format("dirty ratelimit of {} from the kernel: {}", *device,
                         human_bandwidth(d.dirty_ratelimit)));
    }
    // The kernel's write_bw is what the flusher achieved, smoothed over seconds and updated only
    // while dirtiers are throttled: a lower bound of what the device can write back. It raises a
    // stale (too low) node value; it never lowers one, since after short bursts it still lags
    // behind.
    const double measured = std::max(d.avg_write_bw, d.write_bw);
    if (measured > p.writeback_bw) {
        p.writeback_bw = measured;
        note(fmt::format("write-back bandwidth of {} raised to the kernel's measurement: {}",
                         *device, human_bandwidth(measured)));
    }
}

} // namespace iosig::cachesim
