// The queueing model (queueing.hpp).
#include "iosig/tier/queueing.hpp"

#include "iosig/tier/throttle_slices.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <stdexcept>

namespace iosig::tier {

CompletionTime completion_time(const std::vector<ProcessLoad>& processes, const TierRates& rates) {
    if (rates.tier1_read <= 0 || rates.tier1_write <= 0 || rates.tier2_read <= 0 ||
        rates.tier2_write <= 0)
        throw std::invalid_argument("service rates must be > 0");
    CompletionTime t;
    for (const ProcessLoad& p : processes) {
        const double hit = (p.hit_seconds ? *p.hit_seconds
                                          : static_cast<double>(p.reads) / rates.tier1_read +
                                                static_cast<double>(p.writes) / rates.tier1_write) +
                           static_cast<double>(p.fills) / rates.tier1_write; // Eq. 1
        const double fetch = p.fetch_seconds
                                 ? *p.fetch_seconds
                                 : static_cast<double>(p.tier2_reads) / rates.tier2_read;
        const double write_back = static_cast<double>(p.tier2_writes) / rates.tier2_write;
        // A throttle that grants its budget a slice at a time lets an idle device's first slice
        // through at once (throttle_slices.hpp); without one, from_idle is the work's time.
        const auto sliced = [&rates](double work) {
            return ThrottleSlices::from_idle(work, rates.tier2_throttle_slice);
        };
        const double miss = rates.tier2_independent_read_write
                                ? std::max(sliced(fetch), sliced(write_back))
                                : sliced(fetch + write_back); // Eq. 2
        t.hit.push_back(hit);
        t.miss.push_back(miss);
        t.process.push_back(std::max(hit, miss));          // Eq. 3
        t.seconds = std::max(t.seconds, t.process.back()); // Eq. 4
    }
    return t;
}

double expected_service_time(double miss_ratio, double mean_tier1_rate, double tier2_rate) {
    return (1 - miss_ratio) / mean_tier1_rate + miss_ratio / tier2_rate; // Eq. 5
}

std::optional<Equilibrium> equilibrium(double arrival_rate, double miss_ratio,
                                       double mean_tier1_rate, double tier2_rate,
                                       unsigned servers) {
    if (servers == 0) throw std::invalid_argument("the hit queue needs at least one server");
    Equilibrium e;
    // The k-server queue sees hits and the misses coming back from tier 2 (Sec. 5).
    const double arrivals1 =
        (1 - miss_ratio) * arrival_rate + std::min(tier2_rate, miss_ratio * arrival_rate);
    e.rho1 = arrivals1 / mean_tier1_rate;
    e.rho2 = miss_ratio * arrival_rate / tier2_rate;
    const double k = servers;
    if (e.rho1 >= k || e.rho2 >= 1) return std::nullopt;
    // P0 of M/M/k with offered load a = rho1 (in Erlangs).
    const double a = e.rho1;
    double sum = 0, term = 1;
    for (unsigned n = 0; n < servers; ++n) {
        if (n > 0) term *= a / n;
        sum += term;
    }
    const double last = term * a / k; // a^k / k!
    const double p0 = 1 / (sum + last * k / (k - a));
    double factorial = 1;
    for (unsigned n = 2; n < servers; ++n)
        factorial *= n;
    e.l1 = p0 * std::pow(a, k + 1) / (factorial * (k - a) * (k - a)); // Eq. 6
    e.w1 = arrivals1 > 0 ? e.l1 / arrivals1 : 0;
    e.l2 = e.rho2 * e.rho2 / (1 - e.rho2); // Eq. 7
    e.w2 = miss_ratio * arrival_rate > 0 ? e.l2 / (miss_ratio * arrival_rate) : 0;
    return e;
}

namespace {

// Whether service_rate charges the random bandwidth: random IO on a device that gives one (random
// falls back to sequential when the device gives none) and is not a throttle (whose bytes budget,
// the sequential bandwidth, holds whatever the pattern).
bool random_bandwidth(const Performance& p, bool read, bool random) {
    return random && (read ? p.rand_read_bw : p.rand_write_bw) > 0 && !p.is_throttle();
}

// The bandwidth service_rate charges: random or sequential, read or write.
double bandwidth(const Performance& p, bool read, bool random) {
    return random_bandwidth(p, read, random) ? (read ? p.rand_read_bw : p.rand_write_bw)
                                             : (read ? p.seq_read_bw : p.seq_write_bw);
}

// The latency service_rate charges every IO before its transfer: the op latency (none on a
// throttle: charged on top of its budgets it counts each IO's time twice, the lab's hdd calibrated
// took 8.0 ms per 4 KiB read where the limit passes one every 5.1 ms) and the seek of random IO on
// rotational media (which stays on a throttle: the limit does not move the arm beneath it).
double per_io_latency(const Device& device, bool random) {
    const Performance& p = device.performance;
    return (p.is_throttle() ? 0 : p.op_latency) +
           (random && device.rotational ? p.seek_latency : 0);
}

} // namespace

double service_rate(const Device& device, std::uint64_t bytes, bool read, bool random) {
    const Performance& p = device.performance;
    const double bw = bandwidth(p, read, random);
    if (bw <= 0)
        throw std::invalid_argument(
            fmt::format("device '{}' has no {} bandwidth", device.name, read ? "read" : "write"));
    const double seconds = per_io_latency(device, random) + static_cast<double>(bytes) / bw;
    double rate = seconds > 0 ? 1 / seconds : std::numeric_limits<double>::infinity();
    if (p.max_iops > 0) rate = std::min(rate, p.max_iops);
    return rate;
}

std::vector<std::string_view> service_rate_fields(const Device& device, bool read, bool random) {
    std::vector<std::string_view> fields;
    const Performance& p = device.performance;
    if (random_bandwidth(p, read, random))
        fields.push_back(read ? "rand_read_bw" : "rand_write_bw");
    else
        fields.push_back(read ? "seq_read_bw" : "seq_write_bw");
    if (!p.is_throttle()) fields.push_back("op_latency");
    if (random && device.rotational) fields.push_back("seek_latency");
    fields.push_back("max_iops");
    if (p.is_throttle()) fields.push_back("throttle_slice");
    return fields;
}

const Mount* mount_holding(const Node& node, const std::filesystem::path& path) {
    const std::string p = path.lexically_normal().string();
    const Mount* best = nullptr;
    for (const Mount& m : node.mounts) {
        const std::string mp = std::filesystem::path(m.path).lexically_normal().string();
        const bool inside =
            p == mp || (p.starts_with(mp) && (mp.ends_with('/') || p[mp.size()] == '/'));
        if (inside && (best == nullptr || mp.size() > best->path.size())) best = &m;
    }
    return best;
}

TierRates tier_rates(const Node& node, const std::filesystem::path& fast,
                     const std::filesystem::path& slow, std::uint64_t line_size, bool random) {
    auto device_of = [&](const std::filesystem::path& path) -> const Device& {
        const Mount* m = mount_holding(node, path);
        if (m == nullptr)
            throw std::invalid_argument(
                fmt::format("node '{}' has no mount holding '{}'", node.name, path.string()));
        const Device* d = node.find_device(m->device);
        if (d == nullptr)
            throw std::invalid_argument(
                fmt::format("mount '{}' names device '{}', which the node does not define", m->path,
                            m->device));
        return *d;
    };
    const Device& fast_device = device_of(fast);
    const Device& slow_device = device_of(slow);
    TierRates rates{service_rate(fast_device, line_size, true, random),
                    service_rate(fast_device, line_size, false, random),
                    service_rate(slow_device, line_size, true, random),
                    service_rate(slow_device, line_size, false, random),
                    slow_device.performance.independent_read_write,
                    {}};
    rates.tier1_read_io = [fast = fast_device, random](std::uint64_t bytes) {
        return service_rate(fast, bytes, true, random);
    };
    rates.tier1_write_io = [fast = fast_device, random](std::uint64_t bytes) {
        return service_rate(fast, bytes, false, random);
    };
    rates.tier2_read_io = [slow = slow_device, random](std::uint64_t bytes) {
        return service_rate(slow, bytes, true, random);
    };
    rates.tier2_write_io = [slow = slow_device, random](std::uint64_t bytes) {
        return service_rate(slow, bytes, false, random);
    };
    const Performance& slow_performance = slow_device.performance;
    rates.tier2_throttle_slice = slow_performance.throttle_slice;
    if (slow_performance.is_throttle() && per_io_latency(slow_device, random) == 0) {
        rates.tier2_read_iops_budget = slow_performance.max_iops;
        rates.tier2_read_bytes_budget = bandwidth(slow_performance, true, random);
    }
    return rates;
}

double fetch_seconds(const TierRates& rates, std::uint64_t lines, std::uint64_t ios,
                     std::uint64_t line_size) {
    if (lines == 0) return 0;
    if (!rates.tier2_read_io || ios == 0 || ios >= lines)
        return static_cast<double>(lines) / rates.tier2_read;
    const auto bytes = static_cast<std::uint64_t>(
        std::llround(static_cast<double>(lines * line_size) / static_cast<double>(ios)));
    return static_cast<double>(ios) / rates.tier2_read_io(bytes);
}

std::optional<double> budgeted_fetch_seconds(const TierRates& rates, std::uint64_t ios,
                                             std::uint64_t bytes) {
    if (rates.tier2_read_iops_budget <= 0 || rates.tier2_read_bytes_budget <= 0)
        return std::nullopt;
    return std::max(static_cast<double>(ios) / rates.tier2_read_iops_budget,
                    static_cast<double>(bytes) / rates.tier2_read_bytes_budget);
}

} // namespace iosig::tier
