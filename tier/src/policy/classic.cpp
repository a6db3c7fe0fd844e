// The classic single-order policies: LRU, LFU (in-cache frequency, FIFO among equals) and Random.
#include "classic.hpp"

namespace iosig::tier::detail {

void LruPolicy::on_hit(Slot slot, const Access&) {
    order_.move_to_front(slot);
}
Slot LruPolicy::choose_victim(const Access&) {
    return order_.back();
}
void LruPolicy::on_evict(Slot slot) {
    order_.unlink(slot);
}
void LruPolicy::on_insert(Slot slot, const Access&) {
    order_.push_front(slot);
}
void LruPolicy::on_erase(Slot slot) {
    order_.unlink(slot);
}
std::optional<Slot> LruPolicy::upcoming_victim(unsigned later) const {
    Slot s = order_.back();
    for (; later > 0 && s != nil; --later)
        s = order_.next_toward_front(s);
    if (s == nil) return std::nullopt;
    return s;
}

void LfuPolicy::on_hit(Slot slot, const Access&) {
    order_.increment(slot);
}
Slot LfuPolicy::choose_victim(const Access&) {
    return order_.min();
}
void LfuPolicy::on_evict(Slot slot) {
    order_.erase(slot);
}
void LfuPolicy::on_insert(Slot slot, const Access&) {
    order_.insert(slot, 1);
}
void LfuPolicy::on_erase(Slot slot) {
    order_.erase(slot);
}
std::optional<Slot> LfuPolicy::upcoming_victim(unsigned later) const {
    const Slot s = order_.nth_from_min(later);
    if (s == nil) return std::nullopt;
    return s;
}

RandomPolicy::RandomPolicy(std::uint64_t seed, std::size_t slots) : rng_(seed) {
    set_.reserve_slots(slots);
    for (std::uint64_t& draw : next_draws_)
        draw = rng_();
}
void RandomPolicy::on_hit(Slot, const Access&) {}
Slot RandomPolicy::choose_victim(const Access&) {
    const Slot victim = set_.pick_by_draw(next_draws_[0]);
    next_draws_[0] = next_draws_[1];
    next_draws_[1] = rng_();
    // The next victim's member was loaded at the last eviction; now its position, and the member
    // of the one after it.
    set_.prefetch_position_of_pick(next_draws_[0]);
    set_.prefetch_member(next_draws_[1]);
    return victim;
}
void RandomPolicy::on_evict(Slot slot) {
    set_.erase(slot);
}
void RandomPolicy::on_insert(Slot slot, const Access&) {
    set_.insert(slot);
}
void RandomPolicy::on_erase(Slot slot) {
    set_.erase(slot);
}
std::optional<Slot> RandomPolicy::upcoming_victim(unsigned later) const {
    if (set_.empty() || later >= next_draws_.size()) return std::nullopt;
    return set_.pick_by_draw(next_draws_[later]);
}

} // namespace iosig::tier::detail
