// Reliability model of the IOSIG paper ("Deriving MTTDL of Storage Systems"):
//   Eq. 1  UBER = sum_{n=E+1}^{N} C(N,n) BER^n (1-BER)^(N-n) / (N-E)
//   Eq. 2  MTTDL = mu^m / ( d(d-1)...(d-m) lambda^m (lambda + h mu) ),  d = n+m, h = size*UBER
// with replication as n = 1, m = k-1, RAID levels mapped onto it, and the paper's rule that a file
// on a single unprotected device is not considered reliable. Mapping and derivations:
// docs/selection.md.
#pragma once

#include "iosig/node.hpp"
#include "iosig/units.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace iosig {

// Reliability figures assumed for a device whose config gives none (docs/selection.md, "Defaults"):
// the paper's MTTF of 10 years per device and repair time of one day; a raw BER of 1e-14, which
// with the default ECC (none) is the unrecoverable error rate manufacturers quote.
inline constexpr double default_mttf = 10 * seconds_per_year;
inline constexpr double default_mttr = 24 * 3600.0;
inline constexpr double default_ber = 1e-14;

// Eq. 1, computed in log space so that tiny BERs (1e-15) and large N (4096) neither underflow nor
// lose precision. `sector_bits` = N, `correctable_bits` = E (E < N).
double uber(double ber, unsigned sector_bits, unsigned correctable_bits);

// Eq. 2 for an MDS code of `data_units` (n) + `parity_units` (m) devices. Times in seconds;
// `file_bits` * uber = h. Returns seconds.
double mttdl_mds(unsigned data_units, unsigned parity_units, double mttf, double mttr,
                 double file_bits, double uber_per_bit);

struct MttdlEstimate {
    double seconds =
        0; // +inf: no failure mode modelled (documented); 0: not reliable (single disk)
    std::string
        basis; // how it was obtained, for explanations ("raid1 of 2 x ssd, Eq. 2 with n=1 m=1")
};

// MTTDL of a file of `file_size` bytes on `mount` (its device structure, members' MTTF/BER/MTTR,
// the file system's ECC). Missing reliability figures fall back to documented defaults, stated in
// `basis`.
MttdlEstimate mount_mttdl(const Node& node, const Mount& mount, std::uint64_t file_size);

// The reliability model of one mount, prepared once per node: how its device maps onto Eq. 2 (or
// that it is not reliable, or its stated MTTDL), with the figures and the UBER that apply.
// mount_mttdl() is prepare_mount_reliability(node, mount) evaluated for one file size; a selector
// that evaluates many signatures against one node prepares each mount once.
struct MountReliability {
    enum class Kind : std::uint8_t { not_reliable, stated, eq2 };
    Kind kind = Kind::not_reliable;
    unsigned data_units = 0;   // n   (eq2)
    unsigned parity_units = 0; // m   (eq2)
    unsigned groups = 1;       // independent n+m groups the file is spread over (RAID10 pairs)
    double mttf = 0, mttr = 0; // s   (eq2)
    double uber_per_bit = 0;   //     (eq2)
    double stated_mttdl = 0;   // s   (stated)
    std::string basis;         // as MttdlEstimate::basis

    double mttdl(std::uint64_t file_size) const; // seconds; 0 when not reliable
};

MountReliability prepare_mount_reliability(const Node& node, const Mount& mount);

// Probability of losing the data within `lifetime` seconds: the exponential CDF 1 - exp(-t/MTTDL).
double loss_probability(double mttdl_seconds, double lifetime_seconds);

} // namespace iosig
