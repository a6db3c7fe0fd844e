// Belady's MIN (belady.hpp).
#include "belady.hpp"

namespace iosig::tier::detail {

void BeladyPolicy::on_hit(Slot slot, const Access& access) {
    by_next_.erase({next_of_[slot], slot});
    next_of_[slot] = access.next_access;
    by_next_.insert({access.next_access, slot});
}

Slot BeladyPolicy::choose_victim(const Access&) {
    return by_next_.rbegin()->second;
}

void BeladyPolicy::on_evict(Slot slot) {
    by_next_.erase({next_of_[slot], slot});
}

void BeladyPolicy::on_insert(Slot slot, const Access& access) {
    if (slot >= next_of_.size())
        next_of_.resize(std::max<std::size_t>(slot + 1, next_of_.size() * 2));
    next_of_[slot] = access.next_access;
    by_next_.insert({access.next_access, slot});
}

void BeladyPolicy::on_erase(Slot slot) {
    by_next_.erase({next_of_[slot], slot});
}

} // namespace iosig::tier::detail
