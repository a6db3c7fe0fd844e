// "did you mean" for misspelled keys, enum values and device names in node files.
#include "node_yaml_internal.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace iosig::node_yaml_detail {
namespace {

// Optimal string alignment distance (Levenshtein plus adjacent transpositions), case-insensitive:
// the usual typo classes (a missing, extra, wrong or swapped letter) each cost 1.
std::size_t typo_distance(std::string_view a, std::string_view b) {
    const auto low = [](char c) { return std::tolower(static_cast<unsigned char>(c)); };
    const std::size_t n = a.size(), m = b.size();
    std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
    for (std::size_t i = 0; i <= n; ++i)
        d[i][0] = i;
    for (std::size_t j = 0; j <= m; ++j)
        d[0][j] = j;
    for (std::size_t i = 1; i <= n; ++i) {
        for (std::size_t j = 1; j <= m; ++j) {
            const std::size_t cost = low(a[i - 1]) == low(b[j - 1]) ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && low(a[i - 1]) == low(b[j - 2]) && low(a[i - 2]) == low(b[j - 1]))
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    }
    return d[n][m];
}

} // namespace

std::string closest_spelling(std::string_view word,
                             const std::vector<std::string_view>& candidates) {
    if (word.empty() || word.size() > 64) return {};
    // Up to one edit per three letters: "sequental" -> "sequential", but "abc" is not "xyz".
    const std::size_t budget = std::max<std::size_t>(1, word.size() / 3);
    std::string best;
    std::size_t best_distance = budget + 1;
    for (std::string_view candidate : candidates) {
        if (candidate.size() > word.size() + budget || word.size() > candidate.size() + budget)
            continue;
        const std::size_t distance = typo_distance(word, candidate);
        if (distance < best_distance && distance < std::max(candidate.size(), word.size())) {
            best_distance = distance;
            best = std::string(candidate);
        }
    }
    return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string_view>& candidates) {
    const std::string best = closest_spelling(word, candidates);
    return best.empty() ? std::string() : " (did you mean '" + best + "'?)";
}

} // namespace iosig::node_yaml_detail
