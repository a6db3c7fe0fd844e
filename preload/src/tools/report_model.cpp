#include "report_model.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace iosig::preload {
namespace {

using json = nlohmann::json;

// A member of an object, or null: operator[] on a const json with a missing key is undefined.
const json& member(const json& object, const char* key) {
    static const json null;
    if (!object.is_object()) return null;
    const auto it = object.find(key);
    return it == object.end() ? null : *it;
}

std::string text_of(const json& value) {
    return value.is_string() ? value.get<std::string>() : std::string();
}

std::uint64_t number_of(const json& object, const char* key) {
    const auto it = object.find(key);
    return it != object.end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : 0;
}

bool flag_of(const json& object, const char* key) {
    const auto it = object.find(key);
    return it != object.end() && it->is_boolean() && it->get<bool>();
}

void keep_first(std::string& field, const json& value) {
    if (field.empty()) field = text_of(value);
}

void merge_entry(FileSummary& summary, const json& entry, long pid) {
    // The entry of the open that created the file describes it; other opens only add counts.
    const bool creator = flag_of(entry, "created") && !flag_of(entry, "inherited");
    if (creator && !summary.described_by_creator) {
        summary.described_by_creator = true;
        summary.path = text_of(member(entry, "path"));
        summary.placement = text_of(member(entry, "placement"));
        summary.source = text_of(member(entry, "source"));
    }
    if (!flag_of(entry, "inherited")) {
        keep_first(summary.path, member(entry, "path"));
        keep_first(summary.placement, member(entry, "placement"));
    }
    keep_first(summary.staged, member(entry, "staged"));
    keep_first(summary.mount, member(entry, "mount"));
    keep_first(summary.rule, member(entry, "rule"));
    keep_first(summary.rule_where, member(entry, "rule_where"));
    keep_first(summary.signature, member(entry, "signature"));
    keep_first(summary.source, member(entry, "source"));
    if (const auto renamed = text_of(member(entry, "renamed_to")); !renamed.empty())
        summary.path = renamed;
    summary.redirected |= flag_of(entry, "redirected");
    summary.created |= flag_of(entry, "created");
    summary.deleted |= flag_of(entry, "deleted");
    summary.relocated |= flag_of(entry, "relocated");
    summary.open_at_exit |= flag_of(entry, "open_at_exit");
    summary.several_writers |= flag_of(entry, "several_writers");
    for (const char* key : {"ops", "bytes"}) {
        auto& target = std::string(key) == "ops" ? summary.ops : summary.bytes;
        if (const auto it = entry.find(key); it != entry.end() && it->is_object())
            for (const auto& [family, value] : it->items())
                if (value.is_number_unsigned()) target[family] += value.get<std::uint64_t>();
    }
    if (const auto it = entry.find("histogram"); it != entry.end() && it->is_object())
        for (const auto& [bucket, value] : it->items())
            if (value.is_number_unsigned() && !bucket.empty() &&
                bucket.find_first_not_of("0123456789") == std::string::npos)
                summary.histogram[std::stoull(bucket)] += value.get<std::uint64_t>();
    summary.sequential += number_of(entry, "sequential");
    summary.nonsequential += number_of(entry, "nonsequential");
    summary.errors += number_of(entry, "errors");
    summary.write_ns += number_of(entry, "write_ns");
    summary.fsyncs += number_of(entry, "fsyncs");
    summary.fsync_ns += number_of(entry, "fsync_ns");
    summary.flushes += number_of(entry, "flushes");
    summary.flush_ns += number_of(entry, "flush_ns");
    summary.max_extent = std::max(summary.max_extent, number_of(entry, "max_extent"));
    summary.final_size = std::max(summary.final_size, number_of(entry, "final_size"));
    const auto open_ns = static_cast<std::int64_t>(number_of(entry, "open_ns"));
    const auto close_ns = static_cast<std::int64_t>(number_of(entry, "close_ns"));
    if (open_ns != 0 && (summary.open_ns == 0 || open_ns < summary.open_ns))
        summary.open_ns = open_ns;
    summary.close_ns = std::max(summary.close_ns, close_ns);
    if (std::find(summary.pids.begin(), summary.pids.end(), pid) == summary.pids.end())
        summary.pids.push_back(pid);
}

} // namespace

std::uint64_t FileSummary::total_ops() const {
    std::uint64_t sum = 0;
    for (const auto& [_, v] : ops)
        sum += v;
    return sum;
}

std::uint64_t FileSummary::total_bytes() const {
    std::uint64_t sum = 0;
    for (const auto& [_, v] : bytes)
        sum += v;
    return sum;
}

std::uint64_t FileSummary::size() const {
    return std::max({final_size, max_extent});
}

double FileSummary::sequential_fraction() const {
    const auto all = sequential + nonsequential;
    return all == 0 ? 1.0 : static_cast<double>(sequential) / static_cast<double>(all);
}

