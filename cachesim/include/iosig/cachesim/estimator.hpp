// The estimator: a workload, a method and the resolved parameters in; per-write predicted costs,
// dirty bytes and states out, side by side with the naive size / bandwidth baseline.
#pragma once

#include "iosig/cachesim/kernel_state.hpp"
#include "iosig/cachesim/parameters.hpp"
#include "iosig/cachesim/syscall_model.hpp"
#include "iosig/cachesim/workload.hpp"

#include <span>
#include <vector>

namespace iosig::cachesim {

// SimGrid's model: size / device write bandwidth, whatever the method (paper 001, Sect. 5-6).
double baseline_cost(const ModelParameters& p, double size);

struct PredictedWrite {
    double start = 0;       // simulated time the call starts (after its delay)
    double cost = 0;        // seconds, on average over the phase of the kernel's sleeps
    double typical = 0;     // seconds in a typical run: the paced pause as the median number of
                            // whole sleeps (median_sleep_time); the per-write figure to compare
                            // with one run or a per-write median. Equals `cost` without pauses.
    double baseline = 0;    // seconds, naive model
    double pause = 0;       // seconds of it spent throttled
    double dirty_after = 0; // bytes dirty (incl. write-back) after the call; 0 for direct IO
    CacheState state = CacheState::no_flush;
    int syscalls = 1; // write() calls (stdio: 0 when the data only went into the buffer)
};

struct Prediction {
    Method method = Method::buffered;
    std::vector<PredictedWrite> writes;
    std::vector<DirtyPoint> trajectory; // predicted dirty bytes over simulated time
    double total_cost = 0;              // sum of write costs
    double total_baseline = 0;          // sum of baseline costs
    double elapsed = 0;                 // simulated time including delays
};

struct EstimatorOptions {
    bool record_trajectory = false;
    InitialState initial;                 // where the cache starts (see initial_state_from)
    std::uint64_t existing_file_size = 0; // sync: bytes the file held before (Eq. 3 reads)
};

// Runs `method` over the workload. Direct IO requires sizes and offsets that are multiples of the
// block size (check with validate_for_method first).
Prediction predict(const ModelParameters& p, Method method, std::span<const WriteRequest> workload,
                   const EstimatorOptions& options = {});

// An error for the first write the method cannot perform ("line N: ..."), or empty.
std::string validate_for_method(const ModelParameters& p, Method method,
                                std::span<const WriteRequest> workload);

// The cache as the kernel reports it now: other processes' dirty and write-back bytes.
InitialState initial_state_from(const KernelDirtyState& state);

} // namespace iosig::cachesim
