// How many of the lines a switch would drop are still alive: the learner's estimate of what a
// switch to an expert costs (weight_sharing.cpp, the shadow switch).
//
// A switch to expert E evicts first the lines the real cache holds and E's shadow does not (E's
// "outside" lines). Each of them costs a miss only if it is asked for again; under LFU pollution
// (a long trace whose popular objects change) most are dead, and counting all of them as the cost
// keeps the learner with a polluted LFU for good (docs/tier-learner-evidence.md, "LFU pollution").
//
// The estimate is a survival analysis of the outside lines by age, in epochs since they left the
// shadow, with log2 age buckets. Per bucket b it keeps the exposure E_b (line-epochs spent outside
// at that age) and the revivals R_b (hits on outside lines of that age), so the revival hazard is
// h_b = (R_b + 1) / (E_b + 1) per line-epoch; the +1s make a bucket without data count as alive.
// A line now in bucket b is revived later with probability 1 - exp(-(h_b w_b / 2 + sum over older
// buckets b' of h_b' w_b')), w the bucket widths, and the estimate is that probability summed over
// the outside lines. Lines that have sat outside for ages at which nothing was revived cost about
// nothing; lines of ages with little exposure cost between 0.39 (1 - exp(-1/2), the oldest bucket,
// whose future has not been seen) and 1 miss each. The learner waits a few cache turnovers before
// it trusts the estimate (weight_sharing.cpp, shadow_switch_target).
#pragma once

#include "iosig/tier/policy.hpp"

#include <array>
#include <cstdint>
#include <vector>

namespace iosig::tier::detail {

// Counts per epoch with prefix sums (a Fenwick tree), over a sliding window: the last `window` to
// 2 x `window` epochs are kept apart, older ones are merged into the window's first epoch. Memory
// stays bounded however long the cache runs (32 bytes per epoch of the window at most). Ages
// beyond the window saturate: the oldest lines look as old as the window, no older.
class EpochCounts {
public:
    explicit EpochCounts(std::uint64_t window = std::uint64_t{1} << 16);
    // `epoch` may be older than the window (it then counts at the window's first epoch), and newer
    // than every epoch so far (the window then slides).
    void add(std::uint64_t epoch, std::int64_t delta);
    std::int64_t before(std::uint64_t epoch) const; // summed over epochs [0, epoch)
    std::int64_t between(std::uint64_t first, std::uint64_t last) const; // [first, last]
    std::uint64_t first_kept_epoch() const { return base_; }

private:
    void slide_to(std::uint64_t newest);
    void rebuild();

    std::uint64_t window_;
    std::uint64_t base_ = 0;           // the epoch at index 0; older epochs are merged into it
    std::vector<std::int64_t> counts_; // per epoch from base_, size <= 2 x window
    std::vector<std::int64_t> tree_;   // Fenwick over counts_, 1-based, size counts_.size() + 1
};

class LiveRefillEstimate {
public:
    // Makes room for slots 0 .. n-1 now (left_shadow then never grows its table).
    void reserve_slots(std::size_t n) {
        if (n > left_at_.size()) left_at_.resize(n);
    }
    // `slot` left the shadow in `epoch` while resident in the real cache.
    void left_shadow(Slot slot, std::uint64_t epoch);
    // `slot` is no longer outside: asked for again (revived) or gone from the real cache.
    void ended(Slot slot, std::uint64_t epoch, bool revived);
    // Adds one epoch of exposure for every line outside now; call once per epoch.
    void close_epoch(std::uint64_t epoch);
    // Expected number of lines outside now that will be asked for again.
    double expected_live(std::uint64_t epoch) const;

private:
    static constexpr int buckets = 64; // bucket b holds ages [2^(b-1), 2^b) epochs, age >= 1
    // Lines outside now whose age is in bucket b.
    std::int64_t outside_in_bucket(int b, std::uint64_t epoch) const;

    // Per slot: the epoch it left the shadow, modulo 2^32 (ages are found as differences, exact
    // below 2^32 epochs, i.e. 10^12 misses).
    std::vector<std::uint32_t> left_at_;
    EpochCounts outside_by_epoch_; // outside lines by the epoch they left
    std::array<double, buckets> exposure_{};
    std::array<std::uint64_t, buckets> revivals_{};
};

} // namespace iosig::tier::detail