std::vector<json> read_process_reports(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + file.string());
    std::ostringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    std::vector<json> processes;
    // A merged report is one JSON document with "processes"; the shim's output is JSON lines.
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && text[first] == '{') {
        try {
            const json document = json::parse(text);
            if (document.contains("processes")) {
                for (const auto& p : document["processes"])
                    processes.push_back(p);
                return processes;
            }
        } catch (const json::parse_error&) {
            // not one document: JSON lines
        }
    }
    std::istringstream lines(text);
    std::string line;
    int number = 0;
    while (std::getline(lines, line)) {
        ++number;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        try {
            processes.push_back(json::parse(line));
        } catch (const json::parse_error& e) {
            throw std::runtime_error(file.string() + ":" + std::to_string(number) +
                                     ": not a report line (" + e.what() + ")");
        }
    }
    return processes;
}

JobReport build_report(const std::vector<json>& processes, const JobJournal* journal) {
    JobReport report;
    report.processes = processes;
    std::map<std::string, std::size_t> index;
    for (const json& process : processes) {
        if (!process.is_object()) continue;
        if (report.job.empty()) report.job = text_of(member(process, "job"));
        const auto pid_value = member(process, "pid");
        const long pid = pid_value.is_number_integer() ? pid_value.get<long>() : 0;
        if (!member(process, "files").is_array()) continue;
        for (const json& entry : process["files"]) {
            if (!entry.is_object()) continue;
            const std::string staged = text_of(member(entry, "staged"));
            const std::string key = staged.empty() ? text_of(member(entry, "path")) : staged;
            auto [it, fresh] = index.emplace(key, report.files.size());
            if (fresh) report.files.emplace_back();
            merge_entry(report.files[it->second], entry, pid);
        }
    }
    if (journal != nullptr) {
        for (auto& file : report.files) {
            if (file.staged.empty()) continue;
            for (auto r = journal->redirections.rbegin(); r != journal->redirections.rend(); ++r) {
                if (r->staged != file.staged) continue;
                if (file.path.empty() || file.path == file.staged || file.source == "inherited") {
                    file.source = r->source;
                    file.placement = "redirected to " + r->mount;
                }
                file.path = r->current;
                if (file.rule.empty()) file.rule = r->rule;
                if (file.rule_where.empty()) file.rule_where = r->rule_where;
                if (file.signature.empty()) file.signature = r->signature;
                if (r->deleted) file.deleted = true;
                if (r->finalized) file.finalized = *r->finalized;
                break;
            }
        }
    }
    // First-open order; merge order (process order) breaks ties.
    std::vector<std::size_t> order(report.files.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return report.files[a].open_ns != report.files[b].open_ns
                   ? report.files[a].open_ns < report.files[b].open_ns
                   : a < b;
    });
    std::vector<FileSummary> sorted;
    for (const auto i : order)
        sorted.push_back(std::move(report.files[i]));
    report.files = std::move(sorted);
    return report;
}

void add_recorded_outcomes(JobReport& report, const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    const json document = json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!document.is_object() || !member(document, "files").is_array()) return;
    std::map<std::string, std::string> outcomes;
    for (const json& f : document["files"]) {
        const std::string staged = text_of(member(f, "staged"));
        const std::string outcome = text_of(member(f, "finalized"));
        if (!staged.empty() && !outcome.empty()) outcomes[staged] = outcome;
    }
    for (auto& f : report.files)
        if (f.finalized.empty())
            if (const auto it = outcomes.find(f.staged); it != outcomes.end())
                f.finalized = it->second;
}

json to_json(const JobReport& report) {
    json files = json::array();
    for (const auto& f : report.files) {
        json histogram = json::object();
        for (const auto& [bucket, count] : f.histogram)
            histogram[std::to_string(bucket)] = count;
        files.push_back({
            {"path", f.path},
            {"staged", f.staged},
            {"mount", f.mount},
            {"rule", f.rule},
            {"rule_where", f.rule_where},
            {"signature", f.signature},
            {"source", f.source},
            {"placement", f.placement},
            {"finalized", f.finalized},
            {"redirected", f.redirected},
            {"created", f.created},
            {"deleted", f.deleted},
            {"relocated", f.relocated},
            {"open_at_exit", f.open_at_exit},
            {"several_writers", f.several_writers},
            {"ops", f.ops},
            {"bytes", f.bytes},
            {"histogram", histogram},
            {"sequential", f.sequential},
            {"nonsequential", f.nonsequential},
            {"errors", f.errors},
            {"write_ns", f.write_ns},
            {"fsyncs", f.fsyncs},
            {"fsync_ns", f.fsync_ns},
            {"flushes", f.flushes},
            {"flush_ns", f.flush_ns},
            {"max_extent", f.max_extent},
            {"final_size", f.final_size},
            {"size", f.size()},
            {"open_ns", f.open_ns},
            {"close_ns", f.close_ns},
            {"pids", f.pids},
            {"total_ops", f.total_ops()},
            {"total_bytes", f.total_bytes()},
        });
    }
    return {{"iosig_report", 1},
            {"kind", "merged"},
            {"job", report.job},
            {"processes", report.processes},
            {"files", files}};
}

} // namespace iosig::preload
