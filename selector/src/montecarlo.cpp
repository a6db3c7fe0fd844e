// Regenerative Monte Carlo simulation of data loss with failure biasing (docs/selection.md,
// "Monte Carlo"). The simulated system: d = n+m devices fail independently at rate 1/MTTF; failed
// devices are rebuilt one at a time, each rebuild taking an exponential time of mean MTTR; while m
// devices are down the rebuild reads the file's sectors from every surviving device, and each
// sector read fails ECC with the probability that more than E of its N bits flipped at BER.
//
// Every return to "all devices up" starts an independent cycle, so MTTDL = E[cycle length] /
// E[data-loss events per cycle]. Losses are rare (a second failure inside a one-day window), so the
// choice "failure or repair" in partially degraded states is biased towards failure and the
// likelihood ratio reweights the cycle (balanced failure biasing, Shahabuddin 1994). Every
// transition is sampled: failures, rebuild completions, and uncorrectable sectors met by a rebuild.
#include "iosig/montecarlo.hpp"

#include <cmath>
#include <limits>
#include <random>

namespace iosig {
namespace {

// P(more than E of the N bits of a sector are wrong) at raw bit error rate `ber`, by summing the
// binomial terms one by one in long double: deliberately not uber()'s algorithm, so that the two
// check each other.
double sector_failure_probability(double ber, unsigned sector_bits, unsigned correctable_bits) {
    if (!(ber > 0) || correctable_bits >= sector_bits) return 0;
    if (ber >= 1) return 1;
    const long double N = sector_bits;
    const long double log_p = std::log(static_cast<long double>(ber));
    const long double log_q = std::log1p(-static_cast<long double>(ber));
    long double sum = 0;
    for (unsigned n = correctable_bits + 1; n <= sector_bits; ++n) {
        const long double k = n;
        sum += std::exp(std::lgamma(N + 1) - std::lgamma(k + 1) - std::lgamma(N - k + 1) +
                        k * log_p + (N - k) * log_q);
    }
    return static_cast<double>(std::min<long double>(sum, 1));
}

class Random {
public:
    explicit Random(std::uint64_t seed) : engine_(seed) {}

    // Uniform in (0, 1], from the top 53 bits (the same stream on every standard library).
    double uniform() { return (static_cast<double>(engine_() >> 11) + 1) * 0x1p-53; }
    double exponential(double rate) { return -std::log(uniform()) / rate; }

private:
    std::mt19937_64 engine_;
};

struct Cycle {
    double weighted_time = 0;
    double weighted_losses = 0;
};

// The continuous-time chain of "how many devices are down", simulated transition by transition.
// Below the critical state a failure takes one more device down and a rebuild brings one back. In
// the critical state (m down) a further failure, or an uncorrectable sector read by the rebuild, is
// a data-loss event; the lost data is restored with the failed device, so the chain stays critical
// until the rebuild in progress completes.
class Simulator {
public:
    explicit Simulator(const MonteCarloSetup& s)
        : devices_(s.data_units + s.parity_units), tolerated_(s.parity_units), lambda_(1 / s.mttf),
          mu_(1 / s.mttr), bias_(s.failure_biasing), random_(s.seed) {
        // Eq. 1 normalises by the N-E data bits of a sector: the file occupies file_bits/(N-E)
        // sectors on each device it is read from.
        const unsigned data_bits = s.sector_bits - std::min(s.correctable_bits, s.sector_bits - 1);
        const double sectors = s.file_bits / data_bits;
        const double bad_sectors_per_read =
            sectors * sector_failure_probability(s.ber, s.sector_bits, s.correctable_bits);
        // A rebuild streams the file from every surviving device once per MTTR on average.
        bad_sector_rate_ = (devices_ - tolerated_) * bad_sectors_per_read * mu_;
    }

    Cycle run_cycle() {
        Cycle cycle;
        const double critical_failure_rate = (devices_ - tolerated_) * lambda_;
        if (tolerated_ ==
            0) { // unprotected: every failure or bad sector read is a loss; renew there
            cycle.weighted_time = random_.exponential(critical_failure_rate + bad_sector_rate_);
            cycle.weighted_losses = 1;
            return cycle;
        }
        cycle.weighted_time =
            random_.exponential(devices_ * lambda_); // all up until the first failure
        unsigned down = 1;
        double weight = 1; // likelihood ratio of the path so far
        while (down > 0) {
            const bool critical = down == tolerated_;
            // Transitions towards loss: a further failure, and in the critical state a bad sector.
            const double fail_rate = critical ? critical_failure_rate : (devices_ - down) * lambda_;
            const double sector_rate = critical ? bad_sector_rate_ : 0;
            const double total = fail_rate + sector_rate + mu_;
            cycle.weighted_time += weight * random_.exponential(total);
            const double p_towards_loss = (fail_rate + sector_rate) / total;
            const double biased = bias_ ? std::max(p_towards_loss, 0.5) : p_towards_loss;
            const double u = random_.uniform();
            if (u > biased) { // the rebuild completes
                weight *= (1 - p_towards_loss) / (1 - biased);
                --down;
                continue;
            }
            weight *= p_towards_loss / biased;
            if (!critical) {
                ++down;
                continue;
            }
            cycle.weighted_losses += weight; // a failure or a bad sector: which one does not matter
        }
        return cycle;
    }

private:
    unsigned devices_;
    unsigned tolerated_;
    double lambda_;
    double mu_;
    bool bias_;
    double bad_sector_rate_ = 0;
    Random random_;
};

} // namespace

MonteCarloResult simulate_mttdl(const MonteCarloSetup& setup) {
    MonteCarloResult result;
    if (setup.data_units == 0 || !(setup.mttf > 0) || !(setup.mttr > 0) || setup.trials < 2 ||
        setup.sector_bits == 0 || setup.file_bits < 0) {
        result.mean_seconds = std::numeric_limits<double>::quiet_NaN();
        return result;
    }
    Simulator simulator(setup);
    // Ratio estimator sum(T)/sum(L) with its delta-method standard error, from accumulated moments.
    double sum_t = 0, sum_l = 0, sum_tt = 0, sum_ll = 0, sum_tl = 0;
    for (std::uint64_t i = 0; i < setup.trials; ++i) {
        const Cycle c = simulator.run_cycle();
        sum_t += c.weighted_time;
        sum_l += c.weighted_losses;
        sum_tt += c.weighted_time * c.weighted_time;
        sum_ll += c.weighted_losses * c.weighted_losses;
        sum_tl += c.weighted_time * c.weighted_losses;
    }
    const double k = static_cast<double>(setup.trials);
    result.trials = setup.trials;
    if (!(sum_l > 0)) { // no loss mode at all (no failures, no bit errors)
        result.mean_seconds = std::numeric_limits<double>::infinity();
        return result;
    }
    const double ratio = sum_t / sum_l;
    const double mean_l = sum_l / k;
    // Sample variance of T - ratio*L, expanded in the accumulated moments.
    const double residual_ss = sum_tt - 2 * ratio * sum_tl + ratio * ratio * sum_ll;
    const double residual_var = std::max(0.0, residual_ss / (k - 1));
    result.mean_seconds = ratio;
    result.standard_error = std::sqrt(residual_var / k) / mean_l;
    return result;
}

} // namespace iosig
