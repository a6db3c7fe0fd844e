// The eBPF collector: loads the CO-RE skeleton, attaches each program to its tracepoint and turns
// ring-buffer records into samples in SI units.
//
// Attaching a tracepoint program needs the tracepoint's id, which only tracefs tells. When tracefs
// is not mounted (this machine), it is mounted privately on a temporary directory just long enough
// to read the ids, so the system's mounts stay as they were.
#include "dirty_events.h"
#include "dirty_probes.skel.h"
#include "iosig/cachesim/collector.hpp"

#include <bpf/libbpf.h>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace iosig::cachesim {
namespace {

const char* const tracepoints[] = {"global_dirty_state", "balance_dirty_pages",
                                   "bdi_dirty_ratelimit", "writeback_pages_written"};

std::string existing_tracefs() {
    std::ifstream mounts("/proc/mounts");
    std::string device, dir, type, rest;
    while (mounts >> device >> dir >> type && std::getline(mounts, rest)) {
        if (type == "tracefs") return dir;
        if (type == "debugfs" && ::access((dir + "/tracing/events").c_str(), R_OK) == 0)
            return dir + "/tracing";
    }
    return {};
}

bool read_ids(const std::string& root, long ids[4], std::string* reason) {
    for (int i = 0; i < 4; ++i) {
        std::ifstream in(fmt::format("{}/events/writeback/{}/id", root, tracepoints[i]));
        if (!(in >> ids[i])) {
            *reason =
                fmt::format("tracepoint writeback:{} not found under {}", tracepoints[i], root);
            return false;
        }
    }
    return true;
}

bool tracepoint_ids(long ids[4], std::string* reason) {
    const std::string mounted = existing_tracefs();
    if (!mounted.empty()) return read_ids(mounted, ids, reason);
    char dir[] = "/tmp/iosig-tracefs-XXXXXX";
    if (!::mkdtemp(dir)) {
        *reason = fmt::format("no tracefs mounted and mkdtemp failed: {}", std::strerror(errno));
        return false;
    }
    bool ok = false;
    if (::mount("nodev", dir, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
        *reason =
            fmt::format("no tracefs mounted and mounting one failed: {}", std::strerror(errno));
    } else {
        ok = read_ids(dir, ids, reason);
        ::umount2(dir, MNT_DETACH);
    }
    ::rmdir(dir);
    return ok;
}

int open_tracepoint_event(long id) {
    perf_event_attr attr{};
    attr.type = PERF_TYPE_TRACEPOINT;
    attr.size = sizeof(attr);
    attr.config = static_cast<__u64>(id);
    attr.sample_period = 1;
    attr.wakeup_events = 1;
    // A BPF program on a tracepoint runs wherever the tracepoint fires; one event on CPU 0 carries
    // it.
    return static_cast<int>(
        ::syscall(__NR_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC));
}

class BpfCollector final : public DirtyCollector {
public:
    explicit BpfCollector(const CollectorOptions& options)
        : DirtyCollector(StateSource::ebpf, options) {}

    ~BpfCollector() override {
        stop();
        if (ring_) ring_buffer__free(ring_);
        for (bpf_link* link : links_)
            bpf_link__destroy(link);
        if (skeleton_) dirty_probes__destroy(skeleton_);
    }

    bool load(std::string* reason) {
        libbpf_set_print([](libbpf_print_level, const char*, va_list) { return 0; });
        skeleton_ = dirty_probes__open_and_load();
        if (!skeleton_) {
            *reason = fmt::format("loading the BPF programs failed: {}", std::strerror(errno));
            return false;
        }
        long ids[4];
        if (!tracepoint_ids(ids, reason)) return false;
        bpf_program* programs[4] = {
            skeleton_->progs.on_global_dirty_state, skeleton_->progs.on_balance_dirty_pages,
            skeleton_->progs.on_bdi_dirty_ratelimit, skeleton_->progs.on_writeback_pages_written};
        for (int i = 0; i < 4; ++i) {
            const int fd = open_tracepoint_event(ids[i]);
            if (fd < 0) {
                *reason = fmt::format("perf_event_open(writeback:{}): {}", tracepoints[i],
                                      std::strerror(errno));
                return false;
            }
            bpf_link* link = bpf_program__attach_perf_event(programs[i], fd);
            if (!link) {
                ::close(fd);
                *reason = fmt::format("attaching to writeback:{}: {}", tracepoints[i],
                                      std::strerror(errno));
                return false;
            }
            links_.push_back(link);
        }
        ring_ = ring_buffer__new(bpf_map__fd(skeleton_->maps.events), &BpfCollector::on_record,
                                 this, nullptr);
        if (!ring_) {
            *reason = fmt::format("ring buffer: {}", std::strerror(errno));
            return false;
        }
        return true;
    }

    int poll(int timeout_ms) override {
        const int n = ring_buffer__poll(ring_, timeout_ms);
        std::uint32_t zero = 0;
        std::uint64_t lost = 0;
        if (bpf_map__lookup_elem(skeleton_->maps.lost, &zero, sizeof(zero), &lost, sizeof(lost),
                                 0) == 0 &&
            lost)
            add_lost(lost);
        return n < 0 ? 0 : n;
    }

private:
    static int on_record(void* self, void* data, size_t size) {
        if (size < sizeof(iosig_dirty_event)) return 0;
        static_cast<BpfCollector*>(self)->take(*static_cast<const iosig_dirty_event*>(data));
        return 0;
    }

    void take(const iosig_dirty_event& e) {
        const double page = snapshot_page_size();
        const double time = static_cast<double>(e.time_ns) * 1e-9;
        constexpr double kb = 1024;
        switch (e.kind) {
        case IOSIG_EVENT_GLOBAL: {
            const auto& g = e.global;
            add_global({time, g.nr_dirty * page, g.nr_writeback * page, g.background_thresh * page,
                        g.dirty_thresh * page, g.dirty_limit * page, g.nr_dirtied * page,
                        g.nr_written * page, static_cast<pid_t>(e.tgid)});
            break;
        }
        case IOSIG_EVENT_THROTTLE: {
            const auto& t = e.throttle;
            ThrottleSample s;
            s.time = time;
            s.pid = static_cast<pid_t>(e.pid);
            s.tgid = static_cast<pid_t>(e.tgid);
            s.device = std::string(e.bdi, strnlen(e.bdi, sizeof(e.bdi)));
            s.limit = t.limit * page;
            s.setpoint = t.setpoint * page;
            s.dirty = t.dirty * page;
            s.wb_setpoint = t.wb_setpoint * page;
            s.wb_dirty = t.wb_dirty * page;
            s.dirty_ratelimit = t.dirty_ratelimit * kb;
            s.task_ratelimit = t.task_ratelimit * kb;
            s.dirtied = t.dirtied * page;
            s.dirtied_pause = t.dirtied_pause * page;
            s.paused = t.paused / 1e3;
            s.pause = t.pause / 1e3;
            s.period = t.period / 1e3;
            s.think = t.think / 1e3;
            add_throttle(s);
            break;
        }
        case IOSIG_EVENT_RATELIMIT: {
            const auto& r = e.ratelimit;
            add_device(std::string(e.bdi, strnlen(e.bdi, sizeof(e.bdi))),
                       {time, r.write_bw * kb, r.avg_write_bw * kb, r.dirty_rate * kb,
                        r.dirty_ratelimit * kb, r.task_ratelimit * kb,
                        r.balanced_dirty_ratelimit * kb});
            break;
        }
        case IOSIG_EVENT_WRITTEN:
            add_pages_written(static_cast<double>(e.pages_written));
            break;
        default:
            break;
        }
    }

    double snapshot_page_size() {
        if (page_size_ == 0) page_size_ = static_cast<double>(::sysconf(_SC_PAGESIZE));
        return page_size_;
    }

    dirty_probes* skeleton_ = nullptr;
    std::vector<bpf_link*> links_;
    ring_buffer* ring_ = nullptr;
    double page_size_ = 0;
};

} // namespace

std::unique_ptr<DirtyCollector> open_bpf_collector(const CollectorOptions& options,
                                                   std::string* reason) {
    auto collector = std::make_unique<BpfCollector>(options);
    if (!collector->load(reason)) return nullptr;
    return collector;
}

} // namespace iosig::cachesim
