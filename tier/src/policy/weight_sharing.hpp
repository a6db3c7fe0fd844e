// The paper's online learner (Sec. 3.1, Alg. "GetVictim" and "WeightSharing: Weight Adjust"): LRU, LFU
// and Random are experts; the expert with the highest probability picks every victim of the real
// cache. Each expert's predictions are the evictions it makes in a metadata-only shadow of the cache
// that it manages alone, so every expert is judged on its own decisions even while it is not chosen.
// A misprediction of expert E is a miss (in E's shadow) on a key E evicted in the same epoch. An epoch
// is EPOCH_WIDTH polling iterations of the miss queue; at its end each expert whose mispredictions
// reach THRESHOLD * (misses of the real cache in the epoch) is penalised, w_E *= exp(-eta * loss_E)
// with loss_E = mispredictions / misses, a fixed share of the total weight is redistributed (so an
// expert that was bad in an earlier phase can win again), and the weights become probabilities.
#pragma once

#include <array>
#include <random>

#include "iosig/tier/cache_model.hpp"
#include "orders.hpp"

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
    std::optional<LearnerState> learner_state() const override;

private:
    void observe(const Access& access, bool real_miss);
    void end_epoch();
    void remove_resident(Slot slot);

    PolicyConfig config_;
    std::mt19937_64 rng_;
    // The real cache, ordered three ways so that any expert can pick its victim.
    LruOrder lru_;
    LfuOrder lfu_;
    RandomSet random_;
    std::vector<Key> key_of_;
    std::vector<std::uint64_t> size_of_;
    GhostList frequency_history_;
    FlatMap slot_of_;
    std::array<GhostList, expert_count> recent_;
    std::array<std::vector<Key>, expert_count> mirror_;
    std::size_t resident_ = 0;

    std::array<CacheModel, expert_count> shadow_;
    std::array<FlatMap, expert_count> predicted_; // keys each expert evicted in this epoch
    std::array<std::uint64_t, expert_count> epoch_mispredictions_{};
    std::array<double, expert_count> weight_{1, 1, 1};
    FlatMap evicted_by_; // key -> expert that evicted it in this epoch
    FlatMap seen_;
    std::uint64_t epoch_misses_ = 0;
    std::uint64_t epoch_contested_ = 0; // requests some expert mispredicted
    std::uint64_t epoch_length_ = 0; // misses; fixed at the start of each epoch
    LearnerState state_;
};

} // namespace iosig::tier::detail
