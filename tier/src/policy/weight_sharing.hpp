// The paper's online learner (Sec. 3.1, Alg. "GetVictim" and "WeightSharing: Weight Adjust").
//
// LRU, LFU and Random are experts. Each expert runs a metadata-only shadow of the cache that it
// manages alone, so every expert makes its own eviction decisions ("predictions") whether or not it
// is the chosen one. A misprediction of expert E is a miss, in E's shadow, on a key E evicted in
// the same epoch; the prediction vector of evicted keys is cleared every epoch. An epoch is
// EPOCH_WIDTH polling iterations of the miss queue (here: iteration_misses misses of the real cache
// each). At the end of an epoch, an expert whose mispredictions reach THRESHOLD * (misses of the
// real cache in the epoch) is penalised, w_E *= exp(-eta * mispredictions_E / misses); a fixed
// share of the total weight is redistributed (an expert that was bad in an earlier phase can win
// again); the weights are normalised into probabilities, and the most probable expert picks the
// victims of the next epoch, with a margin against flapping (switch_margin in the .cpp). An epoch
// ends early once the chosen expert alone has mispredicted THRESHOLD x the epoch's length, and the
// first epoch with mispredictions already after one polling iteration in which the starting expert
// mispredicted a THRESHOLD share of the misses (the starting expert is a guess). A switch the
// weights propose happens only if the new expert's shadow has also missed less than the current
// one's over the last epochs (the switch guard in end_epoch), and, unless it is decisive (early in
// the trace only), once the new expert's shadow has saved what the switch costs to refill. The
// shadows alone can also switch between LRU and LFU, at twelve times the estimated cost counting
// only the lines likely to be asked for again (live_refill.hpp; the shadow switch in the .cpp), for
// a polluted LFU that never crosses THRESHOLD. A switch that lost (the expert it left would have
// missed less since) makes the next ones wait for more evidence (the losing-switch rule), so that
// two experts taking turns in the lead do not make the learner pay a refill every turn.
//
// The chosen expert's decision is executed on the real cache by evicting first a resident key its
// shadow no longer holds (so the real cache converges to that expert's cache after a switch), then
// what it evicted in its shadow for this request, then its rule applied to the real cache (LRU
// tail, lowest frequency, random resident). The learner starts with LFU: on IRM traffic LRU's
// mispredictions stay under THRESHOLD, so a learner starting with LRU would never leave it, while
// LFU on recency-driven traffic crosses THRESHOLD within an epoch.
#pragma once

#include "iosig/tier/cache_model.hpp"
#include "live_refill.hpp"
#include "orders.hpp"

#include <array>
#include <random>

namespace iosig::tier::detail {

class WeightSharingPolicy final : public EvictionPolicy {
public:
    explicit WeightSharingPolicy(const PolicyConfig& config);
    std::string_view name() const override { return "ws"; }
    void on_hit(Slot slot, const Access& access) override;
    void on_miss(const Access& access) override;
    Slot choose_victim(const Access& incoming) override;
    void on_evict(Slot slot) override;
    void on_insert(Slot slot, const Access& access) override;
    void on_erase(Slot slot) override;
    void on_busy(Slot slot, const Access& access) override;
    std::optional<LearnerState> learner_state() const override;
    void prepare_lookup(Key key) const override;
    Announces announces() const override { return Announces::keys; }
    std::optional<Key> upcoming_victim_key() const override;

private:
    void observe(const Access& access, bool real_miss);
    void end_epoch();
    void remove_resident(Slot slot);
    void mark_outside(int expert, Slot slot);
    void unmark_outside(int expert, Slot slot, bool revived);
    int shadow_switch_target(int current, double evidence_factor) const;
    double judged_evidence_factor() const;
    std::uint64_t epoch_length() const;

    PolicyConfig config_;
    std::mt19937_64 rng_;
    // The real cache, ordered three ways so that any expert's rule can be applied to it.
    LruOrder lru_;
    LfuOrder lfu_;
    RandomSet random_;
    std::vector<Key> key_of_;
    FlatMap slot_of_;
    std::size_t resident_ = 0;

    std::array<CacheModel, expert_count> shadow_;
    // Per expert, the resident slots whose keys its shadow does not hold (the expert would have
    // evicted them), in the order they left the shadow: the chosen expert evicts these first, so
    // the real cache converges to the chosen expert's shadow after a switch.
    std::array<LruOrder, expert_count> outside_;
    std::array<std::vector<bool>, expert_count> is_outside_;
    // How many outside_ lines are alive, for LRU and LFU (indexed by Expert): the shadow switch
    // targets only them, so Random's outside lines are not tracked.
    std::array<LiveRefillEstimate, 2> live_refill_;
    static_assert(static_cast<int>(Expert::lru) < 2 && static_cast<int>(Expert::lfu) < 2);
    std::array<FlatMap, expert_count> predicted_;         // keys each expert evicted in this epoch
    std::array<std::vector<Key>, expert_count> proposed_; // ... and for the current request
    std::array<std::uint64_t, expert_count> epoch_mispredictions_{};
    std::array<double, expert_count> weight_{1, 1, 1};
    std::uint64_t epoch_misses_ = 0;
    bool first_verdict_given_ = false; // an epoch has ended with mispredictions (see observe())
    std::uint64_t first_verdict_epoch_ = 0;
    std::array<std::uint64_t, expert_count> epoch_shadow_misses_{};
    std::array<double, expert_count> shadow_misses_{}; // decayed over epochs (end_epoch)
    // Per expert, the misses its shadow saved against the current expert's since the last switch
    // (a running sum that never goes below zero; end_epoch's switch cost rule).
    std::array<double, expert_count> saved_since_switch_{};
    // The losing-switch rule: misses so far (each shadow's, the real cache's), their values at the
    // last switch, the expert it left, and the factor on the evidence switches need.
    std::array<std::uint64_t, expert_count> total_shadow_misses_{};
    std::uint64_t total_misses_ = 0;
    std::array<std::uint64_t, expert_count> shadow_misses_at_switch_{};
    std::uint64_t misses_at_switch_ = 0;
    int left_at_switch_ = -1; // none yet
    double evidence_factor_ = 1;
    LearnerState state_;
};

} // namespace iosig::tier::detail
