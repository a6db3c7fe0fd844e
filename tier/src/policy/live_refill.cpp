// The live-refill estimate (live_refill.hpp).
#include "live_refill.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace iosig::tier::detail {
namespace {

std::uint64_t lowest_bit(std::uint64_t i) {
    return i & (~i + 1);
}

// The epochs in which lines of age bucket b left, as of `epoch` (ages count from 1 in the epoch a
// line left): [epoch + 2 - 2^b, epoch + 1 - 2^(b-1)], clipped at 0. False when no epoch is that
// old.
bool bucket_epochs(int b, std::uint64_t epoch, std::uint64_t& first, std::uint64_t& last) {
    const std::uint64_t youngest = std::uint64_t{1} << (b - 1);
    if (youngest > epoch + 1) return false;
    last = epoch + 1 - youngest;
    first = epoch + 2 > 2 * youngest ? epoch + 2 - 2 * youngest : 0;
    return true;
}

} // namespace

EpochCounts::EpochCounts(std::uint64_t window) : window_(std::max<std::uint64_t>(1, window)) {}

void EpochCounts::rebuild() {
    tree_.assign(counts_.size() + 1, 0);
    for (std::uint64_t i = 1; i < tree_.size(); ++i) {
        tree_[i] += counts_[i - 1];
        if (const std::uint64_t parent = i + lowest_bit(i); parent < tree_.size())
            tree_[parent] += tree_[i];
    }
}

// Moves the window so that `newest` is its last epoch but the window's worth before it are kept;
// O(window), once per window of epochs.
void EpochCounts::slide_to(std::uint64_t newest) {
    const std::uint64_t new_base = newest + 1 - window_;
    const std::uint64_t shift = std::min<std::uint64_t>(new_base - base_, counts_.size());
    std::int64_t merged = 0;
    for (std::uint64_t i = 0; i < counts_.size() && i <= shift; ++i)
        merged += counts_[i];
    std::vector<std::int64_t> kept(window_, 0);
    kept[0] = merged;
    for (std::uint64_t i = shift + 1; i < counts_.size(); ++i)
        kept[i - shift] = counts_[i];
    counts_ = std::move(kept);
    base_ = new_base;
    rebuild();
}

void EpochCounts::add(std::uint64_t epoch, std::int64_t delta) {
    if (epoch >= base_ + 2 * window_) slide_to(epoch);
    const std::uint64_t index = epoch < base_ ? 0 : epoch - base_;
    if (index >= counts_.size()) {
        counts_.resize(
            std::min(2 * window_, std::max<std::uint64_t>(index + 1, counts_.size() * 2)));
        rebuild();
    }
    counts_[index] += delta;
    for (std::uint64_t i = index + 1; i < tree_.size(); i += lowest_bit(i))
        tree_[i] += delta;
}

std::int64_t EpochCounts::before(std::uint64_t epoch) const {
    if (epoch <= base_ || tree_.empty()) return 0;
    std::int64_t sum = 0;
    for (std::uint64_t i = std::min<std::uint64_t>(epoch - base_, tree_.size() - 1); i > 0;
         i -= lowest_bit(i))
        sum += tree_[i];
    return sum;
}

std::int64_t EpochCounts::between(std::uint64_t first, std::uint64_t last) const {
    return before(last + 1) - before(first);
}

void LiveRefillEstimate::left_shadow(Slot slot, std::uint64_t epoch) {
    if (slot >= left_at_.size())
        left_at_.resize(std::max<std::size_t>(slot + 1, left_at_.size() * 2));
    left_at_[slot] = static_cast<std::uint32_t>(epoch);
    outside_by_epoch_.add(epoch, 1);
}

void LiveRefillEstimate::ended(Slot slot, std::uint64_t epoch, bool revived) {
    const std::uint64_t left =
        epoch - static_cast<std::uint32_t>(static_cast<std::uint32_t>(epoch) - left_at_[slot]);
    outside_by_epoch_.add(left, -1);
    if (revived) ++revivals_[std::bit_width(epoch - left + 1)];
}

std::int64_t LiveRefillEstimate::outside_in_bucket(int b, std::uint64_t epoch) const {
    std::uint64_t first = 0, last = 0;
    return bucket_epochs(b, epoch, first, last) ? outside_by_epoch_.between(first, last) : 0;
}

void LiveRefillEstimate::close_epoch(std::uint64_t epoch) {
    std::uint64_t first = 0, last = 0;
    for (int b = 1; b < buckets && bucket_epochs(b, epoch, first, last); ++b)
        exposure_[b] += static_cast<double>(outside_by_epoch_.between(first, last));
}

double LiveRefillEstimate::expected_live(std::uint64_t epoch) const {
    int oldest = 0;
    std::uint64_t first = 0, last = 0;
    while (oldest + 1 < buckets && bucket_epochs(oldest + 1, epoch, first, last))
        ++oldest;
    double live = 0;
    double older_hazard = 0; // expected revivals per line over the buckets above b
    for (int b = oldest; b >= 1; --b) {
        const double width = static_cast<double>(std::uint64_t{1} << (b - 1));
        const double hazard = (static_cast<double>(revivals_[b]) + 1) / (exposure_[b] + 1);
        const auto lines = static_cast<double>(outside_in_bucket(b, epoch));
        live += lines * (1 - std::exp(-(older_hazard + hazard * width / 2)));
        older_hazard += hazard * width;
    }
    return live;
}

} // namespace iosig::tier::detail
