// Small statistics the measurements need: percentiles, medians, least squares.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace iosig::calibrate {

// Linear interpolation between closest ranks; `q` in [0, 1]. Empty input: 0.
double percentile(std::vector<double> values, double q);
double median(std::vector<double> values);

struct LinearFit {
    double intercept = 0;
    double slope = 0;
    double r_squared = 0;
    std::size_t points = 0;
};

// Ordinary least squares y = intercept + slope * x (weights optional, same length as x).
std::optional<LinearFit> fit_line(const std::vector<double>& x, const std::vector<double>& y,
                                  const std::vector<double>& weights = {});

// Theil-Sen line: the median of the slopes between every pair of points, the intercept the median
// of y - slope * x. Robust to up to ~29 % disturbed points (a preempted timing), unlike least
// squares. r_squared is that of the robust line on all points.
std::optional<LinearFit> fit_line_robust(const std::vector<double>& x,
                                         const std::vector<double>& y);

// Least squares y ~ X b subject to b >= 0, for a handful of columns (exact: tries every active
// set). `rows` are the rows of X. Returns nullopt when no subset gives a solvable system.
std::optional<std::vector<double>>
nonnegative_least_squares(const std::vector<std::vector<double>>& rows,
                          const std::vector<double>& y);

} // namespace iosig::calibrate
