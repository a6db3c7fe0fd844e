// Eq. 2 (direct + sync) and Eq. 3-4 (sync through the page cache) of paper 001.
#include "iosig/cachesim/sync_cost.hpp"

#include <algorithm>
#include <cmath>

namespace iosig::cachesim {

double direct_sync_write_cost(const ModelParameters& p, double size, bool random) {
    const double device = p.direct_write_curve.empty()
                              ? p.direct_write_base + size / p.device_write_bw
                              : p.direct_write_curve.cost(size);
    return device + (random ? p.seek_latency : 0.0);
}

double direct_sync_total_cost(const ModelParameters& p, std::span<const double> sizes,
                              std::span<const bool> random) {
    double total = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i)
        total += direct_sync_write_cost(p, sizes[i], i < random.size() && random[i]);
    return total;
}

double sync_write_cost(const ModelParameters& p, double size, bool random,
                       bool read_partial_block) {
    const double b = p.block_size;
    const double whole = std::floor(size / b) * b; // s_b
    const double rest = size - whole;              // s_r
    double cost = 0;
    if (p.sync_write_curve.empty()) {
        cost = p.sync_write_syscall_base + size * p.sync_copy_per_byte + whole / p.device_write_bw;
        if (rest > 0) cost += b / p.device_write_bw;
    } else {
        // The curve was measured with whole blocks: a partial last block is written whole.
        cost = p.sync_write_curve.cost(whole + (rest > 0 ? b : 0.0));
    }
    if (rest > 0 && read_partial_block) cost += b / p.device_read_bw;
    if (random) cost += p.seek_latency;
    return cost;
}

double sync_total_cost(const ModelParameters& p, std::span<const double> sizes,
                       std::span<const bool> random) {
    double total = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i)
        total += sync_write_cost(p, sizes[i], i < random.size() && random[i], true);
    return total;
}

double quantize_completion(double cost, double quantum) {
    if (quantum <= 0) return cost;
    return std::max(1.0, std::ceil(cost / quantum - 0.05)) * quantum;
}

SyncWriteSequence::SyncWriteSequence(const ModelParameters& p, bool direct,
                                     std::uint64_t existing_file_size)
    : p_(p), direct_(direct), existing_size_(existing_file_size) {}

double SyncWriteSequence::write(std::uint64_t offset, std::uint64_t size) {
    const bool random = !first_ && offset != next_offset_;
    first_ = false;
    next_offset_ = offset + size;
    const double s = static_cast<double>(size);
    if (direct_)
        return quantize_completion(direct_sync_write_cost(p_, s, random),
                                   p_.sync_completion_quantum);
    // The partial last block holds old data only inside the file's previous extent; what this
    // sequence wrote itself stays in the page cache (ignoring reclaim), so only blocks beyond the
    // highest offset written so far and below the old size need a read.
    const auto block = static_cast<std::uint64_t>(p_.block_size);
    const std::uint64_t last_block_start = (offset + size - 1) / block * block;
    const bool read = last_block_start < existing_size_ && last_block_start >= written_high_;
    written_high_ = std::max(written_high_, offset + size);
    return quantize_completion(sync_write_cost(p_, s, random, read), p_.sync_completion_quantum);
}

} // namespace iosig::cachesim
