// `iosig report` without --json: one small table per file.
#include "iosig/units.hpp"
#include "report_model.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace iosig::preload {
namespace {

std::string percent(double fraction) {
    return fmt::format("{:.0f}%", fraction * 100);
}

// The IO size below which half of the calls fall (the histogram's median bucket).
std::uint64_t median_call_size(const FileSummary& f) {
    const auto calls = f.total_ops();
    std::uint64_t seen = 0;
    for (const auto& [bucket, count] : f.histogram) {
        seen += count;
        if (seen * 2 >= calls) return bucket;
    }
    return 0;
}

// A histogram bucket [2^k, 2^(k+1)) in words.
std::string size_class(std::uint64_t lower) {
    if (lower == 0) return "0 B";
    return human_size(static_cast<double>(lower)) + "-" +
           human_size(static_cast<double>(lower * 2));
}

std::string families(const FileSummary& f) {
    std::string text;
    for (const auto& [family, calls] : f.ops) {
        if (!text.empty()) text += ", ";
        const auto it = f.bytes.find(family);
        text += fmt::format("{} {} ({})", family, calls,
                            human_size(static_cast<double>(it == f.bytes.end() ? 0 : it->second)));
    }
    return text.empty() ? "none" : text;
}

} // namespace

std::string render_table(const JobReport& report) {
    std::string out =
        fmt::format("iosig report: job {}, {} process{}, {} tracked file{}\n", report.job,
                    report.processes.size(), report.processes.size() == 1 ? "" : "es",
                    report.files.size(), report.files.size() == 1 ? "" : "s");
    for (const auto& f : report.files) {
        out += fmt::format("\n{}\n", f.path);
        auto row = [&](std::string_view label, const std::string& value) {
            out += fmt::format("  {:<11} {}\n", label, value);
        };
        row("placement", f.placement.empty() ? "tracked" : f.placement);
        if (!f.staged.empty()) row("data", f.staged);
        std::string why = f.rule.empty() ? f.source : "rule " + f.rule;
        if (!f.rule_where.empty()) why += " (" + f.rule_where + ")";
        if (!f.signature.empty()) why += ": " + f.signature;
        row("why", why);
        const auto calls = f.total_ops();
        row("written",
            fmt::format("{} in {} call{}: {}{}", human_size(static_cast<double>(f.total_bytes())),
                        calls, calls == 1 ? "" : "s", families(f),
                        calls ? ", median call " + size_class(median_call_size(f)) : ""));
        row("pattern",
            fmt::format(
                "{} sequential ({} of {} calls), {} fsync{}{}, size {}{}",
                percent(f.sequential_fraction()), f.sequential, f.sequential + f.nonsequential,
                f.fsyncs, f.fsyncs == 1 ? "" : "s",
                f.fsyncs ? " (" + human_duration(static_cast<double>(f.fsync_ns) * 1e-9) + ")" : "",
                human_size(static_cast<double>(f.size())),
                f.errors ? fmt::format(", {} failed calls", f.errors) : ""));
        const double call_seconds = static_cast<double>(f.write_ns + f.flush_ns) * 1e-9;
        std::string timing = fmt::format("{} in write calls", human_duration(call_seconds));
        if (call_seconds > 0 && f.total_bytes() > 0)
            timing += " -> " + human_bandwidth(static_cast<double>(f.total_bytes()) / call_seconds);
        if (f.open_ns != 0 && f.close_ns > f.open_ns)
            timing +=
                fmt::format("; open for {}",
                            human_duration(static_cast<double>(f.close_ns - f.open_ns) * 1e-9));
        else if (f.open_at_exit)
            timing += "; still open at exit";
        row("time", timing);
        std::string fate = f.deleted     ? "deleted by the program"
                           : f.relocated ? "moved home when the destination filled up"
                                         : "";
        if (!f.finalized.empty() && f.finalized != fate)
            fate += (fate.empty() ? "finalize: " : "; finalize: ") + f.finalized;
        if (!fate.empty()) row("fate", fate);
        std::string pids;
        for (const long pid : f.pids)
            pids += (pids.empty() ? "" : ", ") + std::to_string(pid);
        row("processes", pids);
    }
    return out;
}

} // namespace iosig::preload
