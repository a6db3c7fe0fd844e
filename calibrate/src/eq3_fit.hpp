// Fitting the IOSIG throughput model (Eq. 3, selector/include/iosig/throughput.hpp) to a chunk-size
// sweep of synchronous writes:
//
//   time per IO  T(ds) = max( l + ceil(ds/cs)*cs / wbw + d*cs / rbw ,  (1+d) / max_iops )
//
// For a fixed chunk cs the first term is linear in (l, 1/wbw, 1/rbw): weighted non-negative least
// squares with weights 1/T^2 (so every chunk size counts by its relative error), refitted without
// points whose log residual is an outlier (robust z-score > 3: a disturbed measurement). max_iops
// is the device's measured IOPS limit; points it binds are predicted by it and left out of the
// linear fit. cs is searched over candidates (multiples of 512 B, so non-power-of-two block sizes
// such as 22 KiB are found); the file system's own block size is kept unless another fits clearly
// better.
#pragma once

#include "iosig/throughput.hpp"

#include <cstdint>
#include <vector>

namespace iosig::calibrate {

struct SweepSample {
    std::uint64_t chunk = 0;   // ds, bytes per write
    double seconds_per_io = 0; // measured mean
};

struct Eq3Fit {
    Eq3Parameters parameters; // read_bw == 0: no read-modify-write penalty was measurable
    double median_relative_error =
        0; // |predicted - measured| / measured throughput, median over samples
    double max_relative_error = 0;
    std::uint64_t reference_chunk = 0; // max(page size, fs block size): the core's default cs
    double reference_error = 0;        // median relative error with cs = reference_chunk
    // The same over the chunks up to block_effect_limit, where the block size shows.
    double small_chunk_error = 0;
    double reference_small_chunk_error = 0;
    bool chunk_detected = false;              // true when the fitted cs differs from the reference
    std::vector<double> predicted_throughput; // per sample, B/s
};

struct Eq3FitOptions {
    std::uint64_t reference_chunk = 4096;
    double max_iops = 0;     // measured IOPS limit (0: none)
    bool fine_search = true; // every multiple of 512 B up to 64 KiB, else powers of two only
    // A candidate cs replaces the reference only if its score (trimmed mean of squared relative
    // errors) is below this fraction of the reference's.
    double adopt_threshold = 0.5;
    // ... and its mean relative error over the chunks up to block_effect_limit (beyond which any
    // block size explains the data) is lower by at least this much (absolute).
    double adopt_min_gain = 0.03;
    std::uint64_t block_effect_limit = 128 << 10;
    // The device is behind a blk-throttle limit (calibrate found one in its cgroup). The limit's
    // slices let a burst above max_iops through within a sweep point as short as the sweep's
    // (~0.1 s, one slice), so max_iops holds even where a point beats it; and under the limit
    // every IO up to the bytes budget's size costs 1 / max_iops whatever its block alignment, so
    // the reference chunk is kept (on the lab's hdd an uncapped fit took the IOPS limit for a
    // 3 ms latency, and one run "detected" 128 KiB blocks).
    bool throttled = false;
};

// Throws std::invalid_argument with fewer than 4 samples.
Eq3Fit fit_eq3(const std::vector<SweepSample>& samples, const Eq3FitOptions& options);

// T(ds) of the model above: the inverse of the core's Eq. 3 throughput per byte.
double eq3_seconds_per_io(const Eq3Parameters& parameters, std::uint64_t size_per_io);

} // namespace iosig::calibrate
