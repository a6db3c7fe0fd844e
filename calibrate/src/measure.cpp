#include "measure.hpp"

#include "discovery.hpp"
#include "stats.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <set>
#include <stdexcept>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace iosig::calibrate {
namespace {

constexpr std::size_t buffer_bytes = std::size_t(64) << 20;

[[noreturn]] void io_error(const char* what, const std::string& path) {
    throw std::runtime_error(fmt::format("{} {}: {}", what, path, std::strerror(errno)));
}

void write_fully(int fd, const std::byte* data, std::uint64_t size, std::uint64_t offset,
                 const std::string& path) {
    while (size > 0) {
        const ssize_t n = pwrite(fd, data, size, static_cast<off_t>(offset));
        if (n < 0) {
            if (errno == EINTR) {
                throw_if_interrupted();
                continue;
            }
            io_error("write to", path);
        }
        if (n == 0) throw std::runtime_error("short write to " + path);
        data += n;
        size -= static_cast<std::uint64_t>(n);
        offset += static_cast<std::uint64_t>(n);
    }
}

void read_fully(int fd, std::byte* data, std::uint64_t size, std::uint64_t offset,
                const std::string& path) {
    while (size > 0) {
        const ssize_t n = pread(fd, data, size, static_cast<off_t>(offset));
        if (n < 0) {
            if (errno == EINTR) {
                throw_if_interrupted();
                continue;
            }
            io_error("read from", path);
        }
        if (n == 0) throw std::runtime_error("unexpected end of " + path);
        data += n;
        size -= static_cast<std::uint64_t>(n);
        offset += static_cast<std::uint64_t>(n);
    }
}

IoMethod probe_method(int fd, const std::string& directory, const std::string& fs_type,
                      unsigned btrfs_sector) {
    IoMethod m;
    m.direct = (fcntl(fd, F_GETFL) & O_DIRECT) != 0;
    if (!m.direct) return m;
    struct statx sx{};
    if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 &&
        (sx.stx_mask & STATX_DIOALIGN) != 0 && sx.stx_dio_offset_align > 0) {
        m.alignment = std::max(sx.stx_dio_offset_align, sx.stx_dio_mem_align);
        m.alignment_source = "statx";
    } else if (fs_type == "btrfs") {
        // btrfs accepts misaligned O_DIRECT silently and does it buffered instead: align to its
        // sector.
        m.alignment = btrfs_sector ? btrfs_sector : 4096;
        m.alignment_source = "btrfs sector size";
    } else if (is_ram_fs(fs_type)) {
        m.alignment = 512;
        m.alignment_source = fs_type + " (no alignment needed)";
    } else {
        struct statvfs s{};
        m.alignment = statvfs(directory.c_str(), &s) == 0 ? static_cast<unsigned>(s.f_bsize) : 4096;
        m.alignment_source = "fs block size";
    }
    return m;
}

// Loops an IO function until the time box and the minimum count are satisfied.
template <class Io>
void run_box(const PhaseLimits& limits, Io&& io) {
    const double start = now_seconds();
    double last_report = start;
    for (std::uint64_t done = 0; done < limits.max_ios; ++done) {
        const double t = now_seconds();
        if (done >= limits.min_ios && t - start >= limits.seconds) break;
        throw_if_interrupted();
        io(done);
        if (limits.report && t - last_report > 0.1) {
            limits.report(std::min(1.0, (t - start) / std::max(limits.seconds, 1e-9)));
            last_report = t;
        }
    }
}

// Bytes per second after a ramp: IOs completing in the first 10 % of the window are not counted,
// nor is their time. A rate limiter lets a burst through at the start and a device may warm up,
// neither of which a long-running stream sees. (Needs at least 4 completions, else the plain mean.)
double steady_rate(const std::vector<double>& completions, double start, double bytes_per_io) {
    const std::size_t n = completions.size();
    if (n < 4)
        return n && completions.back() > start ? n * bytes_per_io / (completions.back() - start)
                                               : 0;
    const double ramp_end = start + 0.1 * (completions.back() - start);
    std::size_t first = 0;
    while (first + 2 < n && completions[first] < ramp_end)
        ++first;
    // Timing starts at the completion just before the first counted IO.
    const double from = first == 0 ? start : completions[first - 1];
    const double seconds = completions.back() - from;
    return seconds > 0 ? static_cast<double>(n - first) * bytes_per_io / seconds : 0;
}

} // namespace

double now_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

