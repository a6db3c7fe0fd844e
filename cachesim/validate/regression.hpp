// Least-squares fits for the parameter measurements: many sizes, many repetitions, a line (or a few
// indicator terms) through them. Never the difference of two single timings (shared/NOTES.md).
#pragma once

#include <span>
#include <vector>

namespace iosig::cachesim::validate {

struct LinearFit {
    double intercept = 0;
    double slope = 0;
    double r2 = 0;
    std::size_t samples = 0;
};

// Ordinary least squares y = intercept + slope * x.
LinearFit fit_line(std::span<const double> x, std::span<const double> y);

// The same through the median y of each distinct x (robust against the VM's timing outliers), each
// median weighted by how many samples it summarises.
LinearFit fit_line_medians(std::span<const double> x, std::span<const double> y);

// The median line again, but minimising relative rather than absolute residuals (weights 1/y^2), so
// that 4 KiB writes count as much as 4 MiB ones.
LinearFit fit_line_relative(std::span<const double> x, std::span<const double> y);

// Least absolute relative deviations: minimises sum |y - a - b x| / y over all samples (iteratively
// reweighted least squares). Outliers from a shared machine pull it far less than squares do, and
// it is the fit that suits an evaluation by mean relative error.
LinearFit fit_line_lad_relative(std::span<const double> x, std::span<const double> y);

// Least squares with several regressors: rows[i] are the regressor values of sample i (include a 1
// for an intercept). Returns the coefficients, or empty when the system is singular.
std::vector<double> fit_linear(const std::vector<std::vector<double>>& rows,
                               std::span<const double> y);

double median(std::vector<double> values);

} // namespace iosig::cachesim::validate
