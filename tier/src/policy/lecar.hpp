// LeCaR (Vietri et al., HotStorage'18): regret minimisation over two experts, LRU and LFU, acting
// on the one cache. Each expert's evictions go to its own history (half the cache each); a miss on
// a key in expert E's history is a regret for E, and E's weight is multiplied by exp(-lambda *
// d^t), where t is how long ago the eviction happened and d = discount_base^(1/N) (N = entries in
// the cache). The victim is LRU's with probability w_LRU, else LFU's. Weights stay in [min_weight,
// 1 - min_weight].
#pragma once

#include "orders.hpp"

#include <random>

namespace iosig::tier::detail {

class LecarPolicy final : public EvictionPolicy {
public:
    explicit LecarPolicy(const PolicyConfig& config);
    std::string_view name() const override { return "lecar"; }
    void on_hit(Slot slot, const Access& access) override;
    void on_miss(const Access& access) override;
    Slot choose_victim(const Access& incoming) override;
    void on_evict(Slot slot) override;
    void on_insert(Slot slot, const Access& access) override;
    void on_erase(Slot slot) override;
    // A request's key is looked up in both ghost lists.
    void prepare_lookup(Key key) const override {
        lru_history_.prepare_lookup(key);
        lfu_history_.prepare_lookup(key);
    }

    double lru_weight() const { return w_lru_; }

private:
    void penalise(bool lru, std::uint64_t evicted_at);
    void trim(GhostList& history);

    PolicyConfig config_;
    std::mt19937_64 rng_;
    LruOrder lru_;
    LfuOrder lfu_;
    GhostList lru_history_, lfu_history_;
    double w_lru_ = 0.5;
    std::vector<Key> key_of_;
    std::vector<std::uint64_t> size_of_;
    std::size_t resident_ = 0;
    std::uint64_t clock_ = 0;
    std::uint64_t restored_freq_ = 1; // frequency the missed key had in a history, + 1
    bool pending_by_lru_ = true;
};

} // namespace iosig::tier::detail
