// Synchronous writes (paper 001, Sect. 4.2-4.3): no page-cache dynamics, closed forms.
#pragma once

#include "iosig/cachesim/parameters.hpp"

#include <cstdint>
#include <span>

namespace iosig::cachesim {

// One term of Eq. 2: an O_DIRECT|O_SYNC write of `size` bytes,
//   L_sync + size / B_dev + [random] * L_seek     (L_sync = ModelParameters::direct_write_base),
// with the measured direct_write_curve(size) in place of the first two terms when there is one.
double direct_sync_write_cost(const ModelParameters& p, double size, bool random);

// Eq. 2 summed over n chunks of total size S:
//   n * L_sync + S / B_dev + n_random * L_seek.
double direct_sync_total_cost(const ModelParameters& p, std::span<const double> sizes,
                              std::span<const bool> random);

// Eq. 3: an O_SYNC write through the page cache. The whole blocks s_b = floor(s / B) * B go to the
// device; a remainder s_r = s - s_b > 0 costs a block read (only when `read_partial_block`: the
// block holds data that is not in the page cache) and a whole-block write:
//   L_sync + s * c_copy + s_b / B_dev + [s_r > 0] * ([read] * B / B_read + B / B_dev) + [random] *
//   L_seek
// With a measured sync_write_curve, curve(s_b + [s_r > 0] * B) stands for L_sync + s * c_copy +
// s_b / B_dev + [s_r > 0] * B / B_dev (the write rounded up to whole blocks, as the device sees
// it).
double sync_write_cost(const ModelParameters& p, double size, bool random, bool read_partial_block);

// Eq. 4: the sum of Eq. 3 over the chunks (the paper's form reads every partial block).
double sync_total_cost(const ModelParameters& p, std::span<const double> sizes,
                       std::span<const bool> random);

// A synchronous write's cost on a platform whose completions arrive on ticks of `quantum` seconds:
// the next tick at or after the continuous cost (a few percent of slack for timer jitter). This VM
// completes O_SYNC writes on 4 ms ticks. quantum <= 0 leaves the cost unchanged.
double quantize_completion(double cost, double quantum);

// Eq. 2 or Eq. 3 applied to a sequence of writes to one file, completion ticks included. Eq. 3's
// read of a partial block happens only when the file held data there before (`existing_file_size`)
// that the sequence has not rewritten yet (tracked as the highest offset written: exact for
// sequential writes); new files and appends never read.
class SyncWriteSequence {
public:
    SyncWriteSequence(const ModelParameters& p, bool direct, std::uint64_t existing_file_size = 0);

    // Cost of the next write; `random` when it does not start where the previous one ended.
    double write(std::uint64_t offset, std::uint64_t size);

private:
    const ModelParameters& p_;
    bool direct_;
    std::uint64_t existing_size_;
    std::uint64_t next_offset_ = 0;
    std::uint64_t written_high_ = 0;
    bool first_ = true;
};

} // namespace iosig::cachesim
