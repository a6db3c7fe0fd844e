// Monte Carlo simulation of data loss (the paper's "MTTDL Evaluation", its Fig. 12): devices fail
// exponentially at MTTF and are repaired in MTTR; bit errors occur at BER and are corrected by ECC
// up to E bits per sector; data is lost when more devices are down than the scheme tolerates, or an
// uncorrectable error hits a stripe while the redundancy is exhausted by failures.
#pragma once

#include <cstdint>

namespace iosig {

struct MonteCarloSetup {
    unsigned data_units = 1;   // n
    unsigned parity_units = 0; // m (tolerated failures)
    double mttf = 0;           // s
    double mttr = 0;           // s
    double ber = 0;            // raw bit error rate
    unsigned sector_bits = 512;
    unsigned correctable_bits = 0;
    double file_bits = 0; // size of the protected data in bits
    std::uint64_t trials = 20000;
    std::uint64_t seed = 1;
    // Bias partially degraded states towards further failures and reweight (unbiased either way;
    // without it rare losses need orders of magnitude more trials). Off: plain simulation.
    bool failure_biasing = true;
};

// A trial is one regenerative cycle (from all devices up back to all devices up); the estimate is
// the mean time between data-loss events, which is what Eq. 2 approximates (docs/selection.md).
struct MonteCarloResult {
    double mean_seconds = 0;   // estimated MTTDL
    double standard_error = 0; // of the mean
    std::uint64_t trials = 0;
};

MonteCarloResult simulate_mttdl(const MonteCarloSetup& setup);

} // namespace iosig
