// Synchronous writes and the device: Eq. 2's L_sync and B_dev (and completion ticks), B_read,
// L_seek, Eq. 3's fixed and copy costs.
#include "calibrate.hpp"
#include "calibrate_runs.hpp"
#include "iosig/cachesim/sync_cost.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <random>
#include <stdio_ext.h>
#include <unistd.h>

namespace iosig::cachesim::validate {

using namespace detail;

namespace {

// Whole-block sizes 4 KiB, 8 KiB, ... up to `largest`: a grid that does not favour any workload's
// chunk size, dense enough that interpolating between neighbours costs little.
std::vector<std::uint64_t> doubling_sizes(std::uint64_t largest) {
    std::vector<std::uint64_t> out;
    for (std::uint64_t s = 4 * KiB; s <= largest; s *= 2)
        out.push_back(s);
    return out;
}

CostCurve curve_of(const std::vector<SizeMedian>& medians) {
    std::vector<std::pair<double, double>> points;
    for (const SizeMedian& m : medians)
        points.emplace_back(m.size, m.median);
    return CostCurve(std::move(points));
}

} // namespace

LinearFit measure_direct(const CalibrationSetup& setup, double* quantum, CostCurve* curve) {
    std::mt19937_64 rng(3);
    const std::vector<std::uint64_t> sizes = doubling_sizes(16 * MiB);
    auto samples = single_size_runs(setup, Method::direct, sizes, rng);
    LinearFit line = two_range_fit(samples, 64 * KiB);
    const auto medians = per_size_medians(sizes_of(samples), costs_of(samples));
    if (curve) *curve = curve_of(medians);
    const double q = detect_quantum(medians);
    if (quantum) *quantum = q;
    if (q > 0 && setup.use_completion_ticks) {
        const auto [l, slope] = fit_quantized(
            medians, q, line.slope, [](double l, double slope, double s) { return l + s * slope; });
        line.intercept = l;
        line.slope = slope;
    }
    return line;
}

LinearFit measure_sync(const CalibrationSetup& setup, const ModelParameters& p, CostCurve* curve) {
    // Eq. 3 with the device part as given: the fixed cost L and the copy cost per byte are fitted.
    // Whole-block sizes only, so that the medians are also the curve Eq. 3 rounds writes up to.
    const double q = p.sync_completion_quantum;
    std::mt19937_64 rng(4);
    const std::vector<std::uint64_t> sizes = doubling_sizes(4 * MiB);
    auto samples = single_size_runs(setup, Method::sync, sizes, rng);
    const auto medians = per_size_medians(sizes_of(samples), costs_of(samples));
    if (curve) *curve = curve_of(medians);
    if (q > 0) {
        auto cost = [&p](double l, double c, double s) {
            ModelParameters x = p;
            x.sync_write_syscall_base = l;
            x.sync_copy_per_byte = c;
            return sync_write_cost(x, s, false, false);
        };
        const auto [l, c] = fit_quantized(medians, q, 0.5e-9, cost);
        LinearFit line;
        line.intercept = l;
        line.slope = c;
        line.samples = samples.size();
        return line;
    }
    // What Eq. 3 attributes to the device, given B_dev; the rest is L_sync + s * c_copy.
    for (Sample& s : samples) {
        const double whole = std::floor(s.size / p.block_size) * p.block_size;
        s.cost -=
            whole / p.device_write_bw + (s.size > whole ? p.block_size / p.device_write_bw : 0.0);
    }
    return fit(samples);
}

double measure_seek(const CalibrationSetup& setup) {
    const auto file = setup.dir / "iosig-calibrate.dat";
    const std::uint64_t span = 64 * MiB, count = 128;
    RunOptions keep;
    keep.keep_file = true;
    const RunTimings prepared =
        run_workload(file, Method::buffered, sequential_workload(span, 4 * MiB, 0), keep);
    if (!prepared.ok())
        throw std::runtime_error(fmt::format("seek calibration: {}", prepared.error));
    RunOptions overwrite;
    overwrite.keep_file = true;
    overwrite.truncate = false;
    std::mt19937_64 rng(6);
    std::vector<std::vector<double>> rows;
    std::vector<double> costs;
    for (int run = 0; run <= setup.repetitions; ++run) {
        for (int random = 0; random < 2; ++random) {
            std::vector<WriteRequest> w;
            for (std::uint64_t i = 0; i < count; ++i) {
                const std::uint64_t offset =
                    random ? (rng() % (span / (4 * KiB))) * 4 * KiB : i * 4 * KiB;
                w.push_back({offset, 4 * KiB, 0, 0});
            }
            const RunTimings t = run_workload(file, Method::direct, w, overwrite);
            if (!t.ok()) throw std::runtime_error(fmt::format("seek calibration: {}", t.error));
            if (run == 0) continue;
            for (std::size_t i = 1; i < w.size(); ++i) {
                rows.push_back({1.0, static_cast<double>(random)});
                costs.push_back(t.cost(i));
            }
        }
    }
    std::filesystem::remove(file);
    const std::vector<double> b = fit_linear(rows, costs);
    return b.size() == 2 ? b[1] : 0.0;
}

LinearFit measure_direct_read(const CalibrationSetup& setup) {
    const auto file = setup.dir / "iosig-calibrate-read.dat";
    const std::uint64_t span = 64 * MiB;
    RunOptions keep;
    keep.keep_file = true;
    const RunTimings prepared =
        run_workload(file, Method::buffered, sequential_workload(span, 4 * MiB, 0), keep);
    if (!prepared.ok())
        throw std::runtime_error(fmt::format("read calibration: {}", prepared.error));
    const int fd = ::open(file.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (fd < 0)
        throw std::runtime_error(
            fmt::format("read calibration: O_DIRECT open: {}", std::strerror(errno)));
    void* buffer = std::aligned_alloc(4096, 4 * MiB);
    std::mt19937_64 rng(7);
    std::vector<double> x, y;
    const std::uint64_t sizes[] = {256 * KiB, 1 * MiB, 2 * MiB, 4 * MiB};
    for (int run = 0; run <= setup.repetitions; ++run)
        for (std::uint64_t size : sizes) {
            const auto offset = static_cast<off_t>((rng() % (span / size)) * size);
            const double t0 = monotonic_now();
            const ssize_t n = ::pread(fd, buffer, size, offset);
            const double t = monotonic_now() - t0;
            if (n != static_cast<ssize_t>(size) || run == 0) continue;
            x.push_back(static_cast<double>(size));
            y.push_back(t);
        }
    std::free(buffer);
    ::close(fd);
    std::filesystem::remove(file);
    return fit_line_relative(x, y);
}

} // namespace iosig::cachesim::validate
