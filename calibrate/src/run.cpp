#include "run.hpp"

#include "chunk_sweep.hpp"
#include "iosig/units.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <optional>
#include <unistd.h>

namespace iosig::calibrate {
namespace {

// 1 MiB: large enough for sequential bandwidth, small enough that a 20 MiB/s device completes
// dozens within a phase (with 4 MiB a throttled device's accounting slices show as +-20 %).
constexpr std::uint64_t seq_block = MiB;
constexpr std::uint64_t random_block = 4 * KiB;
constexpr unsigned queue_depth = 32;
// IOPS phases run for at least this many IOs (the first queue_depth are the ramp and not counted):
// a rate limiter releases IOs in 100 ms steps, and a slope over fewer than ~1 s of steps is off by
// up to 15 % on the lab's 200 IOPS disk. A fast device completes them in milliseconds.
constexpr std::uint64_t iops_min_ios = queue_depth + 200;
// Sequential phases keep a few large IOs in flight: at QD1 every IO pays the device's (or a rate
// limiter's) dispatch gap, and a throttled 20 MiB/s disk streams at 16-18 MiB/s (fio agrees).
// Not on RAM file systems: there is no device queue to keep busy, the copy is the cost, and
// io_uring would only add its worker threads to the CPUs doing it.
constexpr unsigned seq_queue_depth = 4;

// Shares of a file system's time box, in the order the phases run.
struct Shares {
    double seq_write = 0.12, seq_read = 0.08, read_latency = 0.05, sequential_latency = 0.02,
           write_latency = 0.05, read_iops = 0.07, write_iops = 0.07, mixed_iops = 0.05,
           sweep = 0.51;
};

bool is_rotational(const Discovery& d, const std::string& device) {
    const auto it = d.devices.find(device);
    if (it == d.devices.end()) return false;
    if (it->second.rotational) return true;
    if (it->second.structure == DeviceStructure::partition)
        return is_rotational(d, it->second.owner);
    return false;
}

unsigned btrfs_sector_of(const Discovery& d, const MountTarget& t) {
    if (t.entry.fs_type != "btrfs") return 0;
    const auto it = d.devices.find(t.device);
    return it != d.devices.end() && it->second.kind == "btrfs" ? it->second.logical_block_size
                                                               : 4096;
}

// Media from evidence: the kernel's rotational flag, unless random reads show no seek penalty at
// solid-state latency (virtual disks often claim to be rotational).
void classify_media(Discovery& d, const MountTarget& t, const MountMeasurements& m) {
    auto it = d.devices.find(t.device);
    if (it == d.devices.end()) return;
    DeviceModel& dev = it->second;
    if (dev.media != MediaKind::hdd || m.read_latency.samples.empty()) return;
    // The mean, not the median: a throttled or bursty device serves most IOs at once and a few
    // late.
    if (m.seek_latency < 0.5e-3 && m.read_latency.mean < 1e-3) {
        dev.media = MediaKind::ssd;
        dev.note +=
            (dev.note.empty() ? "" : "; ") +
            fmt::format(
                "kernel says rotational, but 4 KiB random reads take {} with no seek penalty: ssd",
                human_duration(m.read_latency.mean));
    }
}

// A pause before each phase: a throttled device's accounting (blk-throttle slices) and a disk's
// queue start every phase from idle, as a separate benchmark run would.
void settle() {
    usleep(100 * 1000);
}

// Splits a file system's time box over the phases: each phase gets its share of what is left, so
// time a fast phase did not need goes to the later ones.
class TimeBox {
public:
    TimeBox(double budget, double total_share)
        : budget_(budget), left_share_(total_share), start_(now_seconds()) {}
    double take(double share) {
        const double left = std::max(0.0, budget_ - (now_seconds() - start_));
        const double seconds = left * share / std::max(left_share_, share);
        left_share_ -= share;
        return seconds;
    }

private:
    double budget_, left_share_, start_;
};

MountMeasurements measure_mount(const Discovery& discovery, const MountTarget& target,
                                double budget, bool quick, Progress& progress,
                                const std::string& label) {
    MountMeasurements m;
    m.directory = target.path;
    m.budget = budget;
    const double start = now_seconds();
    const Shares s;
    const bool rotational = is_rotational(discovery, target.device);
    TimeBox box(budget, s.seq_write + s.seq_read + s.read_latency + s.write_latency + s.read_iops +
                            s.write_iops + s.mixed_iops + s.sweep +
                            (rotational ? s.sequential_latency : 0));
    auto phase = [&](const char* name) {
        progress.begin(label, name);
        settle();
    };

    MountIo io(target.path, target.entry.fs_type, btrfs_sector_of(discovery, target),
               target.numa_node);
    m.method = io.method();
    if (!m.method.direct)
        m.notes.push_back("O_DIRECT refused: writes use O_DSYNC, reads drop the page cache first");

    // Scratch file: large enough to defeat device caches, small next to the free space.
    const std::uint64_t cap = std::min<std::uint64_t>(
        quick ? 128 * MiB : 512 * MiB, std::max<std::uint64_t>(target.free_space / 8, 8 * MiB));
    const unsigned seq_depth = is_ram_fs(target.entry.fs_type) ? 1 : seq_queue_depth;
    phase("seq write");
    m.seq_write = io.sequential_write(seq_block, cap,
                                      limits_for(progress, box.take(s.seq_write), 4), seq_depth);
    progress.end(human_bandwidth(m.seq_write.bytes_per_second));
    m.file_size = io.file_size();

    phase("seq read");
    m.seq_read =
        io.sequential_read(seq_block, limits_for(progress, box.take(s.seq_read), 4), seq_depth);
    progress.end(human_bandwidth(m.seq_read.bytes_per_second));

    phase("read lat");
    m.read_latency =
        io.latency(false, true, random_block, limits_for(progress, box.take(s.read_latency), 20));
    progress.end(fmt::format("p50 {} p99 {}", human_duration(m.read_latency.p50),
                             human_duration(m.read_latency.p99)));

    if (rotational) {
        phase("seek");
        m.sequential_read_latency = io.latency(
            false, false, random_block, limits_for(progress, box.take(s.sequential_latency), 20));
        m.seek_latency = std::max(0.0, m.read_latency.p50 - m.sequential_read_latency->p50);
        progress.end(fmt::format("seek {}", human_duration(m.seek_latency)));
    }

    phase("read IOPS");
    m.random_read = io.random_iops(false, random_block, queue_depth,
                                   limits_for(progress, box.take(s.read_iops), iops_min_ios));
    progress.end(fmt::format("{:.0f} IOPS (QD {})", m.random_read.iops, m.random_read.queue_depth));

    // The reads above see the file as the sequential write laid it out (as fio's fresh file is);
    // the writes below (sweep, random 4 KiB) fragment a copy-on-write file, so they come after
    // them, and the sweep, which needs the large extents most, first.
    phase("chunk sweep");
    const auto device = discovery.devices.find(target.device);
    const bool throttled = device != discovery.devices.end() && device->second.throttle.slice > 0;
    run_sweep(io, m, target, quick, throttled, box.take(s.sweep), progress);
    progress.end(fmt::format("{} chunk sizes", m.sweep.size()));

    phase("write lat");
    m.write_latency =
        io.latency(true, true, random_block, limits_for(progress, box.take(s.write_latency), 20));
    progress.end(fmt::format("p50 {} p99 {}", human_duration(m.write_latency.p50),
                             human_duration(m.write_latency.p99)));

    phase("write IOPS");
    m.random_write = io.random_iops(true, random_block, queue_depth,
                                    limits_for(progress, box.take(s.write_iops), iops_min_ios));
    progress.end(
        fmt::format("{:.0f} IOPS (QD {})", m.random_write.iops, m.random_write.queue_depth));

    // Whether reads and writes share the device (their solo rates split between them) or are
    // limited separately (each keeps its own): Performance::independent_read_write.
    phase("mixed IOPS");
    const MixedIops mixed = io.mixed_iops(
        random_block, queue_depth, limits_for(progress, box.take(s.mixed_iops), iops_min_ios));
    if (!mixed.engine.empty()) {
        m.mixed = mixed;
        progress.end(fmt::format("{:.0f} reads + {:.0f} writes/s, {:.2f}x one direction",
                                 mixed.read_iops, mixed.write_iops,
                                 read_write_utilisation(mixed, m.random_read, m.random_write)));
    } else {
        progress.end("skipped (io_uring unavailable)");
    }

    fit_sweep(m, target, throttled);
    if (m.fit)
        progress.note(fmt::format(
            "{}: Eq. 3 fit over {} chunk sizes: l = {}, wbw = {}, cs = {} B, median error {:.1f} %",
            label, m.sweep.size(), human_duration(m.fit->parameters.latency),
            human_bandwidth(m.fit->parameters.write_bw), m.fit->parameters.chunk,
            m.fit->median_relative_error * 100));
    m.seconds = now_seconds() - start;
    return m;
}

// The mount used for page-cache and syscall costs: the disk-backed one that measured the fastest
// sequential writes. Write-back to a slow disk throttles the very buffered writes this is to
// measure, and on a rate-limited device it queues IO that later phases would pay for.
std::string page_cache_directory(const Calibration& c) {
    std::string best;
    double best_bw = -1;
    for (const MountTarget& t : c.discovery.mounts) {
        const auto it = c.discovery.devices.find(t.device);
        if (it == c.discovery.devices.end()) continue;
        if (it->second.media == MediaKind::ram || it->second.media == MediaKind::network) continue;
        const auto m = c.by_group.find(t.group);
        const double bw = m == c.by_group.end() || !m->second.error.empty()
                              ? 0
                              : m->second.seq_write.bytes_per_second;
        if (bw > best_bw) {
            best = t.path;
            best_bw = bw;
        }
    }
    return best;
}

std::string label_of(const MountTarget& t) {
    const std::string name = t.path == "/" ? "/" : t.path.substr(t.path.find_last_of('/') + 1);
    return name.empty() ? t.path : name;
}

} // namespace

Calibration run_calibration(const RunOptions& options, Progress& progress) {
    Calibration c;
    const double start = now_seconds();
    c.quick = options.quick;
    c.budget = options.time_budget > 0
                   ? options.time_budget
                   : (options.quick ? quick_default_budget : full_default_budget);
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    c.hostname = host;

    c.discovery = discover(options.discovery);
    for (const SkippedMount& s : c.discovery.skipped)
        progress.note(fmt::format("skipping {} ({}): {}", s.path, s.fs_type, s.reason));
    for (const auto& [name, device] : c.discovery.devices)
        if (device.throttle.slice > 0)
            progress.note(fmt::format("{}: blk-throttle limit {}; slice {}: {}", name,
                                      device.throttle.limit, human_duration(device.throttle.slice),
                                      device.throttle.reason));

    std::vector<const MountTarget*> groups;
    for (const MountTarget& t : c.discovery.mounts) {
        const auto same = std::find_if(groups.begin(), groups.end(),
                                       [&](const MountTarget* g) { return g->group == t.group; });
        if (same == groups.end())
            groups.push_back(&t);
        else
            progress.note(fmt::format("{} is on the same file system as {}: measured once", t.path,
                                      (*same)->path));
    }

    // The node-wide measurements run last (on the fastest disk-backed mount, known only then);
    // their time box is set aside first.
    const double system_seconds = std::min(c.budget * 0.12, options.quick ? 6.0 : 40.0);
    for (std::size_t i = 0; i < groups.size(); ++i) {
        throw_if_interrupted();
        const double left = c.budget - system_seconds - (now_seconds() - start);
        const double share = std::max(left / static_cast<double>(groups.size() - i), 1.0);
        const MountTarget& t = *groups[i];
        run_on_numa_node(t.numa_node);
        try {
            MountMeasurements m =
                measure_mount(c.discovery, t, share, options.quick, progress, label_of(t));
            classify_media(c.discovery, t, m);
            c.by_group[t.group] = std::move(m);
        } catch (const Interrupted&) {
            throw;
        } catch (const std::exception& e) {
            progress.end("failed");
            MountMeasurements m;
            m.directory = t.path;
            m.error = e.what();
            c.errors.push_back(fmt::format("{}: {}", t.path, e.what()));
            progress.note(fmt::format("{}: measurement failed: {}", t.path, e.what()));
            c.by_group[t.group] = std::move(m);
        }
    }
    run_on_numa_node(-1);

    throw_if_interrupted();
    SystemOptions so;
    so.page_cache_directory = page_cache_directory(c);
    for (const MountTarget& t : c.discovery.mounts)
        if (t.path == so.page_cache_directory)
            if (const auto m = c.by_group.find(t.group); m != c.by_group.end())
                so.device_write_bw = m->second.seq_write.bytes_per_second;
    so.quick = options.quick;
    so.seconds = system_seconds;
    std::string last_phase;
    so.report = [&](const std::string& phase, double fraction) {
        if (phase != last_phase) {
            if (!last_phase.empty()) progress.end("done");
            progress.begin("system", phase);
            last_phase = phase;
        }
        progress.update(fraction);
    };
    c.system = measure_system(so);
    if (!last_phase.empty()) progress.end("done");

    // Partitions nobody measured take their owner's (possibly reclassified) medium.
    for (auto& [name, device] : c.discovery.devices) {
        if (device.structure != DeviceStructure::partition) continue;
        const bool measured = std::any_of(groups.begin(), groups.end(),
                                          [&](const MountTarget* g) { return g->device == name; });
        if (!measured) {
            if (auto owner = c.discovery.devices.find(device.owner);
                owner != c.discovery.devices.end())
                device.media = owner->second.media;
        }
    }
    c.seconds = now_seconds() - start;
    return c;
}

} // namespace iosig::calibrate
