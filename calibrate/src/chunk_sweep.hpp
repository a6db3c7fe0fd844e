// The chunk sweep of one file system and its Eq. 3 fit (docs/calibrate.md, "The chunk sweep and
// Eq. 3"), and the phase limits every measurement of a run takes.
#pragma once

#include "calibration.hpp"
#include "discovery.hpp"
#include "measure.hpp"
#include "progress.hpp"

#include <cstdint>

namespace iosig::calibrate {

// A phase of `seconds` and at least `min_ios` IOs that reports its progress to `progress`.
PhaseLimits limits_for(Progress& progress, double seconds, std::uint64_t min_ios);

// Sweeps the chunk sizes within `budget` seconds into m.sweep (three passes; on a `throttled`
// device, one behind a blk-throttle limit, each size keeps the passes together, else its fastest).
void run_sweep(MountIo& io, MountMeasurements& m, const MountTarget& target, bool quick,
               bool throttled, double budget, Progress& progress);

// Fits Eq. 3 to m.sweep into m.fit (a note instead when the sweep is too short).
void fit_sweep(MountMeasurements& m, const MountTarget& target, bool throttled);

} // namespace iosig::calibrate
