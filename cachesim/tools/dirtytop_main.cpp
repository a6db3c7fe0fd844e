// iosig-dirtytop: the kernel's dirty-page and throttling state, once a second.
#include "iosig/cachesim/collector.hpp"
#include "iosig/units.hpp"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <csignal>
#include <fmt/format.h>
#include <fstream>
#include <thread>

namespace {

volatile std::sig_atomic_t stop_requested = 0;

std::string process_name(pid_t pid) {
    std::ifstream in(fmt::format("/proc/{}/comm", pid));
    std::string name;
    std::getline(in, name);
    return name.empty() ? "?" : name;
}

} // namespace

int main(int argc, char** argv) {
    using namespace iosig::cachesim;
    using iosig::human_bandwidth;
    using iosig::human_size;
    CLI::App app{
        "Live dirty pages, thresholds, write-back rates and throttling (eBPF, or /proc/vmstat)"};
    double interval = 1;
    int count = 0;
    bool no_bpf = false;
    app.add_option("--interval", interval, "Seconds between lines")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    app.add_option("--count", count, "Stop after this many lines (0: until interrupted)")
        ->capture_default_str();
    app.add_flag("--no-bpf", no_bpf, "Use the /proc/vmstat fallback");
    CLI11_PARSE(app, argc, argv);

    std::signal(SIGINT, [](int) { stop_requested = 1; });
    std::signal(SIGTERM, [](int) { stop_requested = 1; });
    CollectorOptions options;
    options.allow_bpf = !no_bpf;
    options.history_limit = 0; // only the live state is needed
    auto collector = DirtyCollector::open(options);
    collector->start();
    fmt::print("source: {}\n", to_string(collector->source()));
    std::map<pid_t, double> previous_pause;
    double previous_written = collector->snapshot().pages_written_total;
    for (int line = 0; (count == 0 || line < count) && !stop_requested; ++line) {
        const auto until =
            std::chrono::steady_clock::now() + std::chrono::duration<double>(interval);
        while (std::chrono::steady_clock::now() < until && !stop_requested)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        const KernelDirtyState s = collector->snapshot();
        if (!s.global) continue;
        const GlobalDirtySample& g = *s.global;
        fmt::print("dirty {:>10}  writeback {:>10}  bg {:>10}  thresh {:>10}  limit {:>10}",
                   human_size(g.dirty), human_size(g.writeback), human_size(g.background_thresh),
                   human_size(g.dirty_thresh), human_size(g.dirty_limit));
        if (s.source == StateSource::ebpf)
            fmt::print("  written {:>10}/s", human_size((s.pages_written_total - previous_written) *
                                                        s.page_size / interval));
        fmt::print("\n");
        previous_written = s.pages_written_total;
        for (const auto& [device, d] : s.devices)
            fmt::print("  bdi {:<8} write_bw {:>11}  avg {:>11}  dirty_rate {:>11}  "
                       "dirty_ratelimit {:>11}  "
                       "balanced {:>11}\n",
                       device, human_bandwidth(d.write_bw), human_bandwidth(d.avg_write_bw),
                       human_bandwidth(d.dirty_rate), human_bandwidth(d.dirty_ratelimit),
                       human_bandwidth(d.balanced_dirty_ratelimit));
        for (const auto& [tgid, t] : s.tasks) {
            const double paused = t.total_pause - previous_pause[tgid];
            previous_pause[tgid] = t.total_pause;
            if (paused <= 0) continue;
            fmt::print("  task {:>7} {:<16} paused {:>7.3f} s in the last {:.0f} s, task_ratelimit "
                       "{:>11}\n",
                       tgid, process_name(tgid), paused, interval,
                       human_bandwidth(t.last_task_ratelimit));
        }
        if (s.lost_events) fmt::print("  ({} events lost: ring buffer full)\n", s.lost_events);
        std::fflush(stdout);
    }
    collector->stop();
    return 0;
}
