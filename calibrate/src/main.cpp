// iosig-calibrate: discover the mounts of this node, measure them and the kernel/libc parameters,
// and write the node YAML the core loads. Usage and method: docs/calibrate.md.
#include "iosig/node_yaml.hpp"
#include "node_writer.hpp"
#include "plots.hpp"
#include "run.hpp"
#include "summary.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <unistd.h>

namespace {

using namespace iosig::calibrate;

constexpr int exit_ok = 0, exit_failure = 1, exit_bad_input = 2, exit_interrupted = 130;

struct Cli {
    bool quick = false;
    bool full = false;
    std::vector<std::string> mounts, excludes;
    std::string output, plots, overrides;
    bool json = false;
    double time_budget = 0;
};

bool write_atomically(const std::string& path, const std::string& text, std::string& error) {
    const std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::trunc);
        out << text;
        out.flush();
        if (!out) {
            error = fmt::format("cannot write {}", tmp);
            return false;
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) error = fmt::format("cannot rename {} to {}: {}", tmp, path, ec.message());
    return !ec;
}

int run(const Cli& cli) {
    // Bad overrides are bad input: find out before spending a minute measuring.
    if (!cli.overrides.empty()) {
        NodeDocument probe;
        probe.root["devices"] = YAML::Node(YAML::NodeType::Map);
        probe.root["mounts"] = YAML::Node(YAML::NodeType::Sequence);
        apply_overrides(probe, cli.overrides);
    }
    Progress progress(stderr, isatty(STDERR_FILENO) != 0);
    RunOptions options;
    options.quick = !cli.full;
    options.time_budget = cli.time_budget;
    options.discovery.include = cli.mounts;
    options.discovery.exclude = cli.excludes;
    Calibration calibration = run_calibration(options, progress);
    int status = calibration.errors.empty() ? exit_ok : exit_failure;
    if (calibration.discovery.mounts.empty()) {
        progress.note("no writable mount to calibrate");
        status = exit_failure;
    }

    NodeDocument document = build_node_document(calibration);
    std::vector<std::string> warnings;
    if (!cli.overrides.empty()) warnings = apply_overrides(document, cli.overrides);
    const std::string yaml = emit_yaml(document);

    // The core's loader is the judge of what we write.
    const iosig::NodeLoadResult loaded =
        iosig::load_node_text(yaml, cli.output.empty() ? "<iosig-calibrate output>" : cli.output);
    for (const iosig::ConfigDiagnostic& d : loaded.diagnostics) {
        const std::string text = d.format();
        if (d.severity == iosig::ConfigDiagnostic::Severity::warning)
            warnings.push_back(text);
        else
            calibration.errors.push_back("core loader: " + text);
    }
    if (!loaded.ok()) {
        progress.note("the core loader rejects the node YAML written (a bug in iosig-calibrate or "
                      "in the loader):");
        for (const auto& d : loaded.diagnostics)
            progress.note("  " + d.format());
        status = exit_failure;
    }
    for (const std::string& w : warnings)
        progress.note("warning: " + w);

    if (!cli.output.empty()) {
        std::string error;
        if (!write_atomically(cli.output, yaml, error)) {
            progress.note(error);
            calibration.errors.push_back(error);
            status = exit_failure;
        } else {
            progress.note(fmt::format("wrote {} ({:.0f} s)", cli.output, calibration.seconds));
        }
    } else if (!cli.json) {
        std::cout << yaml << std::flush;
    }

    std::vector<std::string> plot_files;
    if (!cli.plots.empty()) {
        const PlotResult plots = write_plots(calibration, cli.plots);
        plot_files = plots.files;
        for (const std::string& e : plots.errors) {
            progress.note("plots: " + e);
            calibration.errors.push_back("plots: " + e);
            status = exit_failure;
        }
    }
    if (cli.json)
        std::cout << summarize(calibration, yaml, plot_files, warnings).dump(2) << std::endl;
    return status;
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"iosig-calibrate: find the mounts of this node, measure them and the kernel/libc "
                 "parameters,\n"
                 "and write the node YAML that iosig loads (docs/calibrate.md)."};
    app.name("iosig-calibrate");
    Cli cli;
    auto* quick = app.add_flag("--quick", cli.quick,
                               "short measurements (default; about a minute on 5 mounts)");
    auto* full = app.add_flag("--full", cli.full,
                              "longer, finer measurements (chunk sweep every 2 KiB up to 64 KiB)");
    quick->excludes(full);
    full->excludes(quick);
    app.add_option("--mount", cli.mounts,
                   "calibrate only this directory (repeatable; any directory, e.g. a scratch dir)")
        ->check(CLI::ExistingDirectory);
    app.add_option("--exclude", cli.excludes,
                   "leave out this mount and everything under it (repeatable)");
    app.add_option("-o,--output", cli.output,
                   "write the node YAML here (default: standard output unless --json)");
    app.add_flag("--json", cli.json,
                 "print a JSON summary of every measurement on standard output");
    app.add_option("--plots", cli.plots,
                   "write PNG plots (Eq. 3 fit, latency histogram) for each file system into DIR");
    app.add_option("--overrides", cli.overrides,
                   "merge site facts (MTTF, BER, labels, global, ...) from this node YAML fragment")
        ->check(CLI::ExistingFile);
    app.add_option("--time-budget", cli.time_budget,
                   "seconds for the whole run (default: 50 quick, 600 full)")
        ->check(CLI::Range(5.0, 86400.0));
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? exit_ok : exit_bad_input;
    }
    install_interrupt_handlers();
    try {
        return run(cli);
    } catch (const Interrupted&) {
        fmt::print(stderr,
                   "\niosig-calibrate: interrupted; scratch files removed, nothing written\n");
        return exit_interrupted;
    } catch (const OverridesError& e) {
        fmt::print(stderr, "iosig-calibrate: {}\n", e.what());
        return exit_bad_input;
    } catch (const std::exception& e) {
        fmt::print(stderr, "iosig-calibrate: {}\n", e.what());
        return exit_failure;
    }
}
