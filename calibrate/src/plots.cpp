#include "plots.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace iosig::calibrate {
namespace fs = std::filesystem;
namespace {

std::string file_stem(const std::string& path) {
    std::string out;
    for (char c : path)
        out.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ? c
                                                                                          : '-');
    out.erase(0, out.find_first_not_of('-'));
    return out.empty() ? std::string("root") : out;
}

// Runs gnuplot on a script file; returns an error message or "".
std::string run_gnuplot(const std::string& gnuplot, const std::string& script) {
    pid_t pid = 0;
    std::vector<char*> argv = {const_cast<char*>(gnuplot.c_str()),
                               const_cast<char*>(script.c_str()), nullptr};
    if (const int rc = posix_spawnp(&pid, gnuplot.c_str(), nullptr, nullptr, argv.data(), environ);
        rc != 0)
        return fmt::format("cannot run {}: {} (install gnuplot-nox)", gnuplot, std::strerror(rc));
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return fmt::format("{} failed on {}", gnuplot, script);
    return {};
}

void write_sweep_data(const MountMeasurements& m, const std::string& points_file,
                      const std::string& model_file) {
    std::ofstream points(points_file);
    points << "# chunk_bytes measured_MiB_per_s\n";
    for (const SweepPoint& p : m.sweep)
        points << p.chunk << ' ' << p.bytes_per_second() / (1 << 20) << '\n';
    std::ofstream model(model_file);
    model << "# chunk_bytes eq3_MiB_per_s\n";
    if (!m.fit || m.sweep.empty()) return;
    const double lo = std::log2(static_cast<double>(m.sweep.front().chunk));
    const double hi = std::log2(static_cast<double>(m.sweep.back().chunk));
    // Every 512-byte multiple would be too many points; 400 log-spaced ones rounded to 512 B keep
    // the model's steps at non-multiples of the chunk visible.
    for (int i = 0; i <= 400; ++i) {
        auto ds = static_cast<std::uint64_t>(std::exp2(lo + (hi - lo) * i / 400.0));
        ds = std::max<std::uint64_t>(512, ds / 512 * 512);
        model << ds << ' '
              << static_cast<double>(ds) / eq3_seconds_per_io(m.fit->parameters, ds) / (1 << 20)
              << '\n';
    }
}

void write_histogram_data(const Latencies& l, const std::string& file) {
    std::ofstream out(file);
    out << "# bin_center_us count\n";
    if (l.samples.empty()) return;
    const double lo =
        std::log10(std::max(*std::min_element(l.samples.begin(), l.samples.end()), 1e-7));
    const double hi = std::log10(std::max(l.max, 1e-7)) + 1e-9;
    constexpr int bins = 40;
    std::vector<int> counts(bins, 0);
    for (double s : l.samples) {
        const double x = (std::log10(std::max(s, 1e-7)) - lo) / std::max(hi - lo, 1e-9);
        counts[std::clamp(static_cast<int>(x * bins), 0, bins - 1)]++;
    }
    for (int i = 0; i < bins; ++i)
        out << std::pow(10.0, lo + (hi - lo) * (i + 0.5) / bins) * 1e6 << ' ' << counts[i] << '\n';
}

} // namespace

PlotResult write_plots(const Calibration& c, const std::string& directory,
                       const std::string& gnuplot) {
    PlotResult r;
    std::error_code ec;
    fs::create_directories(directory, ec);
    if (ec) {
        r.errors.push_back(fmt::format("cannot create {}: {}", directory, ec.message()));
        return r;
    }
    for (const auto& [group, m] : c.by_group) {
        if (!m.error.empty() || m.sweep.empty()) continue;
        const std::string stem = (fs::path(directory) / file_stem(m.directory)).string();
        const std::string title = m.directory;

        write_sweep_data(m, stem + "-sweep.dat", stem + "-eq3.dat");
        {
            std::ofstream gp(stem + "-eq3.gp");
            gp << "set terminal pngcairo size 900,600\n"
               << fmt::format("set output '{}-eq3.png'\n", stem)
               << fmt::format("set title \"{}: synchronous writes vs chunk size\"\n", title)
               << "set logscale xy 2\nset xlabel 'chunk size (bytes)'\nset ylabel 'throughput "
                  "(MiB/s)'\n"
               << "set format x '%.0s%cB'\nset grid\nset key bottom right\n";
            if (m.fit)
                gp << fmt::format("set label 1 \"Eq. 3 fit: l = {:.3g} us, wbw = {:.4g} MiB/s, cs "
                                  "= {} B, median error {:.1f} %\" at graph 0.02,0.95\n",
                                  m.fit->parameters.latency * 1e6,
                                  m.fit->parameters.write_bw / (1 << 20), m.fit->parameters.chunk,
                                  m.fit->median_relative_error * 100);
            gp << fmt::format(
                "plot '{0}-sweep.dat' using 1:2 with points pt 7 ps 1.2 title 'measured', "
                "'{0}-eq3.dat' using 1:2 with lines lw 2 title 'Eq. 3 fitted'\n",
                stem);
        }
        if (auto e = run_gnuplot(gnuplot, stem + "-eq3.gp"); !e.empty())
            r.errors.push_back(e);
        else
            r.files.push_back(stem + "-eq3.png");

        write_histogram_data(m.read_latency, stem + "-lat-read.dat");
        write_histogram_data(m.write_latency, stem + "-lat-write.dat");
        {
            std::ofstream gp(stem + "-latency.gp");
            gp << "set terminal pngcairo size 900,600\n"
               << fmt::format("set output '{}-latency.png'\n", stem)
               << fmt::format("set title \"{}: QD1 4 KiB random IO latency\"\n", title)
               << "set logscale x 10\nset xlabel 'latency (us)'\nset ylabel 'IOs'\nset grid\n"
               << fmt::format("plot '{0}-lat-read.dat' using 1:2 with histeps lw 2 title 'read "
                              "(p50 {1:.1f} us, p99 {2:.1f} us)', "
                              "'{0}-lat-write.dat' using 1:2 with histeps lw 2 title 'write (p50 "
                              "{3:.1f} us, p99 {4:.1f} us)'\n",
                              stem, m.read_latency.p50 * 1e6, m.read_latency.p99 * 1e6,
                              m.write_latency.p50 * 1e6, m.write_latency.p99 * 1e6);
        }
        if (auto e = run_gnuplot(gnuplot, stem + "-latency.gp"); !e.empty())
            r.errors.push_back(e);
        else
            r.files.push_back(stem + "-latency.png");
    }
    return r;
}

} // namespace iosig::calibrate
