// CAWL's system parameters (seeds/001, Sect. 4 and 6.1): memory bandwidth, page-cache write
// bandwidth with and without background flushing, write() and O_SYNC write() costs, dirty
// thresholds, expire and writeback intervals, the stdio buffer size and the page size. Costs come
// from linear regression of per-size median times over many sizes and repetitions, never from the
// difference of two timings.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace iosig::calibrate {

struct CostRegression {
    double base = 0;     // s, intercept
    double per_byte = 0; // s/B, slope
    double r_squared = 0;
    std::size_t samples = 0;                              // timed calls
    std::vector<std::pair<std::uint64_t, double>> points; // (size, median seconds)
    bool ok = false; // fitted over at least 3 sizes (the slope may still be <= 0: see below)
};

// A slope <= 0 means the size dependence is below the timing noise (O_SYNC writes of 512 B and
// 4 MiB both waiting ~10 ms for a journal commit on a busy disk): per-byte costs are then written
// as 0 with a note, and a bandwidth (1/slope) is not written at all.
struct SystemMeasurements {
    std::string page_cache_directory; // where the page-cache and syscall measurements ran
    CostRegression memcpy_cost;       // -> memory_bw
    CostRegression buffered_small;    // -> write_syscall_base, write_syscall_per_byte
    CostRegression buffered_large;    // -> page_cache_write_bw
    CostRegression buffered_flushing; // -> page_cache_write_bw_flushing
    CostRegression sync_small;        // -> sync_write_syscall_base, sync_write_syscall_per_byte

    // Read from /proc and libc.
    std::uint64_t page_size = 4096;
    std::optional<double> dirty_ratio, dirty_background_ratio;
    std::optional<std::uint64_t> dirty_bytes, dirty_background_bytes;
    std::optional<std::uint64_t> dirty_threshold_pages,
        dirty_background_threshold_pages; // /proc/vmstat
    std::optional<std::uint64_t> dirtyable_memory;
    std::optional<double> dirty_expire, dirty_writeback_interval;
    std::optional<std::uint64_t> stdio_buffer_size;
    std::vector<std::string> notes;
    double seconds = 0;
};

struct SystemOptions {
    std::string page_cache_directory; // empty: the page-cache measurements are skipped
    double seconds = 6;               // time box for all regressions together
    bool quick = true;
    // Sequential write bandwidth measured on that directory's device (0: unknown). On a slow
    // device the write-back phase uses fewer, smaller writes, so that it keeps to its time box.
    double device_write_bw = 0;
    std::function<void(const std::string& phase, double fraction)> report;
};

SystemMeasurements measure_system(const SystemOptions& options);

// The kernel and libc values only (no timing): /proc/sys/vm, /proc/vmstat, sysconf, __fbufsize.
void read_system_settings(SystemMeasurements& out, const std::string& directory);

} // namespace iosig::calibrate
