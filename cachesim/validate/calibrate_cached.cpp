// Buffered and stdio writes: L_w, r_ramdisk, r_ramdisk under background flush, the flusher's
// rate and start latency, r_mem and the libc buffer.
#include "calibrate.hpp"
#include "calibrate_runs.hpp"
#include "iosig/cachesim/sync_cost.hpp"

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

using namespace detail;

LinearFit measure_buffered_no_flush(const CalibrationSetup& setup) {
    std::mt19937_64 rng(1);
    // Whole pages, so that every append starts on a page boundary: an unaligned append pays for
    // the partial pages at either end, and with 512 B in the list L_w came out 3.4-4.2 us where
    // the page-aligned writes glibc's stdio makes (4096 / 8192 B) cost ~2.5 us each.
    // The fixed cost comes from runs of one small size each (32 appends, the first two left out),
    // as stdio makes them; the rate from the large sizes, mixed.
    auto samples = single_size_runs(setup, Method::buffered, {4 * KiB, 8 * KiB, 16 * KiB, 64 * KiB},
                                    rng, 32, 2);
    std::vector<std::uint64_t> sizes = {256 * KiB, 1 * MiB, 2 * MiB, 4 * MiB, 8 * MiB};
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
    // Three times the usual runs: a run holds only two writes of each large size, and the fresh
    // page rate (the slope) moved by 10 % between calibrations with the usual count.
    CalibrationSetup more = setup;
    more.repetitions = 3 * setup.repetitions;
    const auto large = sample_runs(
        more, Method::buffered, [&](int) { return appends(shuffled(sizes, copies, rng)); },
        [](const auto&, std::size_t) { return true; });
    samples.insert(samples.end(), large.begin(), large.end());
    return two_range_fit(samples, 64 * KiB);
}

void collect_sleep_lengths(const std::vector<int>& sleeps,
                           const std::vector<WriteRequest>& workload, const RunTimings& run,
                           std::vector<double>& lengths) {
    std::map<std::uint64_t, std::vector<double>> unpaused;
    for (std::size_t i = 0; i < sleeps.size() && i < workload.size(); ++i)
        if (sleeps[i] == 0) unpaused[workload[i].size].push_back(run.cost(i));
    for (std::size_t i = 0; i < sleeps.size() && i < workload.size(); ++i) {
        const auto it = unpaused.find(workload[i].size);
        if (sleeps[i] == 0 || it == unpaused.end() || it->second.size() < 3) continue;
        const double extra = run.cost(i) - median(it->second);
        if (extra > 0) lengths.push_back(extra / sleeps[i]);
    }
}

LinearFit measure_buffered_flushing(const CalibrationSetup& setup, double write_syscall_base,
                                    double* writeback_bw, double* start_latency,
                                    double* throttle_sleep) {
    const auto state = read_procfs_state();
    const double bg = state && state->global ? state->global->background_thresh : 0;
    const double thresh = state && state->global ? state->global->dirty_thresh : 0;
    const auto total = static_cast<std::uint64_t>(std::max<double>(128.0 * MiB, 2 * thresh));
    std::mt19937_64 rng(2);
    std::vector<WriteRequest> current; // the workload of the run being drained
    auto make = [&](int) {
        std::vector<std::uint64_t> sizes;
        for (std::uint64_t sum = 0; sum < total;) {
            for (std::uint64_t s : shuffled({2 * MiB, 4 * MiB, 8 * MiB, 16 * MiB}, 1, rng)) {
                sizes.push_back(s);
                sum += s;
            }
        }
        current = appends(sizes);
        return current;
    };
    // Once a tenth beyond the background threshold, the flusher is running.
    auto keep = [bg](const std::vector<WriteRequest>& w, std::size_t i) {
        return static_cast<double>(w[i].offset) > 1.1 * bg + 2.0 * MiB;
    };
    // The flusher's rate: from the moment the dirty pages first exceed the background threshold to
    // the end of the stream it has work throughout, so pages written / time is its bandwidth.
    double written = 0, busy = 0;
    std::vector<double> latencies, sleeps;
    auto drain = [&](const RunTimings& run) {
        if (!setup.collector) return;
        setup.collector->trigger();
        setup.collector->poll(10);
        collect_sleep_lengths(throttle_sleeps(setup, run), current, run, sleeps);
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
    if (throttle_sleep && sleeps.size() >= 3) *throttle_sleep = median(sleeps);
    for (Sample& s : samples)
        s.cost -= write_syscall_base;
    // The flusher slows the writer with occasional long stalls (lock and CPU contention), not
    // evenly. The per-size medians give the typical write, which is what the evaluation compares
    // with (per-write medians); the stalls' average would be fit(samples, false, true).
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

} // namespace iosig::cachesim::validate
