// iosig-cawl-validate: runs the CAWL scenarios for real on a mount, records each write's cost and
// the kernel's dirty/throttle trajectory (eBPF), runs the model and the size/bandwidth baseline on
// the same workloads, and writes CSV, PNG plots and a summary with the mean relative errors.
//
// vm.dirty_bytes / vm.dirty_background_bytes are lowered for the run (so that background flushing
// and throttling happen with a few hundred MiB) and always restored (see dirty_limits.hpp).
#include "calibrate.hpp"
#include "experiment.hpp"
#include "iosig/cachesim/dirty_limits.hpp"
#include "iosig/node_yaml.hpp"
#include "iosig/units.hpp"
#include "node_for_dir.hpp"
#include "report.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fmt/format.h>
#include <fstream>

namespace {

using namespace iosig;
using namespace iosig::cachesim;
using namespace iosig::cachesim::validate;

enum Exit { exit_ok = 0, exit_failure = 1, exit_bad_input = 2 };

void log_line(const std::string& text) {
    std::fprintf(stderr, "%s\n", text.c_str());
    std::fflush(stderr);
}

std::optional<std::uint64_t> size_option(const std::string& text, const char* name) {
    const auto size = parse_size(text);
    if (!size) {
        log_line(fmt::format("iosig-cawl-validate: {} `{}`: {}", name, text, size.error.message));
        return std::nullopt;
    }
    return size.value;
}

std::string join_args(int argc, char** argv) {
    std::string out;
    for (int i = 0; i < argc; ++i)
        out += (i ? " " : "") + std::string(argv[i]);
    return out;
}

// The device's cost curve for `method`, measured again now and stored in the node.
void remeasure_curve(Node& node, const Mount& mount, Method method, const CalibrationSetup& setup) {
    MeasuredParameters fresh;
    CostCurve curve;
    if (method == Method::direct) {
        measure_direct(setup, nullptr, &curve);
        fresh.direct_write_curve = curve;
    } else {
        ModelParameters with_device;
        const Device* device = node.find_device(mount.device);
        with_device.device_write_bw =
            device && device->performance.seq_write_bw > 0 ? device->performance.seq_write_bw : 1e9;
        measure_sync(setup, with_device, &curve);
        fresh.sync_write_curve = curve;
    }
    store_parameters(node, mount.device, fresh);
    log_line(fmt::format("{} cost curve measured again ({} sizes)", to_string(method),
                         curve.points().size()));
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"Validate the CAWL write-cost model against real runs on a mount"};
    std::string dir_text, out_text = "cawl-validate", scenario_list = "all", write_config;
    std::vector<std::string> configs;
    std::string dirty_text = "128M", background_text = "64M";
    std::string custom_workload, custom_method = "buffered";
    int runs = 5;
    double scale = 1.0;
    bool do_calibrate = false, restore_only = false, no_bpf = false, list = false, ticks = false;
    bool recalibrate_curves = false;
    app.add_option("--dir", dir_text,
                   "Directory on the mount to test (test files are created there)");
    app.add_option("--config", configs, "Node YAML with the model's parameters (repeat to layer)");
    app.add_flag("--calibrate", do_calibrate,
                 "Measure the parameters first (regression over sizes)");
    app.add_flag("--recalibrate-curves", recalibrate_curves,
                 "Re-measure the direct or sync cost curve just before each direct and sync "
                 "scenario (tells the model's error from the disk's drift)");
    app.add_option("--write-config", write_config,
                   "Where to write the node YAML with measured parameters")
        ->capture_default_str();
    app.add_option("--out", out_text, "Output directory (CSV, PNG, summary.md)")
        ->capture_default_str();
    app.add_option("--scenarios", scenario_list,
                   "Comma-separated scenario names or groups, all, or none (only --workload or "
                   "the calibration)")
        ->capture_default_str();
    app.add_option("--workload", custom_workload,
                   "Also run this workload CSV (offset,size,delay_s)");
    app.add_option("--method", custom_method, "Method of --workload")
        ->capture_default_str()
        ->check(CLI::IsMember({"direct", "sync", "buffered", "stdio"}));
    app.add_option("--runs", runs, "Measured runs per scenario (after one warm-up)")
        ->capture_default_str()
        ->check(CLI::Range(1, 50));
    app.add_option("--scale", scale, "Multiply the scenarios' data volumes")
        ->capture_default_str()
        ->check(CLI::Range(0.01, 16.0));
    app.add_option("--dirty-bytes", dirty_text, "vm.dirty_bytes during the runs")
        ->capture_default_str();
    app.add_option("--dirty-background-bytes", background_text,
                   "vm.dirty_background_bytes during the runs")
        ->capture_default_str();
    app.add_flag("--no-bpf", no_bpf, "Use the /proc/vmstat fallback instead of eBPF");
    app.add_flag("--ticks", ticks,
                 "Fit synchronous writes as a staircase of completion ticks when detected");
    app.add_flag("--list", list, "List the scenarios and exit");
    app.add_flag("--restore", restore_only, "Only restore vm.dirty_* left lowered by a killed run");
    CLI11_PARSE(app, argc, argv);

