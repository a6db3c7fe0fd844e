// Everything one run of iosig-calibrate learned: the discovery, the per-file-system measurements
// and the node-wide (CAWL) parameters. Turned into the node YAML (node_writer.hpp), the JSON
// summary (summary.hpp) and plots (plots.hpp).
#pragma once

#include "discovery.hpp"
#include "eq3_fit.hpp"
#include "measure.hpp"
#include "system_params.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace iosig::calibrate {

struct MountMeasurements {
    std::string directory; // where the scratch file lived
    IoMethod method;
    std::uint64_t file_size = 0;
    Throughput seq_write, seq_read;
    Latencies read_latency, write_latency;            // QD1, 4 KiB, random offsets
    std::optional<Latencies> sequential_read_latency; // rotational media: for the seek latency
    double seek_latency = 0;
    Iops random_read, random_write; // 4 KiB at queue depth 32
    std::optional<MixedIops> mixed; // 4 KiB reads and writes at once (io_uring only)
    std::vector<SweepPoint> sweep;
    std::vector<std::uint64_t> sweep_skipped; // chunks left out to stay within the time budget
    std::optional<Eq3Fit> fit;
    double seconds = 0;
    double budget = 0;
    std::vector<std::string> notes;
    std::string error; // set when the measurement failed part-way
};

struct Calibration {
    Discovery discovery;
    SystemMeasurements system;
    std::map<std::string, MountMeasurements> by_group; // MountTarget::group -> measurements
    bool quick = true;
    double budget = 0;
    double seconds = 0;
    std::string hostname;
    std::vector<std::string> errors;
};

} // namespace iosig::calibrate
