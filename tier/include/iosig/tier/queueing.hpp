// The two-tier paper's queueing model (Sec. 5, Eqs. 1-7), with service rates taken from the node
// model (node.hpp / node YAML).
//
//   Eq. 1  T_h,i = n_i,r / mu_1,r + n_i,w / mu_1,w    time tier 1 needs for process i's requests
//          (+ f_i / mu_1,w: each line a fill brings writes a whole line into tier 1 before the
//           miss is served like a hit; ProcessLoad::fills)
//   Eq. 2  T_m,i = n_i,m / mu_2                        time tier 2 needs for its misses
//          (here split by direction, n_i,m = fetches + write-backs:
//           fetches / mu_2,r + write-backs / mu_2,w, or the larger of the two terms when the home
//           device limits reads and writes separately, Performance::independent_read_write;
//           each in whole throttle slices when the device has them,
//           TierRates::tier2_throttle_slice: an idle device's first slice goes at once,
//           throttle_slices.hpp)
//   Eq. 3  T_i   = max(T_h,i, T_m,i)                   hits and misses are served concurrently
//   Eq. 4  T     = max_i T_i                           the slowest process finishes last
//   Eq. 5  1/mu  = (1 - p12) / E(mu_1) + p12 / E(mu_2) expected service time of the M/G/k system
//   Eq. 6  M/M/k hit queue: L_1 = P0 rho1^(k+1) / ((k-1)! (k-rho1)^2), W_1 = L_1 / arrivals
//   Eq. 7  M/M/1 miss queue: L_2 = rho2^2 / (1 - rho2), W_2 = L_2 / (lambda p12)
//
// Every request is served by tier 1 (a miss is filled and then served like a hit: "misses ... are
// serviced by tier 2 and re-enter tier 1"), so n_i,r and n_i,w count all reads and writes; tier 2
// additionally serves the misses, the write-backs of dirty evictions and the prefetches.
#pragma once

#include "iosig/node.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

