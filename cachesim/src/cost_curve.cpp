// Piecewise-linear cost curves of synchronous writes (see cost_curve.hpp).
#include "iosig/cachesim/cost_curve.hpp"

#include <algorithm>
#include <map>

namespace iosig::cachesim {

CostCurve::CostCurve(std::vector<std::pair<double, double>> points) {
    std::map<double, double> by_size;
    for (const auto& [size, cost] : points)
        if (size > 0 && cost > 0) by_size[size] = cost;
    double floor = 0;
    for (const auto& [size, cost] : by_size) {
        floor = std::max(floor, cost);
        points_.emplace_back(size, floor);
    }
}

namespace {

double along(const std::pair<double, double>& a, const std::pair<double, double>& b, double x) {
    const double slope = (b.second - a.second) / (b.first - a.first);
    return a.second + (x - a.first) * slope;
}

} // namespace

double CostCurve::cost(double size) const {
    if (points_.empty()) return 0;
    if (points_.size() == 1) return points_.front().second;
    if (size <= points_.front().first)
        return std::max(0.5 * points_.front().second, along(points_[0], points_[1], size));
    if (size >= points_.back().first)
        return along(points_[points_.size() - 2], points_.back(), size);
    const auto upper =
        std::upper_bound(points_.begin(), points_.end(), size,
                         [](double s, const std::pair<double, double>& p) { return s < p.first; });
    return along(*(upper - 1), *upper, size);
}

} // namespace iosig::cachesim
