#include "regression.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace iosig::cachesim::validate {

double median(std::vector<double> values) {
    if (values.empty()) return 0;
    const std::size_t mid = values.size() / 2;
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid),
                     values.end());
    double m = values[mid];
    if (values.size() % 2 == 0)
        m = (m +
             *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid))) /
            2;
    return m;
}

namespace {

LinearFit weighted_fit(std::span<const double> x, std::span<const double> y,
                       std::span<const double> w) {
    LinearFit fit;
    double sw = 0, sx = 0, sy = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        sw += w[i];
        sx += w[i] * x[i];
        sy += w[i] * y[i];
    }
    if (sw <= 0) return fit;
    const double mx = sx / sw, my = sy / sw;
    double sxx = 0, sxy = 0, syy = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        sxx += w[i] * (x[i] - mx) * (x[i] - mx);
        sxy += w[i] * (x[i] - mx) * (y[i] - my);
        syy += w[i] * (y[i] - my) * (y[i] - my);
    }
    fit.slope = sxx > 0 ? sxy / sxx : 0;
    fit.intercept = my - fit.slope * mx;
    fit.r2 = (sxx > 0 && syy > 0) ? (sxy * sxy) / (sxx * syy) : 0;
    return fit;
}

} // namespace

LinearFit fit_line(std::span<const double> x, std::span<const double> y) {
    std::vector<double> w(x.size(), 1.0);
    LinearFit fit = weighted_fit(x, y, w);
    fit.samples = x.size();
    return fit;
}

LinearFit fit_line_medians(std::span<const double> x, std::span<const double> y) {
    std::map<double, std::vector<double>> groups;
    for (std::size_t i = 0; i < x.size(); ++i)
        groups[x[i]].push_back(y[i]);
    std::vector<double> gx, gy, gw;
    for (auto& [key, values] : groups) {
        gx.push_back(key);
        gw.push_back(static_cast<double>(values.size()));
        gy.push_back(median(values));
    }
    LinearFit fit = weighted_fit(gx, gy, gw);
    fit.samples = x.size();
    return fit;
}

LinearFit fit_line_relative(std::span<const double> x, std::span<const double> y) {
    std::map<double, std::vector<double>> groups;
    for (std::size_t i = 0; i < x.size(); ++i)
        groups[x[i]].push_back(y[i]);
    std::vector<double> gx, gy, gw;
    for (auto& [key, values] : groups) {
        const double m = median(values);
        if (m <= 0) continue;
        gx.push_back(key);
        gy.push_back(m);
        gw.push_back(static_cast<double>(values.size()) / (m * m));
    }
    LinearFit fit = weighted_fit(gx, gy, gw);
    fit.samples = x.size();
    return fit;
}

LinearFit fit_line_lad_relative(std::span<const double> x, std::span<const double> y) {
    std::vector<double> xs, ys;
    for (std::size_t i = 0; i < x.size(); ++i)
        if (y[i] > 0) {
            xs.push_back(x[i]);
            ys.push_back(y[i]);
        }
    std::vector<double> w(xs.size());
    for (std::size_t i = 0; i < xs.size(); ++i)
        w[i] = 1 / (ys[i] * ys[i]);
    LinearFit fit = weighted_fit(xs, ys, w);
    for (int iteration = 0; iteration < 50; ++iteration) {
        for (std::size_t i = 0; i < xs.size(); ++i) {
            const double relative = std::fabs(ys[i] - fit.intercept - fit.slope * xs[i]) / ys[i];
            w[i] = 1 / (ys[i] * ys[i] * std::max(relative, 1e-4));
        }
        const LinearFit next = weighted_fit(xs, ys, w);
        const bool settled =
            std::fabs(next.slope - fit.slope) <= 1e-9 * std::fabs(fit.slope) &&
            std::fabs(next.intercept - fit.intercept) <= 1e-9 * std::fabs(fit.intercept);
        fit = next;
        if (settled) break;
    }
    fit.samples = xs.size();
    return fit;
}

std::vector<double> fit_linear(const std::vector<std::vector<double>>& rows,
                               std::span<const double> y) {
    if (rows.empty()) return {};
    const std::size_t k = rows.front().size();
    // Normal equations (A^T A) b = A^T y, solved by Gaussian elimination with partial pivoting.
    std::vector<std::vector<double>> m(k, std::vector<double>(k + 1, 0.0));
    for (std::size_t i = 0; i < rows.size(); ++i)
        for (std::size_t a = 0; a < k; ++a) {
            for (std::size_t b = 0; b < k; ++b)
                m[a][b] += rows[i][a] * rows[i][b];
            m[a][k] += rows[i][a] * y[i];
        }
    for (std::size_t col = 0; col < k; ++col) {
        std::size_t pivot = col;
        for (std::size_t r = col + 1; r < k; ++r)
            if (std::fabs(m[r][col]) > std::fabs(m[pivot][col])) pivot = r;
        if (std::fabs(m[pivot][col]) < 1e-300) return {};
        std::swap(m[col], m[pivot]);
        for (std::size_t r = 0; r < k; ++r) {
            if (r == col) continue;
            const double f = m[r][col] / m[col][col];
            for (std::size_t c = col; c <= k; ++c)
                m[r][c] -= f * m[col][c];
        }
    }
    std::vector<double> coefficients(k);
    for (std::size_t i = 0; i < k; ++i)
        coefficients[i] = m[i][k] / m[i][i];
    return coefficients;
}

} // namespace iosig::cachesim::validate
