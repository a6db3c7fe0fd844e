#include "eq3_fit.hpp"

#include "stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

namespace iosig::calibrate {
namespace {

struct Terms {
    double chunks_bytes; // ceil(ds/cs)*cs
    double partial;      // d*cs
    bool is_partial;
};

Terms terms(std::uint64_t ds, std::uint64_t cs) {
    const std::uint64_t n = (ds + cs - 1) / cs;
    const bool partial = ds % cs != 0;
    return {static_cast<double>(n * cs), partial ? static_cast<double>(cs) : 0.0, partial};
}

struct Candidate {
    Eq3Parameters parameters;
    double score = std::numeric_limits<double>::infinity();
};

// Mean of the smallest 80 % of squared relative errors: one disturbed point (another process's IO
// burst, a journal commit) must not decide the block size.
double trimmed_score(std::vector<double> squared) {
    std::sort(squared.begin(), squared.end());
    const std::size_t keep = std::max<std::size_t>(1, squared.size() * 8 / 10);
    double sum = 0;
    for (std::size_t i = 0; i < keep; ++i)
        sum += squared[i];
    return sum / static_cast<double>(keep);
}

Candidate fit_for_chunk(const std::vector<SweepSample>& samples, std::uint64_t cs,
                        double max_iops) {
    Candidate best;
    best.parameters.chunk = cs;
    best.parameters.max_iops = max_iops;
    const std::size_t n = samples.size();
    std::vector<bool> capped(n, false), outlier(n, false);
    // Start from the points the limit explains by itself (measured within 10 % of it): a first fit
    // over all points would put the limit into l and never let go of it.
    for (std::size_t i = 0; i < n && max_iops > 0; ++i) {
        const double cap = (terms(samples[i].chunk, cs).is_partial ? 2.0 : 1.0) / max_iops;
        capped[i] = samples[i].seconds_per_io <= 1.1 * cap;
    }
    for (int iteration = 0; iteration < 8; ++iteration) {
        std::vector<std::vector<double>> rows;
        std::vector<double> y;
        for (std::size_t i = 0; i < n; ++i) {
            if (capped[i] || outlier[i]) continue;
            const Terms t = terms(samples[i].chunk, cs);
            const double w = 1.0 / samples[i].seconds_per_io; // relative error weighting
            rows.push_back({w, t.chunks_bytes * w, t.partial * w});
            y.push_back(1.0);
        }
        if (rows.size() < 2) break;
        const auto b = nonnegative_least_squares(rows, y);
        if (!b) break;
        Eq3Parameters p;
        p.chunk = cs;
        p.latency = (*b)[0];
        p.write_bw = (*b)[1] > 0 ? 1.0 / (*b)[1] : 0;
        p.read_bw = (*b)[2] > 0 ? 1.0 / (*b)[2] : 0;
        p.max_iops = max_iops;
        if (!(p.write_bw > 0)) break;
        std::vector<double> squared, log_residual(n);
        std::vector<bool> next_capped(n, false);
        for (std::size_t i = 0; i < n; ++i) {
            const Terms t = terms(samples[i].chunk, cs);
            const double linear = p.latency + t.chunks_bytes / p.write_bw +
                                  (p.read_bw > 0 ? t.partial / p.read_bw : 0);
            const double cap = max_iops > 0 ? (t.is_partial ? 2.0 : 1.0) / max_iops : 0;
            next_capped[i] = cap > linear;
            const double model = std::max(linear, cap);
            const double rel = (model - samples[i].seconds_per_io) / model;
            squared.push_back(rel * rel);
            log_residual[i] = std::log(samples[i].seconds_per_io / model);
        }
        const double score = trimmed_score(squared);
        if (score < best.score) {
            best.score = score;
            best.parameters = p;
        }
        // Points far from the rest (robust z-score on log residuals) are left out of the next fit.
        const double center = median(log_residual);
        std::vector<double> deviations;
        for (double r : log_residual)
            deviations.push_back(std::fabs(r - center));
        const double spread = std::max(3 * 1.4826 * median(deviations), 0.2);
        std::vector<bool> next_outlier(n, false);
        for (std::size_t i = 0; i < n; ++i)
            next_outlier[i] = std::fabs(log_residual[i] - center) > spread;
        if (next_capped == capped && next_outlier == outlier) break;
        capped = std::move(next_capped);
        outlier = std::move(next_outlier);
    }
    return best;
}

std::vector<double> relative_errors(const std::vector<SweepSample>& samples, const Eq3Parameters& p,
                                    std::vector<double>* predicted) {
    std::vector<double> errors;
    for (const SweepSample& s : samples) {
        const double model = static_cast<double>(s.chunk) / eq3_seconds_per_io(p, s.chunk);
        const double measured = static_cast<double>(s.chunk) / s.seconds_per_io;
        if (predicted) predicted->push_back(model);
        errors.push_back(std::fabs(model - measured) / measured);
    }
    return errors;
}

} // namespace

double eq3_seconds_per_io(const Eq3Parameters& p, std::uint64_t ds) {
    const std::uint64_t cs = p.chunk == 0 ? 4096 : p.chunk;
    const Terms t = terms(ds, cs);
    double seconds = p.latency + (p.write_bw > 0 ? t.chunks_bytes / p.write_bw
                                                 : std::numeric_limits<double>::infinity());
    if (t.is_partial && p.read_bw > 0) seconds += t.partial / p.read_bw;
    if (p.max_iops > 0) seconds = std::max(seconds, (t.is_partial ? 2.0 : 1.0) / p.max_iops);
    return seconds;
}

Eq3Fit fit_eq3(const std::vector<SweepSample>& samples, const Eq3FitOptions& options) {
    if (samples.size() < 4) throw std::invalid_argument("Eq. 3 fit needs at least 4 sweep points");
    std::uint64_t largest = 0;
    for (const SweepSample& s : samples)
        largest = std::max(largest, s.chunk);

    std::set<std::uint64_t> chunks;
    for (std::uint64_t c = 512; c <= std::min<std::uint64_t>(largest, 1 << 20); c *= 2)
        chunks.insert(c);
    if (options.fine_search)
        for (std::uint64_t c = 512; c <= std::min<std::uint64_t>(largest, 64 << 10); c += 512)
            chunks.insert(c);
    const std::uint64_t reference = options.reference_chunk == 0 ? 4096 : options.reference_chunk;
    chunks.insert(reference);

    std::vector<SweepSample> small;
    for (const SweepSample& s : samples)
        if (s.chunk <= options.block_effect_limit) small.push_back(s);
    if (small.empty()) small = samples;
    auto mean_error = [](const std::vector<double>& errors) {
        double sum = 0;
        for (double e : errors)
            sum += e;
        return errors.empty() ? 0.0 : sum / static_cast<double>(errors.size());
    };

    // For each way of treating the IOPS limit (use the measured one, or none), the reference chunk
    // unless another one clearly fits better; then the better of the two.
    struct Choice {
        Candidate chosen, reference;
        bool detected = false;
    };
    auto choose = [&](double cap) {
        Choice c;
        c.reference = fit_for_chunk(samples, reference, cap);
        Candidate best = c.reference;
        for (std::uint64_t cs : chunks) {
            const Candidate candidate = fit_for_chunk(samples, cs, cap);
            // The search runs upwards and only a strictly better fit wins: ties keep the smaller.
            if (candidate.score < best.score * (1 - 1e-9)) best = candidate;
        }
        const double reference_small =
            mean_error(relative_errors(small, c.reference.parameters, nullptr));
        const double best_small = mean_error(relative_errors(small, best.parameters, nullptr));
        c.detected = !options.throttled && best.parameters.chunk != reference &&
                     best.score < options.adopt_threshold * c.reference.score &&
                     best_small <= reference_small - options.adopt_min_gain;
        c.chosen = c.detected ? best : c.reference;
        return c;
    };
    Choice choice = choose(0);
    // A limit measured with random IO at depth that sequential QD1 writes beat is not this
    // sweep's limit (btrfs: random copy-on-write overwrites; tmpfs: io_uring's own overhead).
    bool limit_plausible = options.max_iops > 0;
    for (const SweepSample& s : samples)
        if (1.0 / s.seconds_per_io > 1.25 * options.max_iops && !options.throttled)
            limit_plausible = false;
    if (limit_plausible) {
        Choice capped = choose(options.max_iops);
        // The limit is an independent measurement: keep it unless leaving it out fits clearly
        // better (a QD32 figure below what QD1 achieves, as io_uring's overhead gives on tmpfs),
        // and always on a throttled device, whose slices' bursts a fit without it takes for a
        // latency (Eq3FitOptions::throttled).
        if (capped.chosen.score <= 2 * choice.chosen.score || options.throttled) choice = capped;
    }
    Eq3Fit fit;
    fit.reference_chunk = reference;
    fit.parameters = choice.chosen.parameters;
    fit.chunk_detected = choice.detected;
    fit.reference_error = median(relative_errors(samples, choice.reference.parameters, nullptr));
    fit.reference_small_chunk_error =
        median(relative_errors(small, choice.reference.parameters, nullptr));
    fit.small_chunk_error = median(relative_errors(small, fit.parameters, nullptr));
    const auto errors = relative_errors(samples, fit.parameters, &fit.predicted_throughput);
    fit.median_relative_error = median(errors);
    fit.max_relative_error = *std::max_element(errors.begin(), errors.end());
    return fit;
}

} // namespace iosig::calibrate
