// The IOSIG throughput model, Eq. 3 of the paper ("Matching Demand and Resources"):
//
//   t = min( 1 / (l + ceil(ds/cs)*cs/wbw + d*cs/rbw),  max_iops/(d+1) ) * ds
//
// ds = size-per-IO, cs = max(page size, fs block size), d = (ds % cs != 0), l = operation latency
// (+ seek latency for random IO on rotational media), wbw/rbw = write/read bandwidth of the
// pattern. The cap is divided by d+1 because the read-modify-write's read takes an IO from the same
// budget as the write; a device whose reads and writes are limited separately
// (Performance::independent_read_write: a blkio or io.max throttle, a cloud volume with separate
// caps) keeps the whole cap for the writes.
#pragma once

#include "iosig/node.hpp"
#include "iosig/signature.hpp"

#include <cstdint>

namespace iosig {

struct Eq3Parameters {
    double latency = 0;  // l, seconds
    double write_bw = 0; // wbw, B/s
    double read_bw = 0;  // rbw, B/s
    double max_iops = 0; // 0: no cap
    // Reads and writes have separate IOPS budgets: the read of a read-modify-write does not halve
    // the cap.
    bool independent_read_write = false;
    std::uint64_t chunk = 4096; // cs, bytes
};

// Eq. 3 throughput in bytes per second for IOs of `size_per_io` bytes (> 0).
double eq3_throughput(const Eq3Parameters& parameters, std::uint64_t size_per_io);

// The Eq. 3 parameters of `mount` for a stream with this access pattern (unspecified = sequential).
Eq3Parameters eq3_parameters(const Node& node, const Mount& mount, AccessPattern pattern);

// size-per-IO assumed when a signature does not give one (docs/selection.md).
inline constexpr std::uint64_t default_size_per_io = 1 << 20;

} // namespace iosig
