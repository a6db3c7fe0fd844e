// Eq. 1 (UBER), Eq. 2 (MTTDL of MDS codes) and the mapping of a mount's device onto them.
// Derivations, the RAID mappings and the single-device rule: docs/selection.md, "Reliability".
#include "iosig/reliability.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <vector>

namespace iosig {
namespace {

// log C(N, n). A difference of lgammas near lgamma(4097) ~ 3e4 keeps only ~12 digits, so small n
// (the common case: E is a few bits) multiply the exact ratios instead.
double log_choose(unsigned N, unsigned n) {
    const unsigned k = std::min(n, N - n);
    if (k > 64)
        return std::lgamma(N + 1.0) - std::lgamma(n + 1.0) -
               std::lgamma(static_cast<double>(N - n) + 1);
    double product = 1;
    for (unsigned i = 0; i < k; ++i)
        product *= static_cast<double>(N - i) / (i + 1);
    return std::log(product);
}

// log C(N, n) p^n (1-p)^(N-n), the binomial term of Eq. 1.
double log_binomial_term(unsigned sector_bits, unsigned n, double log_p, double log_q) {
    return log_choose(sector_bits, n) + n * log_p + (sector_bits - n) * log_q;
}

// Relative size below which further terms cannot change a double sum.
constexpr double negligible = 1e-18;

// P(X > E) for X ~ Binomial(N, p), accurate in relative terms for tiny tails (p = 1e-15) and for
// tails near 1 alike.
double binomial_upper_tail(unsigned sector_bits, unsigned correctable_bits, double p) {
    const double log_p = std::log(p);
    const double log_q = std::log1p(-p);
    const double odds = p / (1 - p);
    const unsigned first = correctable_bits + 1;
    const double N = sector_bits;
    // Terms shrink from n = E+1 upwards when the binomial's mode lies at or below E+1: sum them
    // relative to the first term (no underflow however small p is).
    if ((N - first) / (first + 1.0) * odds < 1) {
        double sum = 1, term = 1;
        for (unsigned n = first; n < sector_bits; ++n) {
            term *= (N - n) / (n + 1.0) * odds;
            sum += term;
            if (term < negligible * sum) break;
        }
        return std::exp(log_binomial_term(sector_bits, first, log_p, log_q) + std::log(sum));
    }
    // Otherwise the lower part P(X <= E) is not close to 1, so its complement is well conditioned.
    // Sum it from n = E downwards, where terms shrink.
    double sum = 1, term = 1;
    for (unsigned n = correctable_bits; n > 0; --n) {
        term *= n / (N - n + 1) / odds;
        sum += term;
        if (term < negligible * sum) break;
    }
    const double lower =
        std::exp(log_binomial_term(sector_bits, correctable_bits, log_p, log_q) + std::log(sum));
    return std::max(0.0, 1 - lower);
}

struct Figures {
    double mttf = default_mttf;
    double mttr = default_mttr;
    double ber = default_ber;
    std::vector<const char*> defaulted; // names of the figures that fell back to defaults
};

// A complex device's own figure if the config gives one (e.g. the array's rebuild time as MTTR),
// else the worst of its members' (Eq. 2 assumes identical disks; the weakest one bounds them),
// else the default.
Figures resolve_figures(const Node& node, const Device& device) {
    std::optional<double> mttf = device.reliability.mttf;
    std::optional<double> mttr = device.reliability.mttr;
    std::optional<double> ber = device.reliability.ber;
    for (const std::string& name : device.members) {
        const Device* member = node.find_device(name);
        if (member == nullptr) continue;
        const ReliabilityFigures& r = member->reliability;
        if (!device.reliability.mttf && r.mttf) mttf = mttf ? std::min(*mttf, *r.mttf) : *r.mttf;
        if (!device.reliability.mttr && r.mttr) mttr = mttr ? std::max(*mttr, *r.mttr) : *r.mttr;
        if (!device.reliability.ber && r.ber) ber = ber ? std::max(*ber, *r.ber) : *r.ber;
    }
    Figures f;
    if (mttf)
        f.mttf = *mttf;
    else
        f.defaulted.push_back("MTTF");
    if (mttr)
        f.mttr = *mttr;
    else
        f.defaulted.push_back("MTTR");
    if (ber)
        f.ber = *ber;
    else
        f.defaulted.push_back("BER");
    return f;
}

// How a redundancy scheme maps onto Eq. 2: `groups` independent MDS groups of n+m devices, the file
// spread evenly over them (only RAID10 has more than one group).
struct Eq2Mapping {
    unsigned n = 0;
    unsigned m = 0;
    unsigned groups = 1;
};

std::optional<Eq2Mapping> map_scheme(const Device& device) {
    const auto members = static_cast<unsigned>(device.members.size());
    switch (device.scheme) {
    case RedundancyScheme::raid1:
        if (members >= 2) return Eq2Mapping{1, members - 1};
        break;
    case RedundancyScheme::raid5:
        if (members >= 2) return Eq2Mapping{members - 1, 1};
        break;
    case RedundancyScheme::raid6:
        if (members >= 3) return Eq2Mapping{members - 2, 2};
        break;
    case RedundancyScheme::raid10:
        // Even: members/2 mirrored pairs, data lost when both disks of one pair fail. Odd (md's
        // near-2 layout over an odd count): every two disks share some blocks, so any second
        // failure during a rebuild loses data, as in RAID5 over all members.
        if (members >= 4 && members % 2 == 0) return Eq2Mapping{1, 1, members / 2};
        if (members >= 3) return Eq2Mapping{members - 1, 1};
        break;
    case RedundancyScheme::replication: {
        const unsigned k = device.replicas != 0 ? device.replicas : members;
        if (k >= 2) return Eq2Mapping{1, k - 1};
        break;
    }
    case RedundancyScheme::erasure:
        if (device.data_units >= 1 && device.parity_units >= 1)
            return Eq2Mapping{device.data_units, device.parity_units};
        break;
    case RedundancyScheme::none:
    case RedundancyScheme::raid0:
    case RedundancyScheme::opaque:
        break;
    }
    return std::nullopt;
}

std::string describe_members(const Node& node, const Device& device) {
    std::string media;
    if (!device.members.empty()) {
        const Device* first = node.find_device(device.members.front());
        media = first != nullptr ? std::string(to_string(first->media)) : "device";
    }
    return fmt::format("{} of {} x {} ({})", to_string(device.scheme), device.members.size(), media,
                       fmt::join(device.members, ", "));
}

MountReliability not_reliable(std::string why) {
    MountReliability r;
    r.basis = std::move(why) + ": not considered reliable (IOSIG Sect. 4.1)";
    return r;
}

} // namespace

double uber(double ber, unsigned sector_bits, unsigned correctable_bits) {
    if (!(ber > 0) || correctable_bits >= sector_bits) return 0;
    const double data_bits = sector_bits - correctable_bits;
    if (ber >= 1) return 1 / data_bits;
    return binomial_upper_tail(sector_bits, correctable_bits, ber) / data_bits;
}

double mttdl_mds(unsigned data_units, unsigned parity_units, double mttf, double mttr,
                 double file_bits, double uber_per_bit) {
    if (data_units == 0 || !(mttf > 0) || !(mttr > 0) || file_bits < 0 || uber_per_bit < 0)
        return std::numeric_limits<double>::quiet_NaN();
    const unsigned d = data_units + parity_units;
    const double lambda = 1 / mttf;
    const double mu = 1 / mttr;
    const double h = file_bits * uber_per_bit;
    // (MTTF/MTTR)^m / (d(d-1)...(d-m)) / (lambda + h mu): direct while it stays in range (every
    // practical m), in logs beyond, where mu^m and lambda^m leave the double range.
    double direct = 1 / (lambda + h * mu);
    for (unsigned i = 0; i < parity_units; ++i)
        direct *= mttf / mttr / (d - i);
    direct /= d - parity_units;
    if (std::isfinite(direct) && direct > 1e-300) return direct;
    double log_mttdl = parity_units * std::log(mttf / mttr) - std::log(lambda + h * mu);
    for (unsigned i = 0; i <= parity_units; ++i)
        log_mttdl -= std::log(static_cast<double>(d - i));
    return std::exp(log_mttdl);
}

double loss_probability(double mttdl_seconds, double lifetime_seconds) {
    if (!(lifetime_seconds > 0)) return 0;
    if (!(mttdl_seconds > 0)) return 1;
    return -std::expm1(-lifetime_seconds / mttdl_seconds);
}

MountReliability prepare_mount_reliability(const Node& node, const Mount& mount) {
    const Device* device = node.find_device(mount.device);
    if (device == nullptr) return not_reliable(fmt::format("unknown device '{}'", mount.device));
    std::string prefix;
    if (device->structure == DeviceStructure::partition) {
        const Device* owner = node.find_device(device->owner);
        if (owner == nullptr)
            return not_reliable(
                fmt::format("partition '{}' of unknown device '{}'", device->name, device->owner));
        prefix = fmt::format("partition '{}' of ", device->name);
        device = owner;
    }
    if (device->structure != DeviceStructure::complex)
        return not_reliable(fmt::format("{}single {} '{}' without redundancy", prefix,
                                        to_string(device->media), device->name));
    if (device->scheme == RedundancyScheme::opaque) {
        if (!device->mttdl)
            return not_reliable(
                fmt::format("{}opaque device '{}' without a stated mttdl", prefix, device->name));
        MountReliability r;
        r.kind = MountReliability::Kind::stated;
        r.stated_mttdl = *device->mttdl;
        r.basis = fmt::format("{}opaque device '{}': stated MTTDL", prefix, device->name);
        return r;
    }
    const std::optional<Eq2Mapping> mapping = map_scheme(*device);
    if (!mapping)
        return not_reliable(
            fmt::format("{}{} without redundancy", prefix, describe_members(node, *device)));

    const Figures figures = resolve_figures(node, *device);
    MountReliability r;
    r.kind = MountReliability::Kind::eq2;
    r.data_units = mapping->n;
    r.parity_units = mapping->m;
    r.groups = mapping->groups;
    r.mttf = figures.mttf;
    r.mttr = figures.mttr;
    r.uber_per_bit = uber(figures.ber, mount.ecc.sector_bits, mount.ecc.correctable_bits);
    r.basis = fmt::format(
        "{}{}: Eq. 2 with n={} m={}{}; MTTF {}, MTTR {}, BER {:g}, ECC {}/{} bits -> UBER {:.3g}",
        prefix, describe_members(node, *device), mapping->n, mapping->m,
        mapping->groups > 1 ? fmt::format(" per pair, {} pairs", mapping->groups) : std::string(),
        human_duration(figures.mttf), human_duration(figures.mttr), figures.ber,
        mount.ecc.correctable_bits, mount.ecc.sector_bits, r.uber_per_bit);
    if (!figures.defaulted.empty())
        r.basis += fmt::format(" ({} defaulted)", fmt::join(figures.defaulted, ", "));
    return r;
}

double MountReliability::mttdl(std::uint64_t file_size) const {
    switch (kind) {
    case Kind::not_reliable:
        return 0;
    case Kind::stated:
        return stated_mttdl;
    case Kind::eq2:
        // RAID10: each pair holds 1/groups of the file; losing any pair loses the file.
        return mttdl_mds(data_units, parity_units, mttf, mttr,
                         8.0 * static_cast<double>(file_size) / groups, uber_per_bit) /
               groups;
    }
    return 0;
}

MttdlEstimate mount_mttdl(const Node& node, const Mount& mount, std::uint64_t file_size) {
    MountReliability r = prepare_mount_reliability(node, mount);
    return MttdlEstimate{r.mttdl(file_size), std::move(r.basis)};
}

} // namespace iosig