void Latencies::summarize() {
    p50 = percentile(samples, 0.5);
    p90 = percentile(samples, 0.9);
    p99 = percentile(samples, 0.99);
    p999 = percentile(samples, 0.999);
    max = samples.empty() ? 0 : *std::max_element(samples.begin(), samples.end());
    double sum = 0;
    for (double s : samples)
        sum += s;
    mean = samples.empty() ? 0 : sum / static_cast<double>(samples.size());
}

std::vector<std::uint64_t> sweep_chunks(bool full, std::uint64_t largest, std::uint64_t alignment) {
    std::set<std::uint64_t> chunks;
    if (full) {
        for (std::uint64_t s = 512; s <= largest; s *= 2) {
            chunks.insert(s);
            if (s >= 1024 && s * 3 / 2 <= largest) chunks.insert(s * 3 / 2);
        }
        for (std::uint64_t s = 2048; s <= std::min<std::uint64_t>(largest, 64 << 10); s += 2048)
            chunks.insert(s);
    } else {
        // Fewer, longer points: each one's mean is steadier on a busy machine or a throttled
        // device. Powers of four, plus the neighbours of the 4 KiB page where block effects show.
        for (std::uint64_t s = 512; s <= largest; s *= 4)
            chunks.insert(s);
        for (std::uint64_t s : {1024, 4096, 6144, 12288})
            chunks.insert(s);
        chunks.insert(largest);
    }
    if (alignment > 1) std::erase_if(chunks, [&](std::uint64_t c) { return c % alignment != 0; });
    return {chunks.begin(), chunks.end()};
}

MountIo::MountIo(const std::string& directory, const std::string& fs_type,
                 unsigned btrfs_sector_size, int numa_node)
    : direct_file_(directory, "io", O_DIRECT), buffer_(buffer_bytes, numa_node, Pages::huge),
      random_(0x5eed1234abcdULL) {
    method_ = probe_method(direct_file_.fd(), directory, fs_type, btrfs_sector_size);
    cow_ = fs_type == "btrfs" || fs_type == "zfs" || fs_type == "bcachefs";
    sync_fd_ = open(direct_file_.path().c_str(), O_RDWR | O_DSYNC | O_CLOEXEC);
    if (sync_fd_ < 0) io_error("cannot open", direct_file_.path());
    buffer_.fill_random(0x1234567);
}

MountIo::~MountIo() {
    if (sync_fd_ >= 0) close(sync_fd_);
}

int MountIo::write_fd_for(std::uint64_t size) const {
    const bool aligned = method_.direct && method_.alignment > 0 && size % method_.alignment == 0;
    return aligned ? direct_file_.fd() : sync_fd_;
}

void MountIo::drop_cache() {
    if (method_.direct) return;
    fdatasync(sync_fd_);
    posix_fadvise(sync_fd_, 0, 0, POSIX_FADV_DONTNEED);
}

Throughput MountIo::sequential_write(std::uint64_t block, std::uint64_t file_cap,
                                     const PhaseLimits& limits, unsigned queue_depth) {
    block = std::min<std::uint64_t>(block, buffer_.size() / std::max(queue_depth, 1u));
    file_cap = std::max(file_cap / block * block, block);
    // Allocate first (untimed), as fio does by default: what is measured is writing to the device,
    // not the file system finding free space (which on a fresh tmpfs under memory pressure costs
    // more than the copy). File systems without fallocate simply allocate while writing.
    // (Not on btrfs: copy-on-write allocates on every overwrite anyway.)
    if (!cow_ && fallocate(direct_file_.fd(), 0, 0, static_cast<off_t>(file_cap)) != 0 &&
        errno != EOPNOTSUPP)
        io_error("cannot allocate", path());
    Throughput r;
    r.block = block;
    std::uint64_t offset = 0;
    if (queue_depth > 1) {
        // Only what was written counts as file: reads of allocated but unwritten extents never
        // reach the device.
        const Stream s = uring_stream(
            StreamOps::writes, block, queue_depth,
            [&] {
                if (offset + block > file_cap) offset = 0;
                const std::uint64_t at = offset;
                offset += block;
                file_size_ = std::max(file_size_, offset);
                return at;
            },
            limits);
        if (!s.engine.empty()) {
            r.queue_depth = queue_depth;
            r.engine = s.engine;
            r.ios = s.ios;
            r.bytes = s.ios * block;
            r.seconds = s.seconds;
            r.bytes_per_second = s.ios_per_second * static_cast<double>(block);
            return r;
        }
        offset = 0;
    }
    const int fd = write_fd_for(block);
    std::vector<double> completions;
    const double start = now_seconds();
    run_box(limits, [&](std::uint64_t) {
        buffer_.scramble(0, block, ++writes_);
        write_fully(fd, buffer_.data(), block, offset, path());
        completions.push_back(now_seconds());
        offset += block;
        file_size_ = std::max(file_size_, offset);
        if (offset >= file_cap) offset = 0;
        r.bytes += block;
        ++r.ios;
    });
    r.seconds = now_seconds() - start;
    r.bytes_per_second = steady_rate(completions, start, static_cast<double>(block));
    return r;
}