namespace iosig::tier {

// Service rates in requests per second.
struct TierRates {
    double tier1_read = 0;  // mu_1,r: one whole line read from the cache device
    double tier1_write = 0; // mu_1,w: ... written to it
    double tier2_read = 0;  // mu_2 for fetches: one line read from the home device
    double tier2_write = 0; // mu_2 for write-backs: one line written to it
    bool tier2_independent_read_write = false; // the home device serves both directions at once
    // Requests per second tier 2 serves for a read of this many bytes, for fetches of several
    // adjacent lines in one IO (the engine's fill runs); unset: k lines take k / tier2_read.
    std::function<double(std::uint64_t bytes)> tier2_read_io = {};
    // ... and for a write of this many bytes (the flusher's write runs).
    std::function<double(std::uint64_t bytes)> tier2_write_io = {};
    // Requests per second tier 1 serves for a read / a write of this many bytes of one line: a hit
    // moves only the request's part of the line (a 4 KiB read of a 64 KiB line is a 4 KiB pread
    // of the cache file). Unset: every line a request touches costs a whole line's 1 / tier1_*.
    std::function<double(std::uint64_t bytes)> tier1_read_io = {};
    std::function<double(std::uint64_t bytes)> tier1_write_io = {};
    // The home device's blk-throttle slice (Performance::throttle_slice; throttle_slices.hpp),
    // each direction's own when it limits them separately: Eq. 2 charges tier 2's work in whole
    // slices after the first, which an idle device lets through at once. 0: none.
    double tier2_throttle_slice = 0;
    // A home device that is a throttle alone (slices, max_iops, no seek for this pattern) charges
    // every read against two budgets, IOs and bytes per second, and reads of mixed sizes take as
    // long as the scarcer budget lasts (blk-throttle dispatches a read once both budgets allow it),
    // not the sum of each read's larger charge. 0: not such a device.
    double tier2_read_iops_budget = 0;
    double tier2_read_bytes_budget = 0; // bytes per second
};

// Seconds tier 2 needs to read `lines` lines of `line_size` bytes in `ios` reads of equal size
// (tier2_read_io; exact when an IO's time is affine in its size), or one read per line when
// `ios` is 0 or the rates have no tier2_read_io.
double fetch_seconds(const TierRates& rates, std::uint64_t lines, std::uint64_t ios,
                     std::uint64_t line_size);

// Seconds tier 2 needs for `ios` reads of `bytes` in all, of any sizes, on a device with read
// budgets (tier2_read_iops_budget): the larger of the two budgets' times; nullopt without them.
std::optional<double> budgeted_fetch_seconds(const TierRates& rates, std::uint64_t ios,
                                             std::uint64_t bytes);

// One process's share of a workload.
struct ProcessLoad {
    std::uint64_t reads = 0;
    std::uint64_t writes = 0;
    std::uint64_t tier2_reads = 0;  // misses that fetch a line + prefetches
    std::uint64_t tier2_writes = 0; // write-backs of dirty lines
    std::optional<double> fetch_seconds =
        std::nullopt; // tier 2's time for tier2_reads when known (fill runs)
    std::optional<double> hit_seconds =
        std::nullopt; // Eq. 1's tier-1 time when known request by request (tier1_read_io)
    // Lines written into tier 1 by fills, a whole line each at mu_1,w (added to Eq. 1 whether
    // hit_seconds is given or not).
    std::uint64_t fills = 0;
};

struct CompletionTime {
    double seconds = 0;          // Eq. 4
    std::vector<double> hit;     // Eq. 1 per process
    std::vector<double> miss;    // Eq. 2 per process
    std::vector<double> process; // Eq. 3 per process
};

CompletionTime completion_time(const std::vector<ProcessLoad>& processes, const TierRates& rates);

// Eq. 5: the expected service time 1/mu for miss ratio p12 (0..1).
double expected_service_time(double miss_ratio, double mean_tier1_rate, double tier2_rate);

// Eqs. 6-7 at equilibrium; nullopt when a utilisation is >= 1 (then only Eqs. 1-4 apply).
struct Equilibrium {
    double rho1 = 0, rho2 = 0; // utilisations of the k-server hit queue and of the miss queue
    double l1 = 0, w1 = 0;     // hit queue length and waiting time (s)
    double l2 = 0, w2 = 0;     // miss queue length and waiting time (s)
};
std::optional<Equilibrium> equilibrium(double arrival_rate, double miss_ratio,
                                       double mean_tier1_rate, double tier2_rate, unsigned servers);

// Requests per second a device (as seen through `mount`) serves for IOs of `bytes` bytes:
// 1 / (op latency + seek latency for random IO on rotational media + bytes / bandwidth), capped at
// max_iops. Bandwidth: random or sequential, read or write, from the device's Performance. On a
// throttled device (throttle_slice and max_iops given) the rates are the limit's, which is blind
// to the pattern and adds no latency: 1 / (seek for random IO on rotational media + bytes /
// sequential bandwidth), capped at max_iops (calibrate's random bandwidth and fitted op latency of
// such a device measure the limit again; queueing.cpp).
double service_rate(const Device& device, std::uint64_t bytes, bool read, bool random);
// The names of the Performance fields service_rate reads for that direction and kind of IO
// (e.g. "rand_read_bw", "op_latency"), to tell where its figures came from (Node::provenance).
std::vector<std::string_view> service_rate_fields(const Device& device, bool read, bool random);

// The mount of `node` that holds `path`: the one whose path is the longest prefix of it.
const Mount* mount_holding(const Node& node, const std::filesystem::path& path);

// The rates of a cache on the mount holding `fast` in front of home files on the mount holding
// `slow`, for lines of `line_size` bytes. Throws std::invalid_argument naming the path when the
// node has no mount for it or the mount's device is missing.
TierRates tier_rates(const Node& node, const std::filesystem::path& fast,
                     const std::filesystem::path& slow, std::uint64_t line_size, bool random);

} // namespace iosig::tier
