#include "report_writer.hpp"

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>

#include "../common/paths.hpp"
#include "io_util.hpp"
#include "log.hpp"
#include "process.hpp"
#include "real.h"
#include "shim.h"
#include "stats.hpp"

namespace iosig::shim {
namespace {

constexpr const char* family_names[] = {"write", "pwrite", "vector", "stdio", "copy"};
static_assert(sizeof family_names / sizeof family_names[0] == family_count);

constinit std::atomic<bool> reported_before_exec{false};

std::string read_link(const char* path) {
    char buffer[PATH_MAX];
    const ssize_t n = readlink(path, buffer, sizeof buffer - 1);
    return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
}

nlohmann::json command_line() {
    nlohmann::json argv = nlohmann::json::array();
    const int fd = internal_open("/proc/self/cmdline", O_RDONLY);
    if (fd < 0) return argv;
    std::string text;
    char buffer[4096];
    ssize_t n;
    while ((n = read(fd, buffer, sizeof buffer)) > 0 && text.size() < 65536) text.append(buffer, static_cast<std::size_t>(n));
    internal_close(fd);
    std::size_t start = 0;
    while (start < text.size()) {
        const auto end = text.find('\0', start);
        argv.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return argv;
}

nlohmann::json optional_string(const char* text) { return text ? nlohmann::json(text) : nlohmann::json(); }

nlohmann::json describe(const iosig_file& file) {
    const FileTotals t = totals(file);
    nlohmann::json ops = nlohmann::json::object(), bytes = nlohmann::json::object();
    for (int f = 0; f < family_count; ++f) {
        if (t.ops[f] == 0 && t.bytes[f] == 0) continue;
        ops[family_names[f]] = t.ops[f];
        bytes[family_names[f]] = t.bytes[f];
    }
    nlohmann::json histogram = nlohmann::json::object();
    for (int b = 0; b < histogram_buckets; ++b)
        if (t.histogram[b] != 0)
            histogram[std::to_string(b == 0 ? 0 : std::uint64_t{1} << (b - 1))] = t.histogram[b];
    // Sampled call time, extrapolated to every write call.
    const std::uint64_t write_ns =
        t.timed_calls == 0 ? 0
                           : static_cast<std::uint64_t>(static_cast<double>(t.timed_ns) *
                                                        static_cast<double>(t.total_ops()) /
                                                        static_cast<double>(t.timed_calls));
    const std::int64_t close_ns = file.close_ns.load(std::memory_order_relaxed);
    return {
        {"path", optional_string(file.id.path)},
        {"staged", optional_string(file.id.staged)},
        {"mount", optional_string(file.id.mount)},
        {"rule", optional_string(file.id.rule)},
        {"rule_where", optional_string(file.id.rule_where)},
        {"signature", optional_string(file.id.signature)},
        {"source", optional_string(file.id.source)},
        {"placement", optional_string(file.id.placement)},
        {"api", optional_string(file.id.api)},
        {"redirected", file.id.redirected},
        {"created", file.id.created},
        {"inherited", file.inherited_from_parent.load() || (file.id.source && std::strcmp(file.id.source, "inherited") == 0)},
        {"deleted", file.deleted.load()},
        {"renamed_to", optional_string(file.renamed_to.load())},
        {"relocated", file.relocated.load()},
        {"open_ns", file.open_ns},
        {"close_ns", close_ns},
        {"open_at_exit", file.open_descriptors.load() > 0},
        {"ops", ops},
        {"bytes", bytes},
        {"histogram", histogram},
        {"sequential", t.sequential},
        {"nonsequential", t.nonsequential},
        {"errors", t.errors},
        {"write_ns", write_ns},
        {"sampled_calls", t.timed_calls},
        {"fsyncs", t.fsyncs},
        {"fsync_ns", t.fsync_ns},
        {"flushes", t.flushes},
        {"flush_ns", t.flush_ns},
        {"max_extent", file.max_extent.load()},
        {"final_size", file.final_size.load()},
        {"several_writers", file.several_writers.load()},
    };
}

bool worth_reporting(const iosig_file& file) {
    if (!file.inherited_from_parent.load(std::memory_order_relaxed)) return true;
    const FileTotals t = totals(file);
    return t.total_ops() != 0 || t.fsyncs != 0 || t.flushes != 0 || file.deleted.load();
}

} // namespace

void write_process_report(bool before_exec) {
    const int saved_errno = errno;
    try {
        if (getpid() != process_pid()) return;  // a vfork child: the parent reports its own work
        nlohmann::json files = nlohmann::json::array();
        for_each_file([&](iosig_file& file) {
            if (worth_reporting(file)) files.push_back(describe(file));
        });
        if (files.empty()) return;
        Process* p = process();
        if (p == nullptr) return;
        std::reverse(files.begin(), files.end());  // registry is newest first
        const nlohmann::json report = {
            {"iosig_report", 1},
            {"job", p->job},
            {"run", p->run},
            {"pid", static_cast<long>(getpid())},
            {"ppid", static_cast<long>(getppid())},
            {"exe", read_link("/proc/self/exe")},
            {"argv", command_line()},
            {"start_ns", process_start_ns()},
            {"end_ns", realtime_ns()},
            {"exec", before_exec},
            {"files", files},
        };
        const std::string line = report.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
        const std::string directory(preload::parent_of(p->report_path));
        make_directories(directory.c_str(), 0700);
        const int fd = internal_open(p->report_path.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0600);
        if (fd < 0 || !write_all(fd, line.data(), line.size()))
            warn(Cause::report, "cannot write the report %s (%s)", p->report_path.c_str(), std::strerror(errno));
        internal_close(fd);
        if (before_exec) reported_before_exec.store(true);
    } catch (const std::exception& e) {
        warn(Cause::report, "cannot write the report (%s)", e.what());
    } catch (...) {
        warn(Cause::report, "cannot write the report");
    }
    errno = saved_errno;
}

} // namespace iosig::shim

extern "C" {

IOSIG_HIDDEN void iosig_before_exec(void) {
    ++iosig_reentry;
    iosig::shim::write_process_report(true);
    --iosig_reentry;
}

IOSIG_HIDDEN void iosig_exec_failed(void) {
    if (iosig::shim::reported_before_exec.exchange(false)) iosig::shim::stats_reset_counts();
}

} // extern "C"
