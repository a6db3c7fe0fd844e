#include "stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace iosig::calibrate {

double percentile(std::vector<double> values, double q) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const double rank = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(rank));
    const std::size_t hi = std::min(lo + 1, values.size() - 1);
    return values[lo] + (values[hi] - values[lo]) * (rank - static_cast<double>(lo));
}

double median(std::vector<double> values) {
    return percentile(std::move(values), 0.5);
}

std::optional<LinearFit> fit_line(const std::vector<double>& x, const std::vector<double>& y,
                                  const std::vector<double>& weights) {
    const std::size_t n = x.size();
    if (n < 2 || y.size() != n || (!weights.empty() && weights.size() != n)) return std::nullopt;
    double sw = 0, sx = 0, sy = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double w = weights.empty() ? 1.0 : weights[i];
        sw += w;
        sx += w * x[i];
        sy += w * y[i];
    }
    const double mx = sx / sw, my = sy / sw;
    double sxx = 0, sxy = 0, syy = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double w = weights.empty() ? 1.0 : weights[i];
        sxx += w * (x[i] - mx) * (x[i] - mx);
        sxy += w * (x[i] - mx) * (y[i] - my);
        syy += w * (y[i] - my) * (y[i] - my);
    }
    if (!(sxx > 0)) return std::nullopt;
    LinearFit f;
    f.slope = sxy / sxx;
    f.intercept = my - f.slope * mx;
    f.r_squared = syy > 0 ? (sxy * sxy) / (sxx * syy) : 1.0;
    f.points = n;
    return f;
}

std::optional<LinearFit> fit_line_robust(const std::vector<double>& x,
                                         const std::vector<double>& y) {
    const std::size_t n = x.size();
    if (n < 2 || y.size() != n) return std::nullopt;
    // (slope, weight) of every pair; the weight |dx| lets far-apart sizes, whose slope the timing
    // noise hardly moves, outvote neighbours.
    std::vector<std::pair<double, double>> slopes;
    double total = 0;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j)
            if (x[j] != x[i]) {
                const double w = std::fabs(x[j] - x[i]);
                slopes.emplace_back((y[j] - y[i]) / (x[j] - x[i]), w);
                total += w;
            }
    if (slopes.empty()) return std::nullopt;
    std::sort(slopes.begin(), slopes.end());
    double weighted_median = slopes.back().first, seen = 0;
    for (const auto& [slope, w] : slopes) {
        seen += w;
        if (seen >= total / 2) {
            weighted_median = slope;
            break;
        }
    }
    LinearFit f;
    f.slope = weighted_median;
    std::vector<double> intercepts;
    for (std::size_t i = 0; i < n; ++i)
        intercepts.push_back(y[i] - f.slope * x[i]);
    f.intercept = median(intercepts);
    double mean_y = 0;
    for (double v : y)
        mean_y += v / static_cast<double>(n);
    double ss_res = 0, ss_tot = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double r = y[i] - (f.intercept + f.slope * x[i]);
        ss_res += r * r;
        ss_tot += (y[i] - mean_y) * (y[i] - mean_y);
    }
    f.r_squared = ss_tot > 0 ? 1 - ss_res / ss_tot : 1.0;
    f.points = n;
    return f;
}

namespace {

// Solves the normal equations restricted to `columns`; nullopt when singular.
std::optional<std::vector<double>> solve_subset(const std::vector<std::vector<double>>& rows,
                                                const std::vector<double>& y,
                                                const std::vector<std::size_t>& columns) {
    const std::size_t k = columns.size();
    std::vector<std::vector<double>> a(k, std::vector<double>(k + 1, 0.0));
    for (std::size_t r = 0; r < rows.size(); ++r) {
        for (std::size_t i = 0; i < k; ++i) {
            for (std::size_t j = 0; j < k; ++j)
                a[i][j] += rows[r][columns[i]] * rows[r][columns[j]];
            a[i][k] += rows[r][columns[i]] * y[r];
        }
    }
    // Gauss-Jordan with partial pivoting; k <= 4.
    for (std::size_t c = 0; c < k; ++c) {
        std::size_t pivot = c;
        for (std::size_t r = c + 1; r < k; ++r)
            if (std::fabs(a[r][c]) > std::fabs(a[pivot][c])) pivot = r;
        if (std::fabs(a[pivot][c]) < 1e-300) return std::nullopt;
        std::swap(a[c], a[pivot]);
        for (std::size_t r = 0; r < k; ++r) {
            if (r == c) continue;
            const double f = a[r][c] / a[c][c];
            for (std::size_t j = c; j <= k; ++j)
                a[r][j] -= f * a[c][j];
        }
    }
    std::vector<double> b(k);
    for (std::size_t i = 0; i < k; ++i)
        b[i] = a[i][k] / a[i][i];
    return b;
}

} // namespace

std::optional<std::vector<double>>
nonnegative_least_squares(const std::vector<std::vector<double>>& rows,
                          const std::vector<double>& y) {
    if (rows.empty()) return std::nullopt;
    const std::size_t columns = rows.front().size();
    std::optional<std::vector<double>> best;
    double best_residual = std::numeric_limits<double>::infinity();
    for (unsigned mask = 1; mask < (1u << columns); ++mask) {
        std::vector<std::size_t> active;
        for (std::size_t c = 0; c < columns; ++c)
            if (mask & (1u << c)) active.push_back(c);
        const auto b = solve_subset(rows, y, active);
        if (!b || std::any_of(b->begin(), b->end(), [](double v) { return v < 0; })) continue;
        std::vector<double> full(columns, 0.0);
        for (std::size_t i = 0; i < active.size(); ++i)
            full[active[i]] = (*b)[i];
        double residual = 0;
        for (std::size_t r = 0; r < rows.size(); ++r) {
            double predicted = 0;
            for (std::size_t c = 0; c < columns; ++c)
                predicted += rows[r][c] * full[c];
            residual += (predicted - y[r]) * (predicted - y[r]);
        }
        if (residual < best_residual) {
            best_residual = residual;
            best = std::move(full);
        }
    }
    return best;
}

} // namespace iosig::calibrate