    if (std::string what; recover_saved_dirty_settings(&what)) log_line(what);
    if (restore_only) return exit_ok;
    std::vector<Scenario> scenarios;
    try {
        scenarios = select_scenarios(paper_scenarios(scale), scenario_list);
    } catch (const std::invalid_argument& e) {
        log_line(fmt::format("iosig-cawl-validate: {}", e.what()));
        return exit_bad_input;
    }
    if (list) {
        for (const Scenario& s : paper_scenarios(scale))
            fmt::print("{:<20} {:<9} {:>6} writes  {}\n", s.name, to_string(s.method),
                       s.workload.size(), s.title);
        return exit_ok;
    }
    if (dir_text.empty()) {
        log_line("iosig-cawl-validate: --dir is required");
        return exit_bad_input;
    }
    if (!custom_workload.empty()) {
        const WorkloadResult w = load_workload(custom_workload);
        if (!w.ok()) {
            log_line(fmt::format("iosig-cawl-validate: {}", w.error));
            return exit_bad_input;
        }
        scenarios.push_back({"custom", "custom",
                             fmt::format("{} ({})", custom_workload, custom_method),
                             *parse_method(custom_method), w.writes, 0});
    }
    const auto dirty_bytes = size_option(dirty_text, "--dirty-bytes");
    const auto background_bytes = size_option(background_text, "--dirty-background-bytes");
    if (!dirty_bytes || !background_bytes) return exit_bad_input;
    const std::filesystem::path dir = dir_text, out = out_text;
    std::filesystem::create_directories(out);
    if (write_config.empty()) write_config = (out / "node.yaml").string();

    std::string error;
    const auto original = read_vm_dirty_settings(&error);
    if (!original) {
        log_line("iosig-cawl-validate: " + error);
        return exit_failure;
    }
    const auto before = read_procfs_state();
    std::optional<Node> node;
    if (!configs.empty()) {
        const NodeLoadResult loaded = load_node_files({configs.begin(), configs.end()});
        for (const auto& d : loaded.diagnostics)
            log_line(d.format());
        if (!loaded.ok()) return exit_bad_input;
        node = *loaded.node;
    } else {
        node = node_for_directory(dir, *original, &error);
        if (!node) {
            log_line("iosig-cawl-validate: " + error);
            return exit_bad_input;
        }
        if (before && before->global && original->dirty_ratio > 0 && !original->dirty_bytes) {
            node->system.dirtyable_memory = static_cast<std::uint64_t>(
                before->global->dirty_thresh / (original->dirty_ratio / 100.0));
            node->provenance["system.dirtyable_memory"] = Provenance::derived;
        }
    }
    const Mount* mount = mount_for_path(*node, std::filesystem::absolute(dir).string());
    if (!mount) {
        log_line(
            fmt::format("iosig-cawl-validate: no mount of the node contains {}", dir.string()));
        return exit_bad_input;
    }
    const std::string mount_path = mount->path;

