// The chunk sweep and its Eq. 3 fit (chunk_sweep.hpp).
#include "chunk_sweep.hpp"

#include "eq3_fit.hpp"
#include "io_buffer.hpp"
#include "iosig/units.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <optional>
#include <unistd.h>
#include <vector>

namespace iosig::calibrate {
PhaseLimits limits_for(Progress& progress, double seconds, std::uint64_t min_ios) {
    PhaseLimits l;
    l.seconds = seconds;
    l.min_ios = min_ios;
    l.report = [&progress](double f) { progress.update(f); };
    return l;
}

// The chunk sweep: each chunk size gets an equal share of what is left; a chunk whose single write
// would take longer than twice its share is left out (slow devices in --quick).
void run_sweep(MountIo& io, MountMeasurements& m, const MountTarget& target, bool quick,
               bool throttled, double budget, Progress& progress) {
    const auto chunks = sweep_chunks(
        !quick,
        std::min<std::uint64_t>(64 * MiB, std::max<std::uint64_t>(target.free_space / 4, MiB)),
        m.method.direct ? m.method.alignment : 1);
    if (m.method.direct && m.method.alignment > 512)
        m.notes.push_back(
            fmt::format("O_DIRECT needs {}-byte alignment here: the sweep uses multiples of it",
                        m.method.alignment));
    const double start = now_seconds();
    const double write_bw = std::max(m.seq_write.bytes_per_second, 1.0);
    // Interleaved order (fixed permutation): a slow spell of the machine or the file system spreads
    // over all chunk sizes as noise instead of bending one end of the curve.
    std::vector<std::size_t> order(chunks.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    Random shuffle(42);
    for (std::size_t i = order.size(); i > 1; --i)
        std::swap(order[i - 1], order[shuffle.below(i)]);
    // Three passes; each size keeps its best pass. A stall of the machine (or of a copy-on-write
    // file system's commit) rarely hits all. On a throttled device a pass lasts about one of the
    // limit's slices, and its best pass is a slice's burst (30-48 IOs in 0.1 s where the limit
    // allows 20): there each size keeps the three passes together, about three slices.
    constexpr int passes = 3;
    std::vector<std::optional<SweepPoint>> points(chunks.size());
    std::vector<bool> skipped(chunks.size(), false);
    std::size_t remaining = chunks.size() * passes;
    for (int pass = 0; pass < passes; ++pass) {
        for (std::size_t k = 0; k < order.size(); ++k, --remaining) {
            const std::size_t i = order[k];
            if (skipped[i]) continue;
            const double left = std::max(0.0, budget - (now_seconds() - start));
            const double slice = left / static_cast<double>(remaining);
            if (pass == 0 && static_cast<double>(chunks[i]) / write_bw > 2 * slice &&
                chunks[i] > 64 * KiB) {
                skipped[i] = true;
                m.sweep_skipped.push_back(chunks[i]);
                continue;
            }
            PhaseLimits l = limits_for(progress, slice, 2);
            l.report = [&](double) {
                progress.update((now_seconds() - start) / std::max(budget, 1e-9));
            };
            const SweepPoint p = io.sweep_point(chunks[i], l);
            if (throttled && points[i] && p.ios > 0) {
                points[i]->ios += p.ios;
                points[i]->seconds += p.seconds;
            } else if (!points[i] || p.seconds_per_io() < points[i]->seconds_per_io()) {
                points[i] = p;
            }
        }
    }
    for (const auto& p : points)
        if (p) m.sweep.push_back(*p);
    std::sort(m.sweep_skipped.begin(), m.sweep_skipped.end());
    if (!m.sweep_skipped.empty())
        m.notes.push_back(fmt::format(
            "chunk sweep: {} chunks above {} left out to stay within the time budget",
            m.sweep_skipped.size(), human_size(static_cast<double>(m.sweep_skipped.front() - 1))));
}

void fit_sweep(MountMeasurements& m, const MountTarget& target, bool throttled) {
    std::vector<SweepSample> samples;
    for (const SweepPoint& p : m.sweep)
        samples.push_back({p.chunk, p.seconds_per_io()});
    if (samples.size() < 4) {
        m.notes.push_back("chunk sweep too short for an Eq. 3 fit");
        return;
    }
    Eq3FitOptions options;
    options.reference_chunk = std::max<std::uint64_t>(
        static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE)), target.block_size);
    options.max_iops = m.random_write.iops;
    options.throttled = throttled;
    m.fit = fit_eq3(samples, options);
}

} // namespace iosig::calibrate
