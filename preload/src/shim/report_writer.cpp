// The per-process report, written without malloc or locks: it also runs from _exit() (which dash
// and many daemons use to end, possibly from a signal handler) and right before exec.
#include "report_writer.hpp"

#include "../common/paths.hpp"
#include "io_util.hpp"
#include "log.hpp"
#include "process.hpp"
#include "real.h"
#include "shim.h"
#include "stats.hpp"

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace iosig::shim {
namespace {

constexpr const char* family_names[] = {"write", "pwrite", "vector", "stdio", "copy"};
static_assert(sizeof family_names / sizeof family_names[0] == family_count);

constinit std::atomic<bool> reported_before_exec{false};
constinit std::atomic<bool> reported_at_exit{false};
constinit char report_file[PATH_MAX] = {};
constinit char job_id[256] = {};
constinit char run_id[256] = {};

// A growing text buffer in anonymous memory.
class Text {
public:
    ~Text() {
        if (data_ != nullptr) munmap(data_, capacity_);
    }
    bool ok() const { return ok_; }
    const char* data() const { return data_; }
    std::size_t size() const { return size_; }

    void raw(const char* text, std::size_t length) {
        if (!reserve(length)) return;
        std::memcpy(data_ + size_, text, length);
        size_ += length;
    }
    void raw(const char* text) { raw(text, std::strlen(text)); }
    void format(const char* fmt, ...) __attribute__((format(printf, 2, 3))) {
        char buffer[64];
        va_list args;
        va_start(args, fmt);
        const int n = std::vsnprintf(buffer, sizeof buffer, fmt, args);
        va_end(args);
        if (n > 0) raw(buffer, static_cast<std::size_t>(std::min<int>(n, sizeof buffer - 1)));
    }
    void string(const char* text) {
        if (text == nullptr) return raw("null");
        raw("\"");
        for (const char* c = text; *c; ++c) {
            const auto u = static_cast<unsigned char>(*c);
            if (u == '"' || u == '\\') {
                const char escaped[2] = {'\\', *c};
                raw(escaped, 2);
            } else if (u < 0x20 || u == 0x7f) {
                format("\\u%04x", u);
            } else {
                raw(c, 1);
            }
        }
        raw("\"");
    }
    void key(const char* name) {
        if (needs_comma_) raw(",");
        string(name);
        raw(":");
        needs_comma_ = false;
    }
    void open(char bracket) {
        const char text[1] = {bracket};
        raw(text, 1);
        needs_comma_ = false;
    }
    void close(char bracket) {
        const char text[1] = {bracket};
        raw(text, 1);
        needs_comma_ = true;
    }
    void value_done() { needs_comma_ = true; }
    void item() {
        if (needs_comma_) raw(",");
        needs_comma_ = false;
    }

    void field(const char* name, const char* text) { key(name), string(text), value_done(); }
    void field(const char* name, std::uint64_t v) {
        key(name), format("%llu", static_cast<unsigned long long>(v)), value_done();
    }
    void field_signed(const char* name, std::int64_t v) {
        key(name), format("%lld", static_cast<long long>(v)), value_done();
    }
    void field(const char* name, bool v) { key(name), raw(v ? "true" : "false"), value_done(); }

private:
    bool reserve(std::size_t more) {
        if (!ok_) return false;
        if (size_ + more <= capacity_) return true;
        std::size_t wanted = capacity_ == 0 ? 65536 : capacity_ * 2;
        while (wanted < size_ + more)
            wanted *= 2;
        void* memory = capacity_ == 0 ? mmap(nullptr, wanted, PROT_READ | PROT_WRITE,
                                             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                                      : mremap(data_, capacity_, wanted, MREMAP_MAYMOVE);
        if (memory == MAP_FAILED) {
            ok_ = false;
            return false;
        }
        data_ = static_cast<char*>(memory);
        capacity_ = wanted;
        return true;
    }

    char* data_ = nullptr;
    std::size_t size_ = 0;
    std::size_t capacity_ = 0;
    bool ok_ = true;
    bool needs_comma_ = false;
};

// Reads a small /proc file into `out` (NUL-terminated); returns its length.
std::size_t read_proc(const char* path, char* out, std::size_t capacity) {
    const int fd = IOSIG_REAL(open)(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) return 0;
    std::size_t size = 0;
    ssize_t n;
    while (size + 1 < capacity && (n = read(fd, out + size, capacity - 1 - size)) > 0)
        size += static_cast<std::size_t>(n);
    IOSIG_REAL(close)(fd);
    out[size] = '\0';
    return size;
}

void describe(Text& t, const iosig_file& file) {
    const FileTotals totals_now = totals(file);
    t.item();
    t.open('{');
    t.field("path", file.id.path);
    t.field("staged", file.id.staged);
    t.field("mount", file.id.mount);
    t.field("rule", file.id.rule);
    t.field("rule_where", file.id.rule_where);
    t.field("signature", file.id.signature);
    t.field("source", file.id.source);
    t.field("placement", file.id.placement);
    t.field("api", file.id.api);
    t.field("redirected", file.id.redirected);
    t.field("created", file.id.created);
    t.field("inherited",
            file.inherited_from_parent.load() ||
                (file.id.source != nullptr && std::strcmp(file.id.source, "inherited") == 0));
    t.field("deleted", file.deleted.load());
    t.field("renamed_to", file.renamed_to.load());
    t.field("relocated", file.relocated.load());
    t.field_signed("open_ns", file.open_ns);
    t.field_signed("close_ns", file.close_ns.load());
    t.field("open_at_exit", file.open_descriptors.load() > 0);
    for (const char* which : {"ops", "bytes"}) {
        t.key(which);
        t.open('{');
        const bool ops = which[0] == 'o';
        for (int f = 0; f < family_count; ++f)
            if (totals_now.ops[f] != 0 || totals_now.bytes[f] != 0)
                t.field(family_names[f], ops ? totals_now.ops[f] : totals_now.bytes[f]);
        t.close('}');
    }
    t.key("histogram");
    t.open('{');
    for (int b = 0; b < histogram_buckets; ++b) {
        if (totals_now.histogram[b] == 0) continue;
        char name[24];
        std::snprintf(name, sizeof name, "%llu", b == 0 ? 0ULL : 1ULL << (b - 1));
        t.field(name, totals_now.histogram[b]);
    }
    t.close('}');
    const double all = static_cast<double>(totals_now.total_ops());
    const std::uint64_t write_ns =
        totals_now.timed_calls == 0
            ? 0
            : static_cast<std::uint64_t>(static_cast<double>(totals_now.timed_ns) * all /
                                         static_cast<double>(totals_now.timed_calls));
    t.field("sequential", totals_now.sequential);
    t.field("nonsequential", totals_now.nonsequential);
    t.field("errors", totals_now.errors);
    t.field("write_ns", write_ns);
    t.field("sampled_calls", totals_now.timed_calls);
    t.field("fsyncs", totals_now.fsyncs);
    t.field("fsync_ns", totals_now.fsync_ns);
    t.field("flushes", totals_now.flushes);
    t.field("flush_ns", totals_now.flush_ns);
    t.field("max_extent", file.max_extent.load());
    t.field("final_size", file.final_size.load());
    t.field("several_writers", file.several_writers.load());
    t.close('}');
}

bool worth_reporting(const iosig_file& file) {
    if (!file.inherited_from_parent.load(std::memory_order_relaxed)) return true;
    const FileTotals t = totals(file);
    return t.total_ops() != 0 || t.fsyncs != 0 || t.flushes != 0 || file.deleted.load();
}

} // namespace

void remember_report_identity(const char* job, const char* run, const char* path) {
    std::snprintf(job_id, sizeof job_id, "%s", job);
    std::snprintf(run_id, sizeof run_id, "%s", run);
    std::snprintf(report_file, sizeof report_file, "%s", path);
}

void write_process_report(ReportMoment moment) {
    const int saved_errno = errno;
    ++iosig_reentry;
    bool any = false;
    for_each_file([&](iosig_file& file) { any = any || worth_reporting(file); });
    if (!any || report_file[0] == '\0' ||
        getpid() != process_pid()) { // a vfork child: the parent reports
        --iosig_reentry;
        errno = saved_errno;
        return;
    }
    if (moment != ReportMoment::exec && reported_at_exit.exchange(true)) {
        --iosig_reentry;
        errno = saved_errno;
        return;
    }
    Text t;
    char exe[PATH_MAX];
    const ssize_t exe_length = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[exe_length > 0 ? exe_length : 0] = '\0';
    static char cmdline[16384]; // only this thread writes reports at a time (exit, exec)
    const std::size_t cmdline_length = read_proc("/proc/self/cmdline", cmdline, sizeof cmdline);

    t.open('{');
    t.field("iosig_report", std::uint64_t{1});
    t.field("job", job_id);
    t.field("run", run_id);
    t.field_signed("pid", getpid());
    t.field_signed("ppid", getppid());
    t.field("exe", exe);
    t.key("argv");
    t.open('[');
    for (std::size_t at = 0; at < cmdline_length; at += std::strlen(cmdline + at) + 1) {
        t.item();
        t.string(cmdline + at);
        t.value_done();
    }
    t.close(']');
    t.field_signed("start_ns", process_start_ns());
    t.field_signed("end_ns", realtime_ns());
    t.field("exec", moment == ReportMoment::exec);
    t.key("files");
    t.open('[');
    // The registry is newest first; the report lists files in open order.
    const iosig_file* files[512]; // small: this may run on a signal stack
    std::size_t count = 0;
    std::size_t skipped = 0;
    for_each_file([&](iosig_file& file) {
        if (!worth_reporting(file)) return;
        if (count < sizeof files / sizeof files[0])
            files[count++] = &file;
        else
            describe(t, file), ++skipped;
    });
    while (count > 0)
        describe(t, *files[--count]);
    t.close(']');
    t.close('}');
    t.raw("\n");

    if (t.ok()) {
        char directory[PATH_MAX];
        const auto parent = preload::parent_of(report_file);
        std::snprintf(directory, sizeof directory, "%.*s", static_cast<int>(parent.size()),
                      parent.data());
        make_directories(directory, 0700);
        const int fd = internal_open(report_file, O_WRONLY | O_APPEND | O_CREAT, 0600);
        if (fd < 0 || !write_all(fd, t.data(), t.size()))
            warn(Cause::report, "cannot write the report %s (%s)", report_file,
                 std::strerror(errno));
        internal_close(fd);
    }
    if (moment == ReportMoment::exec) reported_before_exec.store(true);
    (void)skipped;
    --iosig_reentry;
    errno = saved_errno;
}

} // namespace iosig::shim

extern "C" {

IOSIG_HIDDEN void iosig_before_exec(void) {
    iosig::shim::write_process_report(iosig::shim::ReportMoment::exec);
}

IOSIG_HIDDEN void iosig_exec_failed(void) {
    if (iosig::shim::reported_before_exec.exchange(false)) iosig::shim::stats_reset_counts();
}

} // extern "C"
