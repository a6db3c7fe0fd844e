#include "system_params.hpp"

#include "io_buffer.hpp"
#include "measure.hpp"
#include "scratch.hpp"
#include "stats.hpp"
#include "sysfs.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <stdio_ext.h>
#include <thread>
#include <unistd.h>

namespace iosig::calibrate {
namespace {

// Times `call(size)` round-robin over `sizes` until the time box is used (at least `min_reps`
// rounds, at most `max_reps`), then fits a robust (Theil-Sen) line through the median time of each
// size: many sizes and repetitions, and neither a preempted call nor one disturbed size tilts it.
CostRegression regress(const std::vector<std::uint64_t>& sizes, unsigned min_reps,
                       unsigned max_reps, double seconds,
                       const std::function<double(std::uint64_t)>& call,
                       const std::function<void(double)>& report) {
    std::map<std::uint64_t, std::vector<double>> times;
    const double start = now_seconds();
    bool over_time = false;
    for (unsigned rep = 0; rep < max_reps && !over_time; ++rep) {
        if (rep >= min_reps && now_seconds() - start >= seconds) break;
        for (std::uint64_t size : sizes) {
            throw_if_interrupted();
            // A device far slower than the box assumed (write-back to a throttled disk) must not
            // hold the run: past twice the box, stop (every size has at least one sample).
            over_time = rep > 0 && now_seconds() - start >= 2 * seconds;
            if (over_time) break;
            times[size].push_back(call(size));
        }
        if (report) report(std::min(1.0, (now_seconds() - start) / seconds));
    }
    CostRegression r;
    std::vector<double> x, y;
    for (const auto& [size, samples] : times) {
        const double m = median(samples);
        r.points.emplace_back(size, m);
        r.samples += samples.size();
        x.push_back(static_cast<double>(size));
        y.push_back(m);
    }
    if (auto fit = fit_line_robust(x, y)) {
        r.base = fit->intercept;
        r.per_byte = fit->slope;
        r.r_squared = fit->r_squared;
        r.ok = r.points.size() >= 3;
    }
    return r;
}

void must(bool ok, const std::string& what) {
    if (!ok) throw std::runtime_error(fmt::format("{}: {}", what, std::strerror(errno)));
}

double timed_write(int fd, const std::byte* data, std::uint64_t size, off_t offset) {
    const double t0 = now_seconds();
    std::uint64_t done = 0;
    while (done < size) {
        const ssize_t n = pwrite(fd, data + done, size - done, offset + static_cast<off_t>(done));
        if (n < 0 && errno == EINTR) continue;
        must(n > 0, "write");
        done += static_cast<std::uint64_t>(n);
    }
    return now_seconds() - t0;
}

template <class T>
std::optional<T> read_value(const std::string& file) {
    std::ifstream in(file);
    T v{};
    if (in >> v) return v;
    return std::nullopt;
}

std::optional<std::uint64_t> vmstat(const std::string& key) {
    std::ifstream in("/proc/vmstat");
    std::string k;
    std::uint64_t v = 0;
    while (in >> k >> v)
        if (k == key) return v;
    return std::nullopt;
}

std::optional<std::uint64_t> meminfo_kib(const std::string& key) {
    std::ifstream in("/proc/meminfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(key + ":", 0) != 0) continue;
        std::istringstream s(line.substr(key.size() + 1));
        std::uint64_t v = 0;
        if (s >> v) return v;
    }
    return std::nullopt;
}

} // namespace

void read_system_settings(SystemMeasurements& out, const std::string& directory) {
    out.page_size = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
    if (auto v = read_value<double>("/proc/sys/vm/dirty_ratio")) out.dirty_ratio = *v / 100;
    if (auto v = read_value<double>("/proc/sys/vm/dirty_background_ratio"))
        out.dirty_background_ratio = *v / 100;
    out.dirty_bytes = read_value<std::uint64_t>("/proc/sys/vm/dirty_bytes");
    out.dirty_background_bytes = read_value<std::uint64_t>("/proc/sys/vm/dirty_background_bytes");
    if (auto v = read_value<double>("/proc/sys/vm/dirty_expire_centisecs"))
        out.dirty_expire = *v / 100;
    if (auto v = read_value<double>("/proc/sys/vm/dirty_writeback_centisecs"))
        out.dirty_writeback_interval = *v / 100;
    out.dirty_threshold_pages = vmstat("nr_dirty_threshold");
    out.dirty_background_threshold_pages = vmstat("nr_dirty_background_threshold");
    // The ratios apply to "dirtyable" memory (free + file pages); the kernel's own threshold
    // divided by the ratio recovers it exactly, else approximate it from /proc/meminfo.
    if (out.dirty_threshold_pages && out.dirty_ratio && *out.dirty_ratio > 0 &&
        out.dirty_bytes.value_or(0) == 0) {
        out.dirtyable_memory = static_cast<std::uint64_t>(
            static_cast<double>(*out.dirty_threshold_pages * out.page_size) / *out.dirty_ratio);
    } else {
        const auto free_kib = meminfo_kib("MemFree"), active = meminfo_kib("Active(file)"),
                   inactive = meminfo_kib("Inactive(file)");
        if (free_kib && active && inactive)
            out.dirtyable_memory = (*free_kib + *active + *inactive) * KiB;
    }
    // glibc sizes a stream's buffer from st_blksize of its file: measure on the file system used.
    const std::string dir = directory.empty() ? std::string("/tmp") : directory;
    const std::string path = fmt::format("{}/.iosig-calibrate-{}-stdio", dir, getpid());
    if (FILE* f = std::fopen(path.c_str(), "w")) {
        std::fputc('x', f); // the buffer is allocated by the first write
        out.stdio_buffer_size = __fbufsize(f);
        std::fclose(f);
        unlink(path.c_str());
    } else {
        out.notes.push_back(
            fmt::format("stdio buffer size not measured: cannot create a file in {}", dir));
    }
}

SystemMeasurements measure_system(const SystemOptions& options) {
    SystemMeasurements out;
    const double start = now_seconds();
    read_system_settings(out, options.page_cache_directory);
    out.page_cache_directory = options.page_cache_directory;
    const double box = options.seconds;
    auto report = [&](const char* phase) {
        return [&options, phase](double f) {
            if (options.report) options.report(phase, f);
        };
    };
    const unsigned max_reps = options.quick ? 400 : 4000;

    { // memory bandwidth: memcpy between two local buffers
        IoBuffer a(64 * MiB, -1), b(64 * MiB, -1);
        a.fill_random(7);
        std::vector<std::uint64_t> sizes;
        for (std::uint64_t s = MiB; s <= 64 * MiB; s *= 2)
            sizes.push_back(s);
        out.memcpy_cost = regress(
            sizes, 3, max_reps, box * 0.10,
            [&](std::uint64_t size) {
                const double t0 = now_seconds();
                std::memcpy(b.data(), a.data(), size);
                const double t = now_seconds() - t0;
                if (b.data()[size - 1] != a.data()[size - 1]) throw std::logic_error("memcpy");
                return t;
            },
            report("memory"));
    }

    if (options.page_cache_directory.empty()) {
        out.notes.push_back(
            "no disk-backed mount calibrated: page-cache and syscall costs not measured");
        out.seconds = now_seconds() - start;
        return out;
    }
    const std::string& dir = options.page_cache_directory;
    IoBuffer data(64 * MiB, -1);
    data.fill_random(11);

    { // write() into the page cache, small sizes: the syscall's fixed and per-byte cost
        ScratchFile f(dir, "pagecache", 0);
        std::uint64_t offset = 0;
        const std::vector<std::uint64_t> sizes = {
            1, 16, 64, 256, 512, KiB, 2 * KiB, 4 * KiB, 8 * KiB, 16 * KiB, 32 * KiB, 64 * KiB};
        out.buffered_small = regress(
            sizes, 5, max_reps, box * 0.20,
            [&](std::uint64_t size) {
                if (offset >
                    16 * MiB) { // keep the dirty set small: truncating drops dirty pages unwritten
                    must(ftruncate(f.fd(), 0) == 0, "truncate");
                    offset = 0;
                }
                const double t = timed_write(f.fd(), data.data(), size, static_cast<off_t>(offset));
                offset += size;
                return t;
            },
            report("write()"));
    }

    const std::vector<std::uint64_t> large =
        options.quick
            ? std::vector<std::uint64_t>{MiB, 2 * MiB, 4 * MiB, 8 * MiB, 16 * MiB, 32 * MiB}
            : std::vector<std::uint64_t>{MiB,      2 * MiB,  4 * MiB, 8 * MiB,
                                         16 * MiB, 32 * MiB, 64 * MiB};
    { // page-cache bandwidth: large appends to an empty file, below the background threshold
        ScratchFile f(dir, "pagecache-large", 0);
        out.buffered_large = regress(
            large, 3, max_reps, box * 0.20,
            [&](std::uint64_t size) {
                must(ftruncate(f.fd(), 0) == 0, "truncate");
                return timed_write(f.fd(), data.data(), size, 0);
            },
            report("page cache"));
    }

    { // the same while writeback runs: a helper thread keeps starting writeback of everything dirty
      // in the file (sync_file_range, the flusher's path) without touching the machine-wide
      // dirty thresholds other processes rely on.
        ScratchFile f(dir, "pagecache-flushing", 0);
        std::atomic<bool> stop{false};
        std::thread flusher([&] {
            while (!stop.load()) {
                sync_file_range(f.fd(), 0, 0, SYNC_FILE_RANGE_WRITE);
                // Every 10 ms, in large runs of pages as the kernel's flusher writes: a call per
                // few pages would issue page-sized IOs, which an IOPS-limited disk serves slowly.
                usleep(10000);
            }
        });
        std::uint64_t offset = 0;
        const std::uint64_t limit = 512 * MiB;
        // One round of sizes writes at most what the device writes back in half the box (at
        // least 1 + 2 + 4 MiB: three points for the regression).
        std::vector<std::uint64_t> sizes;
        std::uint64_t round = 0;
        for (std::uint64_t size : large) {
            if (sizes.size() >= 3 && options.device_write_bw > 0 &&
                static_cast<double>(round + size) > options.device_write_bw * box * 0.25 / 2)
                break;
            sizes.push_back(size);
            round += size;
        }
        // Everything written is written back before the file can go (unlink waits for it), so
        // the rounds are also capped by what the device writes back in the box.
        unsigned reps = max_reps;
        if (options.device_write_bw > 0)
            reps = std::clamp(static_cast<unsigned>(options.device_write_bw * box * 0.25 /
                                                    static_cast<double>(round)),
                              3u, max_reps);
        try {
            out.buffered_flushing = regress(
                sizes, 3, reps, box * 0.25,
                [&](std::uint64_t size) {
                    if (offset + size > limit) {
                        must(ftruncate(f.fd(), 0) == 0, "truncate");
                        offset = 0;
                    }
                    const double t =
                        timed_write(f.fd(), data.data(), size, static_cast<off_t>(offset));
                    offset += size;
                    return t;
                },
                report("flushing"));
        } catch (...) {
            stop = true;
            flusher.join();
            throw;
        }
        stop = true;
        flusher.join();
    }

    { // O_SYNC write(): overwrites of an allocated region, each reaching the device
        ScratchFile f(dir, "sync", O_SYNC);
        const std::uint64_t region = 16 * MiB;
        timed_write(f.fd(), data.data(), region, 0);
        std::uint64_t offset = 0;
        // Up to 4 MiB: the per-byte part must stand out of the journal commit every call pays.
        const std::vector<std::uint64_t> sizes = {512,       2 * KiB,   8 * KiB, 32 * KiB,
                                                  128 * KiB, 512 * KiB, 2 * MiB, 4 * MiB};
        out.sync_small = regress(
            sizes, 3, max_reps, box * 0.25,
            [&](std::uint64_t size) {
                if (offset + size > region) offset = 0;
                const double t = timed_write(f.fd(), data.data(), size, static_cast<off_t>(offset));
                offset += size;
                return t;
            },
            report("sync write()"));
    }
    out.seconds = now_seconds() - start;
    return out;
}

} // namespace iosig::calibrate
