#include "calibrate.hpp"

#include "iosig/cachesim/sync_cost.hpp"
#include "real_run.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <map>
#include <random>
#include <stdio_ext.h>
#include <unistd.h>

namespace iosig::cachesim::validate {
namespace {

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB;

struct Sample {
    double size;
    double cost;
};

void say(const CalibrationSetup& setup, const std::string& text) {
    if (setup.log) setup.log(text);
}

std::vector<WriteRequest> appends(const std::vector<std::uint64_t>& sizes) {
    std::vector<WriteRequest> out;
    std::uint64_t offset = 0;
    for (std::uint64_t s : sizes) {
        out.push_back({offset, s, 0, 0});
        offset += s;
    }
    return out;
}

std::vector<std::uint64_t> shuffled(std::vector<std::uint64_t> sizes, int copies,
                                    std::mt19937_64& rng) {
    std::vector<std::uint64_t> out;
    for (int c = 0; c < copies; ++c)
        out.insert(out.end(), sizes.begin(), sizes.end());
    std::shuffle(out.begin(), out.end(), rng);
    return out;
}

double background_threshold() {
    const auto state = read_procfs_state();
    return state && state->global ? state->global->background_thresh : 0;
}

// Which writes of a run the kernel paused (balance_dirty_pages with pause > 0 inside the call).
std::vector<bool> paused_writes(const CalibrationSetup& setup, const RunTimings& run) {
    std::vector<bool> paused(run.start.size(), false);
    if (!setup.collector) return paused;
    setup.collector->poll(0);
    for (const ThrottleSample& t : setup.collector->throttle_history()) {
        if (t.tgid != run.pid || t.pause <= 0) continue;
        const double at = t.time - run.t0;
        auto it = std::upper_bound(run.start.begin(), run.start.end(), at);
        if (it == run.start.begin()) continue;
        const std::size_t i = static_cast<std::size_t>(it - run.start.begin()) - 1;
        if (at <= run.end[i] + 1e-3) paused[i] = true;
    }
    return paused;
}

// Runs `make(run)` once as a warm-up and `repetitions` more times; keeps the samples `keep`
// accepts.
template <class Make, class Keep>
std::vector<Sample> sample_runs(const CalibrationSetup& setup, Method method, Make make, Keep keep,
                                RunOptions options = {},
                                const std::function<void(const RunTimings&)>& after = {}) {
    std::vector<Sample> samples;
    const auto file = setup.dir / "iosig-calibrate.dat";
    for (int run = 0; run <= setup.repetitions; ++run) {
        const std::vector<WriteRequest> workload = make(run);
        // Buffered runs start below the background threshold; direct and O_SYNC ones do not care.
        if (method == Method::buffered || method == Method::stdio)
            wait_for_clean(background_threshold() / 4, 10);
        if (setup.collector) setup.collector->clear_history();
        const RunTimings timings = run_workload(file, method, workload, options);
        if (!timings.ok())
            throw std::runtime_error(fmt::format("calibration run: {}", timings.error));
        if (run == 0) continue; // warm-up: first touches of memory and file system are slow here
        if (after) after(timings);
        const std::vector<bool> paused = paused_writes(setup, timings);
        for (std::size_t i = 0; i < workload.size(); ++i)
            if (!paused[i] && keep(workload, i))
                samples.push_back({static_cast<double>(workload[i].size), timings.cost(i)});
    }
    return samples;
}

// Through the per-size medians, by relative residuals: the medians are what the evaluation compares
// against, and relative weights keep small sizes from being drowned by large ones. (Least absolute
// relative deviations over all samples lands in the fast minority of this VM's bimodal sync-write
// times and underestimates totals by a factor of several.)
LinearFit fit(const std::vector<Sample>& samples, bool relative = true, bool mean = false) {
    std::vector<double> x, y;
    for (const Sample& s : samples) {
        x.push_back(s.size);
        y.push_back(s.cost);
    }
    if (mean) return fit_line(x, y);
    return relative ? fit_line_relative(x, y) : fit_line_medians(x, y);
}

// The paper's method (Sect. 6.1): the fixed cost from a regression over small sizes, the bandwidth
// from one over large sizes, each through the per-size medians.
LinearFit two_range_fit(const std::vector<Sample>& samples, double small_limit) {
    std::vector<Sample> small, large;
    for (const Sample& s : samples)
        (s.size <= small_limit ? small : large).push_back(s);
    LinearFit line = fit(large.empty() ? samples : large);
    if (!small.empty() && !large.empty()) line.intercept = fit(small).intercept;
    line.samples = samples.size();
    return line;
}

std::vector<double> sizes_of(const std::vector<Sample>& samples) {
    std::vector<double> out;
    for (const Sample& s : samples)
        out.push_back(s.size);
    return out;
}

std::vector<double> costs_of(const std::vector<Sample>& samples) {
    std::vector<double> out;
    for (const Sample& s : samples)
        out.push_back(s.cost);
    return out;
}

} // namespace

LinearFit measure_buffered_no_flush(const CalibrationSetup& setup) {
    std::mt19937_64 rng(1);
    std::vector<std::uint64_t> sizes = {512,     4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB,
                                        1 * MiB, 2 * MiB, 4 * MiB,  8 * MiB};
    // Stay well below the background threshold (less what others have dirty) so that the flusher
    // never starts.
    const auto now = read_procfs_state();
    const double budget = (background_threshold() - (now ? now->dirty_and_writeback() : 0.0)) / 2;
    auto batch = [&] {
        double sum = 0;
        for (std::uint64_t s : sizes)
            sum += static_cast<double>(s);
        return sum;
    };
    int copies = 2;
    while (copies > 1 && copies * batch() > budget)
        --copies;
    while (sizes.size() > 2 && copies * batch() > budget)
        sizes.pop_back();
    auto samples = sample_runs(
        setup, Method::buffered, [&](int) { return appends(shuffled(sizes, copies, rng)); },
        [](const auto&, std::size_t) { return true; });
    return two_range_fit(samples, 64 * KiB);
}

LinearFit measure_buffered_flushing(const CalibrationSetup& setup, double write_syscall_base,
                                    double* writeback_bw, double* start_latency) {
    const auto state = read_procfs_state();
    const double bg = state && state->global ? state->global->background_thresh : 0;
    const double thresh = state && state->global ? state->global->dirty_thresh : 0;
    const auto total = static_cast<std::uint64_t>(std::max<double>(128.0 * MiB, 2 * thresh));
    std::mt19937_64 rng(2);
    auto make = [&](int) {
        std::vector<std::uint64_t> sizes;
        for (std::uint64_t sum = 0; sum < total;) {
            for (std::uint64_t s : shuffled({2 * MiB, 4 * MiB, 8 * MiB, 16 * MiB}, 1, rng)) {
                sizes.push_back(s);
                sum += s;
            }
        }
        return appends(sizes);
    };
    // Once a tenth beyond the background threshold, the flusher is running.
    auto keep = [bg](const std::vector<WriteRequest>& w, std::size_t i) {
        return static_cast<double>(w[i].offset) > 1.1 * bg + 2.0 * MiB;
    };
    // The flusher's rate: from the moment the dirty pages first exceed the background threshold to
    // the end of the stream it has work throughout, so pages written / time is its bandwidth.
    double written = 0, busy = 0;
    std::vector<double> latencies;
    auto drain = [&](const RunTimings& run) {
        if (!setup.collector) return;
        setup.collector->trigger();
        setup.collector->poll(10);
        std::vector<GlobalDirtySample> h = setup.collector->global_history();
        std::sort(h.begin(), h.end(), [](const auto& a, const auto& b) { return a.time < b.time; });
        const double end = run.t0 + run.end.back();
        const GlobalDirtySample* first = nullptr;
        const GlobalDirtySample* last = nullptr;
        for (const GlobalDirtySample& g : h) {
            if (g.time < run.t0 || g.time > end) continue;
            if (!first && g.dirty + g.writeback > g.background_thresh) first = &g;
            if (first) last = &g;
        }
        if (first && last && last->time - first->time > 0.02 &&
            last->written_total > first->written_total) {
            written += last->written_total - first->written_total;
            busy += last->time - first->time;
        }
        // How long after the dirty pages first exceed the threshold the flusher submits write-back.
        const GlobalDirtySample* crossing = nullptr;
        for (const GlobalDirtySample& g : h) {
            if (g.time < run.t0 || g.time > end) continue;
            if (!crossing) {
                if (g.dirty > g.background_thresh) crossing = &g;
            } else if (g.writeback > crossing->writeback) {
                latencies.push_back(g.time - crossing->time);
                break;
            }
        }
    };
    auto samples = sample_runs(setup, Method::buffered, make, keep, {}, drain);
    if (writeback_bw && busy >= 0.05 && written > 0) *writeback_bw = written / busy;
    if (start_latency && !latencies.empty()) *start_latency = median(latencies);
    for (Sample& s : samples)
        s.cost -= write_syscall_base;
    // The flusher slows the writer with occasional long stalls (lock and CPU contention), not
    // evenly: CAWL's r_ramdisk under background flush is the average rate, so least squares over
    // all samples.
    return fit(samples, false, true);
}

LinearFit measure_direct(const CalibrationSetup& setup, double* quantum) {
    std::mt19937_64 rng(3);
    const std::vector<std::uint64_t> sizes = {4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, 1 * MiB,
                                              2 * MiB, 4 * MiB,  8 * MiB,  16 * MiB};
    auto samples = sample_runs(
        setup, Method::direct, [&](int) { return appends(shuffled(sizes, 3, rng)); },
        [](const auto&, std::size_t) { return true; });
    LinearFit line = two_range_fit(samples, 64 * KiB);
    const auto medians = per_size_medians(sizes_of(samples), costs_of(samples));
    const double q = detect_quantum(medians);
    if (quantum) *quantum = q;
    if (q > 0 && setup.use_completion_ticks) {
        const auto [l, slope] = fit_quantized(
            medians, q, line.slope, [](double l, double slope, double s) { return l + s * slope; });
        line.intercept = l;
        line.slope = slope;
    }
    return line;
}

LinearFit measure_sync(const CalibrationSetup& setup, const ModelParameters& p) {
    // Eq. 3 with the device part as given: the fixed cost L and the copy cost per byte are fitted.
    const double q = p.sync_completion_quantum;
    std::mt19937_64 rng(4);
    const std::vector<std::uint64_t> sizes = {4 * KiB, 6000,      16 * KiB, 64 * KiB,
                                              100000,  256 * KiB, 1 * MiB,  4 * MiB};
    auto samples = sample_runs(
        setup, Method::sync, [&](int) { return appends(shuffled(sizes, 2, rng)); },
        [](const auto&, std::size_t) { return true; });
    if (q > 0) {
        const auto medians = per_size_medians(sizes_of(samples), costs_of(samples));
        auto cost = [&p](double l, double c, double s) {
            ModelParameters x = p;
            x.sync_write_syscall_base = l;
            x.sync_copy_per_byte = c;
            return sync_write_cost(x, s, false, false);
        };
        const auto [l, c] = fit_quantized(medians, q, 0.5e-9, cost);
        LinearFit line;
        line.intercept = l;
        line.slope = c;
        line.samples = samples.size();
        return line;
    }
    // What Eq. 3 attributes to the device, given B_dev; the rest is L_sync + s * c_copy.
    for (Sample& s : samples) {
        const double whole = std::floor(s.size / p.block_size) * p.block_size;
        s.cost -=
            whole / p.device_write_bw + (s.size > whole ? p.block_size / p.device_write_bw : 0.0);
    }
    return fit(samples);
}

LinearFit measure_stdio_copy(const CalibrationSetup& setup) {
    std::mt19937_64 rng(5);
    const std::uint64_t buffer = measure_stdio_buffer(setup.dir);
    std::vector<std::uint64_t> sizes;
    for (std::uint64_t s : {16, 64, 256, 512, 1024})
        if (s < buffer) sizes.push_back(s);
    // Calls that find the buffer too full write it out: leave them out (glibc's rule, as Alg. 2).
    auto keep = [buffer](const std::vector<WriteRequest>& w, std::size_t i) {
        std::uint64_t used = 0;
        bool put_mode = false, flushed = false;
        for (std::size_t k = 0; k <= i; ++k) {
            const std::uint64_t space = put_mode ? buffer - used : 0;
            flushed = w[k].size > space && used + space > 0;
            if (w[k].size <= space)
                used += w[k].size;
            else
                used = (w[k].size - space) % buffer, put_mode = true;
        }
        return !flushed && i > 0;
    };
    auto samples = sample_runs(
        setup, Method::stdio, [&](int) { return appends(shuffled(sizes, 40, rng)); }, keep);
    return fit(samples);
}

double measure_seek(const CalibrationSetup& setup) {
    const auto file = setup.dir / "iosig-calibrate.dat";
    const std::uint64_t span = 64 * MiB, count = 128;
    RunOptions keep;
    keep.keep_file = true;
    const RunTimings prepared =
        run_workload(file, Method::buffered, sequential_workload(span, 4 * MiB, 0), keep);
    if (!prepared.ok())
        throw std::runtime_error(fmt::format("seek calibration: {}", prepared.error));
    RunOptions overwrite;
    overwrite.keep_file = true;
    overwrite.truncate = false;
    std::mt19937_64 rng(6);
    std::vector<std::vector<double>> rows;
    std::vector<double> costs;
    for (int run = 0; run <= setup.repetitions; ++run) {
        for (int random = 0; random < 2; ++random) {
            std::vector<WriteRequest> w;
            for (std::uint64_t i = 0; i < count; ++i) {
                const std::uint64_t offset =
                    random ? (rng() % (span / (4 * KiB))) * 4 * KiB : i * 4 * KiB;
                w.push_back({offset, 4 * KiB, 0, 0});
            }
            const RunTimings t = run_workload(file, Method::direct, w, overwrite);
            if (!t.ok()) throw std::runtime_error(fmt::format("seek calibration: {}", t.error));
            if (run == 0) continue;
            for (std::size_t i = 1; i < w.size(); ++i) {
                rows.push_back({1.0, static_cast<double>(random)});
                costs.push_back(t.cost(i));
            }
        }
    }
    std::filesystem::remove(file);
    const std::vector<double> b = fit_linear(rows, costs);
    return b.size() == 2 ? b[1] : 0.0;
}

LinearFit measure_direct_read(const CalibrationSetup& setup) {
    const auto file = setup.dir / "iosig-calibrate-read.dat";
    const std::uint64_t span = 64 * MiB;
    RunOptions keep;
    keep.keep_file = true;
    const RunTimings prepared =
        run_workload(file, Method::buffered, sequential_workload(span, 4 * MiB, 0), keep);
    if (!prepared.ok())
        throw std::runtime_error(fmt::format("read calibration: {}", prepared.error));
    const int fd = ::open(file.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (fd < 0)
        throw std::runtime_error(
            fmt::format("read calibration: O_DIRECT open: {}", std::strerror(errno)));
    void* buffer = std::aligned_alloc(4096, 4 * MiB);
    std::mt19937_64 rng(7);
    std::vector<double> x, y;
    const std::uint64_t sizes[] = {256 * KiB, 1 * MiB, 2 * MiB, 4 * MiB};
    for (int run = 0; run <= setup.repetitions; ++run)
        for (std::uint64_t size : sizes) {
            const auto offset = static_cast<off_t>((rng() % (span / size)) * size);
            const double t0 = monotonic_now();
            const ssize_t n = ::pread(fd, buffer, size, offset);
            const double t = monotonic_now() - t0;
            if (n != static_cast<ssize_t>(size) || run == 0) continue;
            x.push_back(static_cast<double>(size));
            y.push_back(t);
        }
    std::free(buffer);
    ::close(fd);
    std::filesystem::remove(file);
    return fit_line_relative(x, y);
}

std::uint64_t measure_stdio_buffer(const std::filesystem::path& dir) {
    const auto file = dir / "iosig-calibrate-stdio.dat";
    std::FILE* f = std::fopen(file.c_str(), "w");
    if (!f) return 4096;
    std::fputc('x', f);
    const std::size_t size = __fbufsize(f);
    std::fclose(f);
    std::filesystem::remove(file);
    return size ? size : 4096;
}

Calibration calibrate(const CalibrationSetup& setup) {
    Calibration c;
    MeasuredParameters& m = c.measured;
    auto record = [&](const std::string& name, const LinearFit& f) {
        c.fits[name] = f;
        say(setup,
            fmt::format(
                "  {:<22} intercept {:.3g} s, slope {:.4g} s/B ({:.4g} B/s), r2 {:.3f}, {} samples",
                name, f.intercept, f.slope, f.slope > 0 ? 1 / f.slope : 0.0, f.r2, f.samples));
    };

    say(setup, "measuring O_DIRECT|O_SYNC writes (Eq. 2: L_sync, B_dev)");
    double quantum = 0;
    const LinearFit direct = measure_direct(setup, &quantum);
    record("direct", direct);
    m.op_latency = std::max(0.0, direct.intercept);
    if (direct.slope > 0) m.device_write_bw = 1 / direct.slope;
    if (quantum > 0 && !setup.use_completion_ticks) {
        c.notes.push_back(
            fmt::format("synchronous writes completed on {:.2f} ms ticks during the calibration; "
                        "not used (--ticks uses them)",
                        quantum * 1e3));
        say(setup, c.notes.back());
        quantum = 0;
    }
    if (quantum > 0) {
        m.sync_completion_quantum = quantum;
        say(setup,
            fmt::format("  synchronous writes complete on {:.2f} ms ticks (fitted as a staircase)",
                        quantum * 1e3));
    }

    say(setup, "measuring O_DIRECT reads (B_read of Eq. 3)");
    const LinearFit read = measure_direct_read(setup);
    record("direct read", read);
    if (read.slope > 0) m.device_read_bw = 1 / read.slope;

    say(setup, "measuring seeks (random vs sequential 4 KiB O_DIRECT overwrites)");
    const double seek = measure_seek(setup);
    m.seek_latency = std::max(0.0, seek);
    say(setup, fmt::format("  seek coefficient {:.3g} s{}", seek,
                           seek < 0 ? " (negative: stored as 0)" : ""));

    ModelParameters with_device;
    with_device.device_write_bw = m.device_write_bw.value_or(1e9);
    with_device.sync_completion_quantum = quantum;
    say(setup, "measuring O_SYNC writes through the page cache (Eq. 3: copy cost)");
    const LinearFit sync = measure_sync(setup, with_device);
    record("sync (device part removed)", sync);
    // Stored as iosig-calibrate defines them: the fixed cost, and the whole per-byte slope (copy +
    // device).
    m.sync_write_syscall_base = std::max(0.0, sync.intercept);
    m.sync_write_syscall_per_byte = std::max(0.0, sync.slope) + 1 / with_device.device_write_bw;
    if (sync.slope < 0) c.notes.push_back("the O_SYNC copy slope came out negative: taken as 0");

    say(setup, "measuring buffered writes below the background threshold (L_w, r_ramdisk)");
    const LinearFit buffered = measure_buffered_no_flush(setup);
    record("buffered no-flush", buffered);
    m.write_syscall_base = std::max(0.0, buffered.intercept);
    if (buffered.slope > 0) {
        m.page_cache_write_bw = 1 / buffered.slope;
        m.write_syscall_per_byte = buffered.slope;
    }

    say(setup,
        "measuring buffered writes while the flusher runs (r_ramdisk under background flush)");
    double writeback = 0, latency = -1;
    const LinearFit flushing =
        measure_buffered_flushing(setup, m.write_syscall_base.value_or(0), &writeback, &latency);
    record("buffered flushing", flushing);
    if (flushing.slope > 0) m.page_cache_write_bw_flushing = 1 / flushing.slope;
    if (latency >= 0) {
        m.writeback_start_latency = latency;
        say(setup,
            fmt::format(
                "  flusher starts {:.2f} ms after the background threshold is crossed (eBPF)",
                latency * 1e3));
    }
    if (writeback > 0) {
        m.writeback_bw = writeback;
        say(setup,
            fmt::format(
                "  flusher write-back rate (eBPF, while above the background threshold) {:.4g} B/s",
                writeback));
    } else {
        c.notes.push_back(
            "write-back rate not measured (no eBPF samples above the background threshold)");
    }

    say(setup, "measuring fwrite into the stdio buffer (memory_bw, per-call cost)");
    m.stdio_buffer_size = measure_stdio_buffer(setup.dir);
    const LinearFit stdio = measure_stdio_copy(setup);
    record("stdio copy", stdio);
    c.stdio_call_base = std::max(0.0, stdio.intercept);
    if (stdio.slope > 0) m.memory_bw = 1 / stdio.slope;
    return c;
}

} // namespace iosig::cachesim::validate
