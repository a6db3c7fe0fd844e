// LeCaR (lecar.hpp).
#include "lecar.hpp"

#include <algorithm>
#include <cmath>

namespace iosig::tier::detail {

namespace {

// Each history holds at most half the cache (trim), and one entry more before it is trimmed; 0
// when the owner does not know the cache's entries.
std::size_t history_entries(const PolicyConfig& config) {
    return config.expected_entries ? config.expected_entries / 2 + 1 : 0;
}

} // namespace

LecarPolicy::LecarPolicy(const PolicyConfig& config)
    : config_(config), rng_(config.seed), lru_history_(history_entries(config)),
      lfu_history_(history_entries(config)) {
    lru_.reserve_slots(config.expected_entries);
    lfu_.reserve_slots(config.expected_entries);
    key_of_.resize(config.expected_entries);
    size_of_.resize(config.expected_entries);
}

void LecarPolicy::on_hit(Slot slot, const Access&) {
    ++clock_;
    lru_.move_to_front(slot);
    lfu_.increment(slot);
}

void LecarPolicy::penalise(bool lru, std::uint64_t evicted_at) {
    const double n = static_cast<double>(std::max<std::size_t>(resident_, 1));
    const double discount = std::pow(config_.lecar_discount_base, 1.0 / n);
    const double regret = std::pow(discount, static_cast<double>(clock_ - evicted_at));
    double w_lru = w_lru_, w_lfu = 1 - w_lru_;
    if (lru)
        w_lru *= std::exp(-config_.lecar_learning_rate * regret);
    else
        w_lfu *= std::exp(-config_.lecar_learning_rate * regret);
    w_lru_ =
        std::clamp(w_lru / (w_lru + w_lfu), config_.lecar_min_weight, 1 - config_.lecar_min_weight);
}

void LecarPolicy::on_miss(const Access& access) {
    ++clock_;
    restored_freq_ = 1;
    if (auto e = lru_history_.take(access.key)) {
        penalise(true, e->time);
        restored_freq_ = e->freq + 1;
    } else if (auto f = lfu_history_.take(access.key)) {
        penalise(false, f->time);
        restored_freq_ = f->freq + 1;
    }
}

Slot LecarPolicy::choose_victim(const Access&) {
    const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
    pending_by_lru_ = u < w_lru_;
    return pending_by_lru_ ? lru_.back() : lfu_.min();
}

void LecarPolicy::trim(GhostList& history) {
    const std::uint64_t bound = config_.capacity / 2;
    while (!history.empty() && history.bytes() > bound)
        history.pop_back();
}

void LecarPolicy::on_evict(Slot slot) {
    const GhostList::Entry ghost{key_of_[slot], size_of_[slot], clock_, lfu_.frequency(slot)};
    lru_.unlink(slot);
    lfu_.erase(slot);
    --resident_;
    GhostList& history = pending_by_lru_ ? lru_history_ : lfu_history_;
    history.push_front(ghost);
    trim(history);
}

void LecarPolicy::on_insert(Slot slot, const Access& access) {
    if (slot >= key_of_.size()) {
        const std::size_t n = std::max<std::size_t>(slot + 1, key_of_.size() * 2);
        key_of_.resize(n);
        size_of_.resize(n);
    }
    key_of_[slot] = access.key;
    size_of_[slot] = access.size;
    lru_.push_front(slot);
    lfu_.insert(slot, restored_freq_);
    restored_freq_ = 1;
    ++resident_;
}

void LecarPolicy::on_erase(Slot slot) {
    lru_.unlink(slot);
    lfu_.erase(slot);
    --resident_;
}

} // namespace iosig::tier::detail
