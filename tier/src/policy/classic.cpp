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

RandomPolicy::RandomPolicy(std::uint64_t seed) : rng_(seed) {}
void RandomPolicy::on_hit(Slot, const Access&) {}
Slot RandomPolicy::choose_victim(const Access&) {
    return set_.pick(rng_);
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

} // namespace iosig::tier::detail
