// Writing the harness's results: per scenario a CSV of the writes, a CSV of the dirty trajectories
// and gnuplot PNGs (analogues of CAWL Fig. 4-9); overall summary.csv and summary.md.
#pragma once

#include "experiment.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace iosig::cachesim::validate {

struct ReportContext {
    std::string command;   // the command line that produced it
    std::string machine;   // uname, CPUs, memory
    std::string limits;    // the vm.dirty_* values used
    std::string collector; // ebpf / procfs (+ reason)
    std::vector<std::string> notes;
};

// Writes OUT/<scenario>/{writes.csv,trajectory.csv,plot.gp,*.png}. Returns false when a file could
// not be written; plotting failures (no gnuplot) only add a note.
bool write_scenario(const std::filesystem::path& out, const ScenarioResult& result,
                    std::vector<std::string>& notes);

// The chunk-size sweeps (Fig. 4b/5b): mean measured, model and baseline cost per chunk size.
bool write_sweeps(const std::filesystem::path& out, const std::vector<ScenarioResult>& results,
                  std::vector<std::string>& notes);

bool write_summary(const std::filesystem::path& out, const std::vector<ScenarioResult>& results,
                   const ReportContext& context);

} // namespace iosig::cachesim::validate
