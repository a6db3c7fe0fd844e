#include "report.hpp"

#include "iosig/units.hpp"

#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <map>

namespace iosig::cachesim::validate {
namespace {

bool write_file(const std::filesystem::path& file, const std::string& text) {
    std::ofstream out(file, std::ios::trunc);
    out << text;
    return static_cast<bool>(out.flush());
}

bool run_gnuplot(const std::filesystem::path& dir, std::vector<std::string>& notes) {
    const std::string command =
        fmt::format("cd '{}' && gnuplot plot.gp > gnuplot.log 2>&1", dir.string());
    if (std::system(command.c_str()) != 0) {
        notes.push_back(fmt::format("gnuplot failed for {} (see gnuplot.log); CSVs are complete",
                                    dir.string()));
        return false;
    }
    return true;
}

bool cached_method(Method m) {
    return m == Method::buffered || m == Method::stdio;
}

} // namespace

bool write_scenario(const std::filesystem::path& out, const ScenarioResult& r,
                    std::vector<std::string>& notes) {
    const auto dir = out / r.scenario.name;
    std::filesystem::create_directories(dir);
    const double mib = 1024.0 * 1024.0;

    std::string writes = "index,offset,size,delay_s,measured_median_s";
    for (std::size_t k = 0; k < r.runs.size(); ++k)
        writes += fmt::format(",run{}_s", k + 1);
    writes +=
        ",start_s,model_s,model_typical_s,baseline_s,model_pause_s,model_dirty_mib,model_state\n";
    for (std::size_t i = 0; i < r.measured.size(); ++i) {
        const WriteRequest& w = r.scenario.workload[i];
        const PredictedWrite& p = r.model.writes[i];
        writes += fmt::format("{},{},{},{},{:.9g}", i, w.offset, w.size, w.delay, r.measured[i]);
        for (const MeasuredRun& run : r.runs)
            writes += fmt::format(",{:.9g}", run.timings.cost(i));
        writes += fmt::format(",{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.4f},{}\n",
                              r.runs.front().timings.start[i], p.cost, p.typical, p.baseline,
                              p.pause, p.dirty_after / mib, to_string(p.state));
    }
    if (!write_file(dir / "writes.csv", writes)) return false;

    // Trajectories: the kernel's of each run and the model's, as (time, MiB) blocks for gnuplot.
    std::string trajectory = "# series,time_s,dirty_mib (series 0 = model, k = measured run k)\n";
    for (const DirtyPoint& p : r.model.trajectory)
        trajectory += fmt::format("0,{:.6f},{:.4f}\n", p.time, p.dirty / mib);
    for (std::size_t k = 0; k < r.runs.size(); ++k) {
        trajectory += "\n\n";
        for (const DirtyPoint& p : r.runs[k].trajectory)
            trajectory += fmt::format("{},{:.6f},{:.4f}\n", k + 1, p.time, p.dirty / mib);
    }
    if (!write_file(dir / "trajectory.csv", trajectory)) return false;

    const bool cached = cached_method(r.scenario.method) && !r.model.trajectory.empty();
    std::string gp = fmt::format("set datafile separator ','\n"
                                 "set terminal pngcairo size 1100,{} font ',10'\n"
                                 "set output 'cost.png'\n"
                                 "set key outside right top\n"
                                 "set grid\n",
                                 cached ? 900 : 500);
    if (cached) gp += "set multiplot layout 2,1\n";
    gp += fmt::format(
        "set title '{} - cost per write (model MRE {:.1f} %, baseline MRE {:.1f} %)' noenhanced\n"
        "set xlabel 'write'\nset ylabel 'cost (ms)'\nset logscale y\n"
        "plot 'writes.csv' every ::1 using 1:($5*1e3) with points pt 7 ps 0.4 lc rgb '#444444' "
        "title 'measured (median of {} runs)', \\\n"
        "     '' every ::1 using 1:(${}*1e3) with lines lw 2 lc rgb '#d62728' title 'CAWL model "
        "(typical run)', \\\n"
        "     '' every ::1 using 1:(${}*1e3) with lines lw 1.5 dt 4 lc rgb '#ff7f0e' "
        "title 'CAWL model (mean)', \\\n"
        "     '' every ::1 using 1:(${}*1e3) with lines lw 2 dt 2 lc rgb '#1f77b4' title 'baseline "
        "(size/bandwidth)'\n",
        r.scenario.title, r.model_mre * 100, r.baseline_mre * 100, r.runs.size(), 8 + r.runs.size(),
        7 + r.runs.size(), 9 + r.runs.size());
    if (cached) {
        gp += fmt::format(
            "unset logscale y\n"
            "set title 'dirty + write-back over time (model vs kernel, eBPF; trajectory error {})' "
            "noenhanced\n"
            "set xlabel 'time (s)'\nset ylabel 'MiB'\n"
            "plot for [k=1:{}] 'trajectory.csv' index k using 2:3 with lines lw 1 lc rgb '#999999' "
            "title (k==1 ? 'kernel (each run)' : ''), \\\n"
            "     'trajectory.csv' index 0 using 2:3 with lines lw 2 lc rgb '#d62728' title 'CAWL "
            "model'\n"
            "unset multiplot\n",
            r.trajectory_error >= 0 ? fmt::format("{:.1f} %", r.trajectory_error * 100)
                                    : std::string("n/a"),
            r.runs.size());
    }
    if (!write_file(dir / "plot.gp", gp)) return false;
    run_gnuplot(dir, notes);
    return true;
}

bool write_sweeps(const std::filesystem::path& out, const std::vector<ScenarioResult>& results,
                  std::vector<std::string>& notes) {
    std::map<std::string, std::string> tables;
    for (const ScenarioResult& r : results) {
        if (r.scenario.chunk <= 0 || !r.error.empty() || r.measured.empty()) continue;
        const double n = static_cast<double>(r.measured.size());
        tables[r.scenario.group] += fmt::format(
            "{},{:.9g},{:.9g},{:.9g},{:.4f},{:.4f}\n", r.scenario.chunk, r.measured_total / n,
            r.model.total_cost / n, r.model.total_baseline / n, r.model_mre, r.baseline_mre);
    }
    for (const auto& [group, rows] : tables) {
        const auto dir = out / fmt::format("sweep-{}", group);
        std::filesystem::create_directories(dir);
        if (!write_file(dir / "sweep.csv", "chunk_bytes,measured_mean_s,model_mean_s,baseline_mean_"
                                           "s,model_mre,baseline_mre\n" +
                                               rows))
            return false;
        const std::string gp = fmt::format(
            "set datafile separator ','\nset terminal pngcairo size 900,550 font ',10'\nset output "
            "'sweep.png'\n"
            "set title 'Mean cost per write vs chunk size ({})' noenhanced\nset logscale xy\nset "
            "grid\n"
            "set xlabel 'chunk size (bytes)'\nset ylabel 'cost per write (ms)'\nset key top left\n"
            "plot 'sweep.csv' every ::1 using 1:($2*1e3) with linespoints pt 7 lc rgb '#444444' "
            "title 'measured', \\\n"
            "     '' every ::1 using 1:($3*1e3) with linespoints lw 2 lc rgb '#d62728' title 'CAWL "
            "model', \\\n"
            "     '' every ::1 using 1:($4*1e3) with linespoints lw 2 dt 2 lc rgb '#1f77b4' title "
            "'baseline'\n",
            group);
        if (!write_file(dir / "plot.gp", gp)) return false;
        run_gnuplot(dir, notes);
    }
    return true;
}

bool write_summary(const std::filesystem::path& out, const std::vector<ScenarioResult>& results,
                   const ReportContext& context) {
    std::string csv =
        "scenario,group,method,writes,measured_total_s,model_mre,model_mean_mre,baseline_mre,"
        "improvement,model_total_error,baseline_total_error,trajectory_error,paused_events_per_run,"
        "error\n";
    std::string md = fmt::format(
        "# CAWL validation\n\ncommand: `{}`\n\nmachine: {}\n\nvm.dirty_* during the runs: {}\n\n"
        "kernel data: {}\n\n",
        context.command, context.machine, context.limits, context.collector);
    md += "| scenario | method | writes | measured total | model MRE | MRE of the mean cost | "
          "baseline MRE | baseline/model | model total err | trajectory err | paused events/run "
          "|\n|---|---|---|---|---|---|---|---|---|---|---|\n";
    std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> groups;
    for (const ScenarioResult& r : results) {
        double paused = 0;
        for (const MeasuredRun& run : r.runs)
            paused += static_cast<double>(run.paused_events);
        if (!r.runs.empty()) paused /= static_cast<double>(r.runs.size());
        const double improvement = r.model_mre > 0 ? r.baseline_mre / r.model_mre : 0;
        const std::string trajectory =
            r.trajectory_error >= 0 ? fmt::format("{:.4f}", r.trajectory_error) : std::string();
        csv += fmt::format(
            "{},{},{},{},{:.6f},{:.4f},{:.4f},{:.4f},{:.2f},{:.4f},{:.4f},{},{:.1f},{}\n",
            r.scenario.name, r.scenario.group, to_string(r.scenario.method),
            r.scenario.workload.size(), r.measured_total, r.model_mre, r.model_mean_mre,
            r.baseline_mre, improvement, r.model_total_error, r.baseline_total_error, trajectory,
            paused, r.error);
        if (!r.error.empty()) {
            md += fmt::format("| {} | {} | {} | failed: {} ||||||||\n", r.scenario.name,
                              to_string(r.scenario.method), r.scenario.workload.size(), r.error);
            continue;
        }
        groups[r.scenario.group].first.push_back(r.model_mre);
        groups[r.scenario.group].second.push_back(r.baseline_mre);
        md += fmt::format(
            "| {} | {} | {} | {} | {:.1f} % | {:.1f} % | {:.1f} % | {:.1f}x | {:.1f} % | {} | "
            "{:.1f} "
            "|\n",
            r.scenario.name, to_string(r.scenario.method), r.scenario.workload.size(),
            human_duration(r.measured_total), r.model_mre * 100, r.model_mean_mre * 100,
            r.baseline_mre * 100, improvement, r.model_total_error * 100,
            r.trajectory_error >= 0 ? fmt::format("{:.1f} %", r.trajectory_error * 100) : "-",
            paused);
    }
    md += "\nMRE = mean over the writes of |prediction - measured| / measured, measured = "
          "per-write median of the runs after one discarded warm-up run, prediction = the model's "
          "cost of the write in a typical run (its paced throttle pause as the median number of "
          "whole kernel sleeps); the MRE of the model's mean cost (the pause spread evenly) is "
          "shown beside it. Measured total = median over the runs of each run's total; model "
          "total err compares the model's mean costs with it. Trajectory error = mean |model - "
          "kernel| / mean "
          "kernel dirty + "
          "write-back bytes at the kernel's global_dirty_state samples during the writes (median "
          "over runs).\n\n";
    md += "| group | scenarios | mean model MRE | mean baseline MRE |\n|---|---|---|---|\n";
    for (const auto& [group, errors] : groups) {
        double m = 0, b = 0;
        for (double e : errors.first)
            m += e;
        for (double e : errors.second)
            b += e;
        const double k = static_cast<double>(errors.first.size());
        md += fmt::format("| {} | {} | {:.1f} % | {:.1f} % |\n", group, errors.first.size(),
                          m / k * 100, b / k * 100);
    }
    if (!context.notes.empty()) {
        md += "\nNotes:\n\n";
        for (const std::string& n : context.notes)
            md += "- " + n + "\n";
    }
    return write_file(out / "summary.csv", csv) && write_file(out / "summary.md", md);
}

} // namespace iosig::cachesim::validate
