// The node model of the IOSIG paper ("Characterizing Storage Capabilities", its Fig. 4): mount
// points on block devices that are simple, complex or partitions, plus the node-wide parameters the
// CAWL write-cost model needs. Loaded from YAML by node_yaml.hpp; schema in docs/config.md.
//
// All quantities are SI base units: bytes, seconds, bytes per second, operations per second.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace iosig {

// Where a value came from (docs/config.md, "Provenance"). Written as a YAML tag: `!measured
// 512M/s`.
enum class Provenance : std::uint8_t { unknown, measured, derived, detected, defaulted, user };

// A location in a config file, for error messages that name file:line:col.
struct SourceLocation {
    std::string file;
    int line = 0;   // 1-based; 0 when unknown
    int column = 0; // 1-based

    friend bool operator==(const SourceLocation&, const SourceLocation&) = default;
};

enum class DeviceStructure : std::uint8_t { simple, complex, partition };
enum class MediaKind : std::uint8_t { ram, nvram, ssd, hdd, network };

// How a complex device protects (or stripes) its members' data.
enum class RedundancyScheme : std::uint8_t {
    none, // simple devices and partitions
    raid0,
    raid1, // mirroring over all members
    raid5,
    raid6,
    raid10,
    replication, // k-way replication (k = replicas)
    erasure,     // MDS n+m code (data_units = n, parity_units = m)
    opaque,      // e.g. a network FS whose MTTDL is given/measured, not derived from members
};

// Throughput-relevant figures of a device as seen through its mount (Eq. 3 inputs).
struct Performance {
    double seq_read_bw = 0;   // B/s
    double seq_write_bw = 0;  // B/s
    double rand_read_bw = 0;  // B/s (0: use seq_read_bw)
    double rand_write_bw = 0; // B/s (0: use seq_write_bw)
    double op_latency = 0;    // s, per IO call (OS + device + network)
    double seek_latency = 0;  // s, added only for random IO on rotational media
    double max_iops = 0;      // ops/s (0: no cap)
    // Reads and writes are limited separately (a blkio/io.max throttle, cloud volumes with separate
    // read and write IOPS caps), so a mix of both takes as long as the busier direction, not the
    // sum. false: one medium serves both (a disk arm, a flash channel).
    bool independent_read_write = false;
    // s: the rates above are a Linux blk-throttle limit (cgroup v1 blkio.throttle.*, v2 io.max)
    // that grants its budget a time slice of this length at a time: a slice's worth of IOs goes
    // through at once, the next waits for the next slice (100 ms; 20 ms for non-rotational queues
    // on Linux 6.10 up to 6.19; iosig-calibrate detects it, docs/calibrate.md). 0: the rates hold
    // IO by IO.
    double throttle_slice = 0;
    // The rates are a blk-throttle limit with an IOPS budget. Such a limit is blind to the pattern
    // and adds no latency of its own: every IO is charged against the IOPS budget and the bytes
    // budget (the sequential bandwidth). A random bandwidth or an op latency the node file still
    // gives such a device measures the limit again (iosig-calibrate's Eq. 3 fit finds one in the
    // limit's pacing of a slice's IOs), so Eq. 3 and the tier's queueing model charge neither.
    bool is_throttle() const { return throttle_slice > 0 && max_iops > 0; }
    // Bytes the kernel reads ahead of a sequential reader of a file here through the page cache
    // (the queue's read_ahead_kb; 0: none), and the largest IO the queue issues (max_sectors_kb):
    // what reads past the tier's cache cost (the sequential bypass; tier/readahead_model.hpp).
    // Unset: unknown (the tier then asks the running kernel, or assumes 128 KiB and 1,280 KiB).
    std::optional<std::uint64_t> read_ahead = std::nullopt;
    std::optional<std::uint64_t> max_io = std::nullopt;

    friend bool operator==(const Performance&, const Performance&) = default;
};

struct ReliabilityFigures {
    std::optional<double> mttf; // s
    std::optional<double> ber;  // raw bit error rate, e.g. 1e-6
    std::optional<double> mttr; // s

    friend bool operator==(const ReliabilityFigures&, const ReliabilityFigures&) = default;
};

struct Device {
    std::string name; // key in the YAML `devices:` map; referenced by mounts and complex devices
    DeviceStructure structure = DeviceStructure::simple;
    MediaKind media = MediaKind::ssd; // simple: the medium; complex: the members' dominant medium
    std::string dev_path;             // /dev/..., informational
    bool rotational = false;
    std::uint64_t capacity = 0; // bytes
    Performance performance;
    ReliabilityFigures reliability;

