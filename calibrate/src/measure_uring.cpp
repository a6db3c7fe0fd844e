// IO at queue depth > 1 through io_uring (liburing): `queue_depth` IOs in flight, each completion
// immediately replaced by a new IO, until the time box ends. Random 4 KiB IOPS and sequential
// large-block bandwidth both run through it.
#include "measure.hpp"
#include "stats.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <liburing.h>
#include <stdexcept>
#include <unistd.h>
#include <vector>

namespace iosig::calibrate {

namespace {

// Completions of IOs that finish inside the submitting system call (a RAM disk, the page cache) are
// posted through task work; by default the kernel interrupts the task to run it (an IPI-like
// notification per batch), which on tmpfs halves the rate. The ring is used by this thread only, so
// it can ask for cooperative task running, as fio does: measured on the lab's tmpfs, QD32 4 KiB
// random reads go from ~310 k to ~600 k IOPS. Kernels before 5.19 reject the flags: set up a plain
// ring then.
int init_ring(io_uring& ring, unsigned queue_depth) {
    io_uring_params params{};
    params.flags = IORING_SETUP_COOP_TASKRUN;
    if (io_uring_queue_init_params(queue_depth, &ring, &params) == 0) return 0;
    return io_uring_queue_init(queue_depth, &ring, 0);
}

} // namespace

MountIo::Stream MountIo::uring_stream(StreamOps ops, std::uint64_t block, unsigned queue_depth,
                                      const std::function<std::uint64_t()>& next_offset,
                                      const PhaseLimits& limits) {
    Stream r;
    if (static_cast<std::uint64_t>(queue_depth) * block > buffer_.size())
        throw std::invalid_argument("queue too deep");
    const int write_fd = ops == StreamOps::reads ? -1 : write_fd_for(block);
    const int read_fd = method_.direct ? direct_file_.fd() : sync_fd_;
    const auto writes = [ops](unsigned slot) {
        return ops == StreamOps::writes || (ops == StreamOps::alternating && slot % 2 == 1);
    };

    io_uring ring{};
    if (const int rc = init_ring(ring, queue_depth); rc < 0) {
        r.engine.clear();
        unavailable_reason_ = std::strerror(-rc);
        return r;
    }
    r.engine = "io_uring";
    struct RingGuard {
        io_uring* ring;
        ~RingGuard() { io_uring_queue_exit(ring); }
    } guard{&ring};

    auto submit_one = [&](unsigned slot) {
        io_uring_sqe* sqe = io_uring_get_sqe(&ring);
        if (sqe == nullptr) throw std::runtime_error("io_uring submission queue full");
        void* data = buffer_.data() + static_cast<std::size_t>(slot) * block;
        const auto offset = static_cast<off_t>(next_offset());
        if (writes(slot)) {
            buffer_.scramble(static_cast<std::size_t>(slot) * block, block, ++writes_);
            io_uring_prep_write(sqe, write_fd, data, static_cast<unsigned>(block), offset);
        } else
            io_uring_prep_read(sqe, read_fd, data, static_cast<unsigned>(block), offset);
        io_uring_sqe_set_data64(sqe, slot);
    };

    const double start = now_seconds();
    double last_report = start;
    for (unsigned slot = 0; slot < queue_depth; ++slot)
        submit_one(slot);
    io_uring_submit(&ring);
    unsigned in_flight = queue_depth;
    bool stopping = false;
    // The rate is counted between the first queue_depth completions (the ramp: a rate limiter's
    // initial burst, an empty device queue) and the moment submission stops (the drain runs at a
    // falling depth).
    double ramp_time = start, stop_time = 0;
    std::uint64_t ramp_ios = 0, stop_ios = 0;
    std::vector<double> steady_times, steady_counts; // completions between ramp and stop
    // Each completion's replacement is submitted at once, as fio does: collecting the replacements
    // of a batch of completions and submitting them together hands a virtio disk bursts instead of
    // a steady queue and measured 15-25 % fewer IOPS than fio on the lab's ssd. (On a RAM disk the
    // per-IO system call costs nothing extra once the ring runs task work cooperatively,
    // init_ring.) Each completion is timed on its own: with inline completions (a RAM disk) one
    // wait can reap thousands of IOs, and a time taken once per wait would stamp them all with its
    // start.
    auto complete = [&](io_uring_cqe* cqe, unsigned& resubmit) {
        const double t = now_seconds();
        const int result = cqe->res;
        const auto slot = static_cast<unsigned>(io_uring_cqe_get_data64(cqe));
        io_uring_cqe_seen(&ring, cqe);
        --in_flight;
        if (result < 0)
            throw std::runtime_error(fmt::format("io_uring {} on {}: {}",
                                                 writes(slot) ? "write" : "read", path(),
                                                 std::strerror(-result)));
        if (static_cast<std::uint64_t>(result) != block)
            throw std::runtime_error("short io_uring transfer on " + path());
        ++r.ios;
        if (r.ios == queue_depth) {
            ramp_time = t;
            ramp_ios = r.ios;
        }
        if (!stopping &&
            (interrupted() || (t - start >= limits.seconds && r.ios >= limits.min_ios) ||
             r.ios >= limits.max_ios)) {
            stopping = true;
            stop_time = t;
            stop_ios = r.ios;
        }
        if (!stopping && r.ios > queue_depth) {
            steady_times.push_back(t - start);
            steady_counts.push_back(static_cast<double>(r.ios));
            ++(writes(slot) ? r.steady_writes : r.steady_reads);
        }
        if (!stopping) {
            submit_one(slot);
            io_uring_submit(&ring);
            ++resubmit;
        }
    };
    while (in_flight > 0) {
        io_uring_cqe* cqe = nullptr;
        const int rc = io_uring_wait_cqe(&ring, &cqe);
        if (rc == -EINTR) {
            stopping = true;
            continue;
        }
        if (rc < 0)
            throw std::runtime_error(
                fmt::format("io_uring wait on {}: {}", path(), std::strerror(-rc)));
        unsigned resubmit = 0;
        complete(cqe, resubmit);
        while (io_uring_peek_cqe(&ring, &cqe) == 0 && cqe != nullptr)
            complete(cqe, resubmit);
        in_flight += resubmit;
        if (const double t = now_seconds(); limits.report && t - last_report > 0.1) {
            limits.report(std::min(1.0, (t - start) / limits.seconds));
            last_report = t;
        }
    }
    r.seconds = now_seconds() - start;
    // The slope of completions over time, not the count over the window: a rate limiter releases
    // IOs in bursts (blk-throttle: one slice's worth every 100 ms), and a window ending just before
    // a burst would miss up to a whole slice.
    const auto slope = steady_times.size() >= 8 ? fit_line(steady_times, steady_counts)
                                                : std::optional<LinearFit>{};
    if (slope && slope->slope > 0)
        r.ios_per_second = slope->slope;
    else if (stop_ios > ramp_ios + queue_depth && stop_time > ramp_time)
        r.ios_per_second = static_cast<double>(stop_ios - ramp_ios) / (stop_time - ramp_time);
    else
        r.ios_per_second = r.seconds > 0 ? static_cast<double>(r.ios) / r.seconds : 0;
    throw_if_interrupted();
    return r;
}

Iops MountIo::random_iops(bool write, std::uint64_t block, unsigned queue_depth,
                          const PhaseLimits& limits) {
    Iops r;
    r.block = block;
    r.queue_depth = queue_depth;
    const std::uint64_t slots = file_size_ / block;
    if (slots == 0) throw std::logic_error("random_iops before sequential_write");
    if (!write) drop_cache();
    const Stream s = uring_stream(
        write ? StreamOps::writes : StreamOps::reads, block, queue_depth,
        [&] { return random_.below(slots) * block; }, limits);
    if (s.engine.empty()) {
        // io_uring disabled (kernel.io_uring_disabled, seccomp): the best this process can do is
        // QD1.
        r.engine = fmt::format("psync (io_uring unavailable: {})", unavailable_reason_);
        r.queue_depth = 1;
        const Latencies l = latency(write, true, block, limits);
        r.ios = l.samples.size();
        for (double t : l.samples)
            r.seconds += t;
        r.iops = r.seconds > 0 ? static_cast<double>(r.ios) / r.seconds : 0;
        return r;
    }
    r.engine = s.engine;
    r.ios = s.ios;
    r.seconds = s.seconds;
    r.iops = s.ios_per_second;
    return r;
}

double read_write_utilisation(const MixedIops& mixed, const Iops& reads, const Iops& writes) {
    if (reads.iops <= 0 || writes.iops <= 0 || mixed.engine.empty()) return 0;
    return mixed.read_iops / reads.iops + mixed.write_iops / writes.iops;
}

MixedIops MountIo::mixed_iops(std::uint64_t block, unsigned queue_depth,
                              const PhaseLimits& limits) {
    MixedIops r;
    r.block = block;
    r.queue_depth = std::max(2u, queue_depth);
    const std::uint64_t slots = file_size_ / block;
    if (slots == 0) throw std::logic_error("mixed_iops before sequential_write");
    drop_cache();
    const Stream s = uring_stream(
        StreamOps::alternating, block, r.queue_depth, [&] { return random_.below(slots) * block; },
        limits);
    if (s.engine.empty()) return r; // no io_uring: one thread cannot keep both directions busy
    r.engine = s.engine;
    r.ios = s.ios;
    r.seconds = s.seconds;
    // The steady rate split by what completed in the steady window.
    const double steady = static_cast<double>(s.steady_reads + s.steady_writes);
    if (steady > 0) {
        r.read_iops = s.ios_per_second * static_cast<double>(s.steady_reads) / steady;
        r.write_iops = s.ios_per_second * static_cast<double>(s.steady_writes) / steady;
    }
    return r;
}

} // namespace iosig::calibrate
