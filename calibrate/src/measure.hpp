// The per-mount measurements of `iosig-calibrate`, each time-boxed: sequential bandwidth, QD1
// latency, random 4 KiB IOPS at queue depth 32 (io_uring), and the chunk-size sweep of synchronous
// writes that Eq. 3 is fitted to. IO goes through O_DIRECT where the file system supports it, else
// through O_DSYNC writes and page-cache-dropped reads. Only scratch files are touched.
#pragma once

#include "eq3_fit.hpp"
#include "io_buffer.hpp"
#include "scratch.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace iosig::calibrate {

inline constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB;

struct Throughput {
    double bytes_per_second = 0;
    std::uint64_t bytes = 0;
    std::uint64_t ios = 0;
    double seconds = 0;
    std::uint64_t block = 0;
    unsigned queue_depth = 1;
    std::string engine = "psync"; // or "io_uring" (queue depth > 1)
};

struct Latencies {
    std::vector<double> samples; // seconds, in the order measured
    double p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0, mean = 0;
    std::uint64_t block = 0;
    void summarize();
};

struct Iops {
    double iops = 0;
    std::uint64_t ios = 0;
    double seconds = 0;
    unsigned queue_depth = 0;
    std::uint64_t block = 0;
    std::string engine; // "io_uring", or "psync" when io_uring is unavailable
};

// Random reads and writes in one queue. On a device that serves both from one medium, each
// direction's share of its own solo rate adds up to about 1 (utilisation); on one that limits
// reads and writes separately (a blkio throttle, cloud volumes), to about 2.
struct MixedIops {
    double read_iops = 0, write_iops = 0;
    std::uint64_t ios = 0;
    double seconds = 0;
    unsigned queue_depth = 0;
    std::uint64_t block = 0;
    std::string engine;
};

// How much of their solo rates both directions got at once: read_iops / reads.iops + write_iops /
// writes.iops; 0 when a rate is missing. About 1 on one medium, about 2 with separate limits.
double read_write_utilisation(const MixedIops& mixed, const Iops& reads, const Iops& writes);
// Utilisation from which a device counts as limiting reads and writes separately (halfway).
constexpr double independent_read_write_utilisation = 1.5;

struct SweepPoint {
    std::uint64_t chunk = 0;
    std::uint64_t ios = 0;
    double seconds = 0; // total
    double seconds_per_io() const { return ios ? seconds / static_cast<double>(ios) : 0; }
    double bytes_per_second() const {
        return seconds > 0 ? static_cast<double>(chunk * ios) / seconds : 0;
    }
};

// How IO reaches the device on one mount.
struct IoMethod {
    bool direct = false;          // O_DIRECT accepted
    unsigned alignment = 0;       // O_DIRECT offset/size alignment (bytes)
    std::string alignment_source; // "statx", "btrfs sector size", "tmpfs", "fs block size"
};

// A time box for one phase. `report` gets the fraction of the box used so far (for progress bars).
struct PhaseLimits {
    double seconds = 1;
    std::uint64_t min_ios = 3;
    std::uint64_t max_ios = UINT64_MAX;
    std::function<void(double)> report;
};

// The scratch file of one mount and everything needed to do IO on it.
class MountIo {
public:
    MountIo(const std::string& directory, const std::string& fs_type, unsigned btrfs_sector_size,
            int numa_node);
    ~MountIo();
    MountIo(const MountIo&) = delete;
    MountIo& operator=(const MountIo&) = delete;

    const IoMethod& method() const { return method_; }
    std::uint64_t file_size() const { return file_size_; }
    const std::string& path() const { return direct_file_.path(); }
    // The IO buffer's physically contiguous share (IoBuffer::contiguous_share), for diagnostics.
    std::optional<double> buffer_contiguity() const { return buffer_.contiguous_share(); }

    // Queue depth > 1 goes through io_uring (a few large IOs in flight keep a device streaming, as
    // the kernel's own readahead and writeback do); 1 is plain pwrite/pread.
    Throughput sequential_write(std::uint64_t block, std::uint64_t file_cap,
                                const PhaseLimits& limits, unsigned queue_depth = 1);
    Throughput sequential_read(std::uint64_t block, const PhaseLimits& limits,
                               unsigned queue_depth = 1);
    // QD1 latencies of `block`-sized IOs at random aligned offsets (or consecutive ones).
    Latencies latency(bool write, bool random, std::uint64_t block, const PhaseLimits& limits);
    Iops random_iops(bool write, std::uint64_t block, unsigned queue_depth,
                     const PhaseLimits& limits);
    // Random reads and writes at once, half of the queue each: what each direction gets while the
    // other runs (MixedIops). Empty `engine` when io_uring is unavailable (nothing was measured).
    MixedIops mixed_iops(std::uint64_t block, unsigned queue_depth, const PhaseLimits& limits);
    // Consecutive synchronous writes of `chunk` bytes (O_DIRECT: `chunk` must be a multiple of the
    // alignment, see sweep_chunks).
    SweepPoint sweep_point(std::uint64_t chunk, const PhaseLimits& limits);

private:
    struct Stream {
        std::uint64_t ios = 0;
        double seconds = 0;
        double ios_per_second = 0;                         // after the ramp, before the drain
        std::uint64_t steady_reads = 0, steady_writes = 0; // completions in that window
        std::string engine;
    };
    // Reads, writes, or both: even slots of the queue read, odd ones write.
    enum class StreamOps { reads, writes, alternating };
    // `queue_depth` IOs of `block` bytes in flight through io_uring at the offsets `next_offset`
    // gives; empty `engine` when io_uring is unavailable (nothing was done).
    Stream uring_stream(StreamOps ops, std::uint64_t block, unsigned queue_depth,
                        const std::function<std::uint64_t()>& next_offset,
                        const PhaseLimits& limits);
    int write_fd_for(std::uint64_t size) const;
    void drop_cache();

    IoMethod method_;
    ScratchFile direct_file_;
    int sync_fd_ = -1; // O_DSYNC descriptor on the same file
    IoBuffer buffer_;
    std::uint64_t writes_ = 0; // every write's content differs (IoBuffer::scramble)
    Random random_;
    std::uint64_t file_size_ = 0;
    std::uint64_t sweep_offset_ = 0;
    bool cow_ = false;               // copy-on-write file system
    std::string unavailable_reason_; // why io_uring could not be set up
};

// Sweep chunk sizes 512 B .. `largest` (64 MiB). Full: powers of two and 1.5x powers of two, plus
// every 2 KiB up to 64 KiB so that non-power-of-two block sizes show their steps. Quick: powers of
// four and a few sizes around the page. Only multiples of `alignment` (O_DIRECT).
std::vector<std::uint64_t> sweep_chunks(bool full, std::uint64_t largest, std::uint64_t alignment);

double now_seconds();

} // namespace iosig::calibrate