    // complex
    RedundancyScheme scheme = RedundancyScheme::none;
    std::vector<std::string> members; // device names
    unsigned replicas = 0;            // replication: k
    unsigned data_units = 0;          // erasure: n
    unsigned parity_units = 0;        // erasure: m
    std::optional<double> mttdl;      // opaque: the MTTDL stated for the whole device (s)

    // partition
    std::string owner; // the device this is a partition of (never itself a partition)

    // The `calibration:` map as YAML text: free-form, preserved by load and to_yaml, not
    // interpreted.
    std::string calibration_yaml;

    SourceLocation where;

    // Compares `where` too: clear it on both sides to compare models read from different files.
    friend bool operator==(const Device&, const Device&) = default;
};

// The file system's ECC: up to `correctable_bits` bit errors per `sector_bits`-bit sector are
// fixed.
struct Ecc {
    unsigned correctable_bits = 0;
    unsigned sector_bits = 4096;

    friend bool operator==(const Ecc&, const Ecc&) = default;
};

struct Mount {
    std::string path;    // absolute mount point (or directory) IO can be redirected to
    std::string fs_type; // ext4, btrfs, tmpfs, nfs, ...
    std::string device;  // name of the Device it lives on
    std::vector<std::string> labels;
    bool global = false;          // visible identically from every node of the job
    bool is_volatile = false;     // contents lost on reboot/power loss (ramdisk)
    bool archive = false;         // suited to archival data
    bool tamperproof = false;     // protects data against alteration
    std::uint64_t capacity = 0;   // bytes (0: the device's capacity)
    std::uint64_t free_space = 0; // bytes available to the user (0: unknown -> capacity)
    std::uint64_t block_size = 4096;
    std::uint64_t max_file_size = 0; // bytes (0: no limit)
    Ecc ecc;
    std::string calibration_yaml; // as Device::calibration_yaml
    SourceLocation where;

    friend bool operator==(const Mount&, const Mount&) = default;
};

// CAWL's system parameters (page cache, dirty thresholds, syscall and libc costs). Optional until
// the calibrator measures them; cachesim/ says which ones it needs.
struct SystemParameters {
    std::optional<double> memory_bw;                    // B/s, memcpy-like
    std::optional<double> page_cache_write_bw;          // B/s, buffered write into the page cache
    std::optional<double> page_cache_write_bw_flushing; // B/s, the same while background flush runs
    std::optional<double> page_cache_rewrite_bw; // B/s, write() into pages already in the cache
                                                 // (just written: still in the CPU cache)
    std::optional<double> page_cache_rewrite_bw_cold; // B/s, the same long after they were written
    std::optional<double> rewrite_cooling_time;    // s, e-folding time from the first to the second
    std::optional<double> write_syscall_base;      // s, fixed cost of one write() syscall
    std::optional<double> write_syscall_cold_base; // s, the same long after the previous call
    std::optional<double> call_cooling_time;       // s, e-folding time from the first to the second
    std::optional<double> write_syscall_per_byte;  // s/B, its size-proportional part
    std::optional<double> sync_write_syscall_base; // s, same for O_SYNC writes
    std::optional<double> sync_write_syscall_per_byte; // s/B
    std::optional<double> dirty_ratio;                 // fraction of dirtyable memory (0..1)
    std::optional<double> dirty_background_ratio;      // fraction
    std::optional<std::uint64_t> dirty_bytes;          // bytes (overrides ratio when set)
    std::optional<std::uint64_t> dirty_background_bytes;
    std::optional<std::uint64_t> dirtyable_memory;  // bytes the ratios apply to
    std::optional<double> dirty_expire;             // s (vm.dirty_expire_centisecs / 100)
    std::optional<double> dirty_writeback_interval; // s (vm.dirty_writeback_centisecs / 100)
    std::optional<std::uint64_t> stdio_buffer_size; // bytes (__fbufsize of a fresh FILE*)

    friend bool operator==(const SystemParameters&, const SystemParameters&) = default;
};

struct Node {
    std::string name;
    std::uint64_t page_size = 4096;
    std::vector<Device> devices;
    std::vector<Mount> mounts;
    SystemParameters system;
    // Provenance of each value that had a tag, keyed by its YAML path
    // ("devices.hdd0.performance.seq_write_bw"). Mounts are keyed by path
    // ("mounts[/mnt/hdd].free"); values the loader inferred are marked too.
    std::map<std::string, Provenance> provenance;

    const Device* find_device(std::string_view name) const;
    const Mount* find_mount(std::string_view path) const;

    friend bool operator==(const Node&, const Node&) = default;
};

std::string_view to_string(MediaKind);
std::string_view to_string(RedundancyScheme);
std::string_view to_string(DeviceStructure);
std::string_view to_string(Provenance);

} // namespace iosig
