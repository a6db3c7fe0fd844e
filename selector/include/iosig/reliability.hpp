// Reliability model of the IOSIG paper ("Deriving MTTDL of Storage Systems"):
//   Eq. 1  UBER = sum_{n=E+1}^{N} C(N,n) BER^n (1-BER)^(N-n) / (N-E)
//   Eq. 2  MTTDL = mu^m / ( d(d-1)...(d-m) lambda^m (lambda + h mu) ),  d = n+m, h = size*UBER
// with replication as n = 1, m = k-1, RAID levels mapped onto it, and the paper's rule that a file on a
// single unprotected device is not considered reliable. Mapping and derivations: docs/selection.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "iosig/node.hpp"

namespace iosig {

// Eq. 1, computed in log space so that tiny BERs (1e-15) and large N (4096) neither underflow nor lose
// precision. `sector_bits` = N, `correctable_bits` = E (E < N).
double uber(double ber, unsigned sector_bits, unsigned correctable_bits);

// Eq. 2 for an MDS code of `data_units` (n) + `parity_units` (m) devices. Times in seconds;
// `file_bits` * uber = h. Returns seconds.
double mttdl_mds(unsigned data_units, unsigned parity_units, double mttf, double mttr,
                 double file_bits, double uber_per_bit);

struct MttdlEstimate {
    double seconds = 0;  // +inf: no failure mode modelled (documented); 0: not reliable (single disk)
    std::string basis;   // how it was obtained, for explanations ("raid1 of 2 x ssd, Eq. 2 with n=1 m=1")
};

// MTTDL of a file of `file_size` bytes on `mount` (its device structure, members' MTTF/BER/MTTR, the
// file system's ECC). Missing reliability figures fall back to documented defaults, stated in `basis`.
MttdlEstimate mount_mttdl(const Node& node, const Mount& mount, std::uint64_t file_size);

// Probability of losing the data within `lifetime` seconds: the exponential CDF 1 - exp(-t/MTTDL).
double loss_probability(double mttdl_seconds, double lifetime_seconds);

} // namespace iosig