Throughput MountIo::sequential_read(std::uint64_t block, const PhaseLimits& limits,
                                    unsigned queue_depth) {
    block =
        std::min<std::uint64_t>({block, buffer_.size() / std::max(queue_depth, 1u), file_size_});
    if (block == 0) throw std::logic_error("sequential_read before sequential_write");
    drop_cache();
    Throughput r;
    r.block = block;
    std::uint64_t offset = 0;
    if (queue_depth > 1 && method_.direct && file_size_ >= queue_depth * block) {
        const Stream s = uring_stream(
            StreamOps::reads, block, queue_depth,
            [&] {
                if (offset + block > file_size_) offset = 0;
                const std::uint64_t at = offset;
                offset += block;
                return at;
            },
            limits);
        if (!s.engine.empty()) {
            r.queue_depth = queue_depth;
            r.engine = s.engine;
            r.ios = s.ios;
            r.bytes = s.ios * block;
            r.seconds = s.seconds;
            r.bytes_per_second = s.ios_per_second * static_cast<double>(block);
            return r;
        }
        offset = 0;
    }
    const int fd = method_.direct ? direct_file_.fd() : sync_fd_;
    std::vector<double> completions;
    const double start = now_seconds();
    run_box(limits, [&](std::uint64_t) {
        if (offset + block > file_size_) {
            offset = 0;
            drop_cache();
        }
        read_fully(fd, buffer_.data(), block, offset, path());
        completions.push_back(now_seconds());
        offset += block;
        r.bytes += block;
        ++r.ios;
    });
    r.seconds = now_seconds() - start;
    r.bytes_per_second = steady_rate(completions, start, static_cast<double>(block));
    return r;
}

Latencies MountIo::latency(bool write, bool random, std::uint64_t block,
                           const PhaseLimits& limits) {
    Latencies r;
    r.block = block;
    const std::uint64_t slots = file_size_ / block;
    if (slots == 0) throw std::logic_error("latency before sequential_write");
    if (!write) drop_cache();
    const int fd = write ? write_fd_for(block) : (method_.direct ? direct_file_.fd() : sync_fd_);
    std::uint64_t next = random_.below(slots);
    run_box(limits, [&](std::uint64_t) {
        const std::uint64_t offset = (random ? random_.below(slots) : next++ % slots) * block;
        const double t0 = now_seconds();
        if (write) {
            buffer_.scramble(0, block, ++writes_);
            write_fully(fd, buffer_.data(), block, offset, path());
        } else
            read_fully(fd, buffer_.data(), block, offset, path());
        r.samples.push_back(now_seconds() - t0);
    });
    r.summarize();
    return r;
}

SweepPoint MountIo::sweep_point(std::uint64_t chunk, const PhaseLimits& limits) {
    if (chunk > buffer_.size())
        throw std::invalid_argument("sweep chunk larger than the IO buffer");
    // Writes continue where the previous point stopped, wrapping within the file written so far
    // (or one chunk, if that is larger): overwrites, so block allocation is not part of the cost.
    const std::uint64_t region = std::max(file_size_, chunk);
    const int fd = write_fd_for(chunk);
    if (!method_.direct) drop_cache();
    SweepPoint p;
    p.chunk = chunk;
    const double start = now_seconds();
    run_box(limits, [&](std::uint64_t) {
        if (sweep_offset_ + chunk > region) sweep_offset_ = 0;
        buffer_.scramble(0, chunk, ++writes_);
        write_fully(fd, buffer_.data(), chunk, sweep_offset_, path());
        sweep_offset_ += chunk;
        ++p.ios;
    });
    p.seconds = now_seconds() - start;
    file_size_ = std::max(file_size_, region);
    return p;
}

} // namespace iosig::calibrate
