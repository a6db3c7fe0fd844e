#include "scenarios.hpp"

#include "iosig/units.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sstream>
#include <stdexcept>

namespace iosig::cachesim::validate {
namespace {

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB;

std::uint64_t scaled(double bytes, double scale, std::uint64_t chunk) {
    const auto total = static_cast<std::uint64_t>(std::llround(bytes * scale));
    return std::max(chunk, total / chunk * chunk);
}

std::string delay_name(double delay) {
    return fmt::format("{:g}ms", delay * 1e3);
}

} // namespace

std::vector<Scenario> paper_scenarios(double scale) {
    std::vector<Scenario> out;
    // Fig. 4: O_DIRECT|O_SYNC, sequential, a sweep over chunk sizes (64 writes each).
    for (std::uint64_t chunk : {4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, 1 * MiB, 4 * MiB}) {
        const std::string size = format_size(chunk);
        out.push_back({fmt::format("direct-{}", size), "direct",
                       fmt::format("O_DIRECT|O_SYNC, {} chunks", size), Method::direct,
                       sequential_workload(scaled(64.0 * chunk, scale, chunk), chunk, 0),
                       static_cast<double>(chunk)});
    }
    // Fig. 5: O_SYNC through the page cache, including sizes that are not block multiples (Eq. 3).
    for (std::uint64_t chunk :
         {std::uint64_t{4 * KiB}, std::uint64_t{6000}, std::uint64_t{64 * KiB},
          std::uint64_t{100000}, std::uint64_t{1 * MiB}, std::uint64_t{4 * MiB}}) {
        const std::string size = format_size(chunk);
        out.push_back(
            {fmt::format("sync-{}", size), "sync", fmt::format("O_SYNC, {} chunks", size),
             Method::sync,
             sequential_workload(scaled(64.0 * static_cast<double>(chunk), scale, chunk), chunk, 0),
             static_cast<double>(chunk)});
    }
    // Fig. 6-A/B/C: buffered sequential writes without and with computation between them. Chunks of
    // 8 MiB: the flusher slows writers through rare long stalls, which only writes of some MiB
    // average over (a per-write median of 1 MiB writes shows the stall-free cost).
    const std::uint64_t chunk = 8 * MiB;
    out.push_back({"buffered-seq", "buffered", "buffered write(), 8 MiB chunks, no delay",
                   Method::buffered,
                   sequential_workload(scaled(512.0 * MiB, scale, chunk), chunk, 0), 0});
    for (double delay : {0.01, 0.04}) {
        out.push_back({fmt::format("buffered-delay-{}", delay_name(delay)), "buffered",
                       fmt::format("buffered write(), 8 MiB chunks, {} computation before each",
                                   delay_name(delay)),
                       Method::buffered,
                       sequential_workload(scaled(384.0 * MiB, scale, chunk), chunk, delay), 0});
    }
    // Fig. 7: seek back before each chunk and rewrite part of the previous one.
    struct Case {
        const char* name;
        double delay;
        double rewrite;
    };
    for (const Case c :
         {Case{"A", 0, 0.25}, Case{"B", 0.02, 0.25}, Case{"C", 0, 0.75}, Case{"D", 0.02, 0.75}}) {
        out.push_back(
            {fmt::format("rewrite-{}", c.name), "rewrite",
             fmt::format(
                 "case {}: 8 MiB chunks rewriting the last {:g} % of the previous one, {} delay",
                 c.name, c.rewrite * 100, delay_name(c.delay)),
             Method::buffered,
             rewrite_workload(scaled(128.0 * MiB, scale, chunk), chunk, c.rewrite, c.delay), 0});
    }
    // Fig. 8/9: fwrite through the libc buffer, chunks larger and smaller than the buffer, with
    // delays.
    for (double delay : {0.0, 0.0005}) {
        out.push_back({fmt::format("stdio-10000-{}", delay_name(delay)), "stdio",
                       fmt::format("fwrite(), 10000-byte chunks, {} delay", delay_name(delay)),
                       Method::stdio,
                       sequential_workload(scaled(64.0 * MiB, scale, 10000), 10000, delay), 0});
    }
    out.push_back({"stdio-256K-2ms", "stdio", "fwrite(), 256 KiB chunks, 2 ms delay", Method::stdio,
                   sequential_workload(scaled(128.0 * MiB, scale, 256 * KiB), 256 * KiB, 0.002),
                   0});
    return out;
}

std::vector<Scenario> select_scenarios(const std::vector<Scenario>& all, const std::string& list) {
    if (list.empty() || list == "all") return all;
    std::vector<std::string> wanted;
    std::stringstream in(list);
    for (std::string item; std::getline(in, item, ',');)
        if (!item.empty() && item != "none") wanted.push_back(item);
    for (const std::string& w : wanted) {
        const bool known = std::any_of(
            all.begin(), all.end(), [&](const Scenario& s) { return s.name == w || s.group == w; });
        if (!known) {
            std::vector<std::string> groups;
            for (const Scenario& s : all)
                if (std::find(groups.begin(), groups.end(), s.group) == groups.end())
                    groups.push_back(s.group);
            throw std::invalid_argument(
                fmt::format("--scenarios: no scenario or group '{}' (--list shows the names; the "
                            "groups are {})",
                            w, fmt::join(groups, ", ")));
        }
    }
    std::vector<Scenario> out;
    for (const Scenario& s : all)
        for (const std::string& w : wanted)
            if (s.name == w || s.group == w) {
                out.push_back(s);
                break;
            }
    return out;
}

} // namespace iosig::cachesim::validate