    CollectorOptions collector_options;
    collector_options.allow_bpf = !no_bpf;
    collector_options.poll_interval = 0.01;
    collector_options.notice = [](std::string_view text) { log_line(std::string(text)); };
    auto collector = DirtyCollector::open(collector_options);
    collector->start();

    auto limits = DirtyLimitOverride::apply(*dirty_bytes, *background_bytes, &error);
    if (!limits) {
        log_line("iosig-cawl-validate: " + error);
        return exit_failure;
    }
    log_line(fmt::format(
        "vm.dirty_bytes {} and vm.dirty_background_bytes {} for the run (restored afterwards)",
        human_size(static_cast<double>(*dirty_bytes)),
        human_size(static_cast<double>(*background_bytes))));
    int status = exit_ok;
    std::vector<ScenarioResult> results;
    ReportContext context;
    try {
        if (do_calibrate) {
            log_line(fmt::format("calibrating on {}", dir.string()));
            CalibrationSetup setup{dir, 7, collector.get(), log_line, ticks};
            const Calibration c = calibrate(setup);
            Device* device = nullptr;
            for (Device& d : node->devices)
                if (d.name == mount->device) device = &d;
            store_parameters(*node, device ? device->name : mount->device, c.measured);
            context.notes.insert(context.notes.end(), c.notes.begin(), c.notes.end());
            context.notes.push_back(fmt::format(
                "per-fwrite cost measured {:.3g} s (no schema key; not used)", c.stdio_call_base));
            std::ofstream yaml(write_config, std::ios::trunc);
            yaml << to_yaml(*node);
            if (!yaml.flush()) throw std::runtime_error("cannot write " + write_config);
            log_line("measured parameters written to " + write_config);
            mount = mount_for_path(*node, mount_path);
        }
        ExperimentSetup setup{dir, runs, collector.get(), &*node, mount, log_line};
        for (const Scenario& s : scenarios) {
            if (recalibrate_curves && (s.method == Method::direct || s.method == Method::sync))
                remeasure_curve(*node, *mount, s.method, {dir, 7, collector.get(), {}, ticks});
            log_line(
                fmt::format("scenario {}: {} ({} writes)", s.name, s.title, s.workload.size()));
            ScenarioResult r = run_scenario(setup, s);
            if (!r.error.empty()) {
                log_line("  failed: " + r.error);
                status = exit_failure;
            } else {
                log_line(fmt::format(
                    "  model MRE {:.1f} %, baseline MRE {:.1f} %, trajectory error {}",
                    r.model_mre * 100, r.baseline_mre * 100,
                    r.trajectory_error >= 0 ? fmt::format("{:.1f} %", r.trajectory_error * 100)
                                            : "-"));
                write_scenario(out, r, context.notes);
            }
            results.push_back(std::move(r));
        }
    } catch (const std::exception& e) {
        log_line(fmt::format("iosig-cawl-validate: {}", e.what()));
        status = exit_failure;
    }
    if (!limits->restore(&error)) {
        log_line("iosig-cawl-validate: restoring vm.dirty_* failed: " + error);
        status = exit_failure;
    }
    collector->stop();
    context.command = join_args(argc, argv);
    context.machine = describe_machine();
    context.limits =
        fmt::format("dirty_bytes {}, dirty_background_bytes {} (restored to {} / {} afterwards)",
                    *dirty_bytes, *background_bytes,
                    original->dirty_bytes ? fmt::format("{} B", original->dirty_bytes)
                                          : fmt::format("ratio {} %", original->dirty_ratio),
                    original->dirty_background_bytes
                        ? fmt::format("{} B", original->dirty_background_bytes)
                        : fmt::format("ratio {} %", original->dirty_background_ratio));
    context.collector =
        collector->source() == StateSource::ebpf
            ? std::string("eBPF (writeback tracepoints)")
            : fmt::format("/proc/vmstat polling ({})", collector->fallback_reason());
    write_sweeps(out, results, context.notes);
    write_summary(out, results, context);
    log_line(fmt::format("summary: {}", (out / "summary.md").string()));
    return status;
}
