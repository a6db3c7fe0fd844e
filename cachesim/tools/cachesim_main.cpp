// iosig-cachesim: predicts the cost of each write of a workload on a mount with the CAWL model,
// beside the naive size / bandwidth baseline.
//
//   iosig-cachesim --config NODE.yaml --mount PATH --method direct|sync|buffered|stdio
//                  --workload FILE [--csv OUT] [--no-live]
#include "iosig/cachesim/collector.hpp"
#include "iosig/cachesim/estimator.hpp"
#include "iosig/node_yaml.hpp"
#include "prediction_output.hpp"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <fmt/format.h>
#include <fstream>
#include <thread>

namespace {

enum Exit { ok = 0, failure = 1, bad_input = 2 };

// The kernel's state now: a few events/samples after a trigger.
iosig::cachesim::KernelDirtyState live_state() {
    auto collector = iosig::cachesim::DirtyCollector::open();
    collector->trigger();
    for (int i = 0; i < 3; ++i)
        collector->poll(20);
    return collector->snapshot();
}

} // namespace

int main(int argc, char** argv) {
    using namespace iosig::cachesim;
    CLI::App app{"Predict the cost of each write of a workload with the CAWL page-cache model"};
    std::vector<std::string> configs;
    std::string mount_path, method_text, workload_path, csv_path;
    bool no_live = false, quiet = false;
    std::size_t rows = 40;
    app.add_option("--config", configs, "Node YAML (repeat to layer files)")->required();
    app.add_option("--mount", mount_path, "Mount point (or a path below it) the workload writes to")
        ->required();
    app.add_option("--method", method_text, "direct | sync | buffered | stdio")
        ->required()
        ->check(CLI::IsMember({"direct", "sync", "buffered", "stdio"}));
    app.add_option("--workload", workload_path, "CSV with header offset,size,delay_s")->required();
    app.add_option("--csv", csv_path, "Write the per-write prediction as CSV to this file");
    app.add_flag(
        "--no-live", no_live,
        "Do not start from the kernel's current dirty state and thresholds (use the node's)");
    app.add_option("--rows", rows, "Rows of the table to print")->capture_default_str();
    app.add_flag("--quiet", quiet, "Print only the totals");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        const int status = app.exit(error);
        return status == 0 ? ok : bad_input;
    }

    std::vector<std::filesystem::path> files(configs.begin(), configs.end());
    const iosig::NodeLoadResult loaded = iosig::load_node_files(files);
    for (const auto& d : loaded.diagnostics)
        std::fprintf(stderr, "%s\n", d.format().c_str());
    if (!loaded.ok()) return bad_input;
    const iosig::Node& node = *loaded.node;
    const iosig::Mount* mount = mount_for_path(node, mount_path);
    if (!mount) {
        fmt::print(stderr, "iosig-cachesim: no mount of {} contains {}\n", configs.back(),
                   mount_path);
        return bad_input;
    }
    const Method method = *parse_method(method_text);
    const WorkloadResult workload = load_workload(workload_path);
    if (!workload.ok()) {
        fmt::print(stderr, "iosig-cachesim: {}\n", workload.error);
        return bad_input;
    }

    std::optional<KernelDirtyState> live;
    if (!no_live) live = live_state();
    const ResolvedParameters resolved =
        resolve_parameters(node, *mount, method, live ? &*live : nullptr);
    if (!resolved.ok()) {
        fmt::print(stderr, "iosig-cachesim: {} lacks parameters the {} model needs:\n",
                   configs.back(), method_text);
        for (const std::string& key : resolved.missing)
            fmt::print(stderr, "  {}\n", key);
        fmt::print(stderr,
                   "measure them with iosig-calibrate or iosig-cawl-validate --calibrate\n");
        return bad_input;
    }
    const ModelParameters& p = *resolved.parameters;
    if (const std::string error = validate_for_method(p, method, workload.writes); !error.empty()) {
        fmt::print(stderr, "iosig-cachesim: {}:{}\n", workload_path,
                   error.substr(std::string("line ").size()));
        return bad_input;
    }
    if (!quiet)
        for (const std::string& note : resolved.notes)
            fmt::print("note: {}\n", note);

    EstimatorOptions options;
    if (live) options.initial = initial_state_from(*live);
    const Prediction prediction = predict(p, method, workload.writes, options);

    if (!csv_path.empty()) {
        std::ofstream out(csv_path, std::ios::trunc);
        out << prediction_csv(prediction, workload.writes, p.page_size);
        if (!out.flush()) {
            fmt::print(stderr, "iosig-cachesim: cannot write {}\n", csv_path);
            return failure;
        }
    }
    print_prediction(stdout, prediction, workload.writes, p.page_size, quiet ? 0 : rows);
    return ok;
}
