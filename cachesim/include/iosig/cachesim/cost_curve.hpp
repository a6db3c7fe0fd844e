// A synchronous write's measured cost as a function of its size, for devices where Eq. 2's line
// (L_sync + size / B_dev) does not hold. On this machine's virtio disk an O_DIRECT|O_SYNC write of
// 4 KiB costs 2.5 ns per byte more than the large-size slope, so a line fitted across 4 KiB..16 MiB
// misses 64 KiB-1 MiB writes by 20-30 %; the calibration records the per-size medians instead and
// the model interpolates between them (docs/cachesim.md, "Measured cost curves").
#pragma once

#include <utility>
#include <vector>

namespace iosig::cachesim {

class CostCurve {
public:
    CostCurve() = default;
    // (size in bytes, cost in seconds) pairs in any order. Points with a non-positive size or cost
    // are dropped; among equal sizes the last one wins. Costs are made non-decreasing in the size
    // (a larger write never costs less), which smooths a noisy median without moving a good one.
    explicit CostCurve(std::vector<std::pair<double, double>> points);

    bool empty() const { return points_.empty(); }
    const std::vector<std::pair<double, double>>& points() const { return points_; }

    // Linear interpolation between the two measured sizes around `size`. Beyond the largest size
    // the last segment's slope continues (the device's streaming rate); below the smallest the
    // first segment's slope, never under half the smallest cost (a write still pays its fixed
    // cost). A curve of one point is flat.
    double cost(double size) const;

private:
    std::vector<std::pair<double, double>> points_;
};

} // namespace iosig::cachesim
