// What a job did, per file, built from the per-process reports the shim writes (JSON lines) and the
// job's journal; rendered as tables, JSON, and signature suggestions. Schema: docs/report.md.
#pragma once

#include "iosig/signature.hpp"
#include "job_journal.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace iosig::preload {

struct FileSummary {
    std::string path;   // where the program sees it (after renames)
    std::string staged; // where its data went, if redirected
    std::string mount;
    std::string rule, rule_where, signature, source, placement;
    std::string finalized; // finalize's outcome from the journal
    bool redirected = false, created = false, deleted = false, relocated = false;
    bool open_at_exit = false, several_writers = false;
    std::map<std::string, std::uint64_t> ops, bytes;  // per call family
    std::map<std::uint64_t, std::uint64_t> histogram; // lower bound of [2^k, 2^(k+1)) -> calls
    std::uint64_t sequential = 0, nonsequential = 0, errors = 0;
    std::uint64_t write_ns = 0, fsyncs = 0, fsync_ns = 0, flushes = 0, flush_ns = 0;
    std::uint64_t max_extent = 0, final_size = 0;
    std::int64_t open_ns = 0, close_ns = 0;
    std::vector<long> pids;
    bool described_by_creator = false; // path/placement come from the open that created the file

    std::uint64_t total_ops() const;
    std::uint64_t total_bytes() const;
    std::uint64_t size() const; // best estimate of the file's final size
    double sequential_fraction() const;
};

struct JobReport {
    std::string job;
    std::vector<nlohmann::json> processes;
    std::vector<FileSummary> files; // in first-open order
};

// Reads a report: JSON lines (one object per process) or a merged report (with "processes").
std::vector<nlohmann::json> read_process_reports(const std::filesystem::path& file);

// Merges per-process entries of the same file (keyed by staged path, else path) and adds what the
// journal knows (original path of inherited descriptors, renames, finalize outcome).
JobReport build_report(const std::vector<nlohmann::json>& processes, const JobJournal* journal);

// A merged report (written by `iosig run`) also records finalize's outcome per file; adds those to
// `report`'s files that have none (a report read without its journal). No-op for JSON lines.
void add_recorded_outcomes(JobReport& report, const std::filesystem::path& file);

nlohmann::json to_json(const JobReport& report);
std::string render_table(const JobReport& report);

// --suggest: a signature inferred from what was observed, per file or per group of similar files.
struct Suggestion {
    std::string match; // rule pattern: the path, or dir/*.ext for a group
    Signature signature;
    std::string rationale; // what it is based on, one line
    std::vector<std::string> files;
};
std::vector<Suggestion> suggest(const JobReport& report);
Signature infer_signature(const FileSummary& file, std::string* rationale = nullptr);
std::string render_suggestions(const std::vector<Suggestion>& suggestions);
nlohmann::json to_json(const std::vector<Suggestion>& suggestions);

} // namespace iosig::preload
