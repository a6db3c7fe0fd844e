// CacheModel (cache_model.hpp).
#include "iosig/tier/cache_model.hpp"

#include "flat_map.hpp"

namespace iosig::tier {

CacheModel::CacheModel(std::uint64_t capacity, std::unique_ptr<EvictionPolicy> policy)
    : capacity_(capacity), policy_(std::move(policy)),
      slot_of_(std::make_unique<detail::FlatMap>(1024)) {}

CacheModel::~CacheModel() = default;
CacheModel::CacheModel(CacheModel&&) noexcept = default;
CacheModel& CacheModel::operator=(CacheModel&&) noexcept = default;

bool CacheModel::access(const Access& access) {
    evicted_.clear();
    if (const std::uint32_t* slot = slot_of_->find(access.key)) {
        policy_->on_hit(*slot, access);
        return true;
    }
    policy_->on_miss(access);
    if (access.size <= capacity_) make_room_and_insert(access);
    return false;
}

void CacheModel::insert(const Access& access) {
    evicted_.clear();
    if (slot_of_->contains(access.key) || access.size > capacity_) return;
    policy_->on_miss(access);
    make_room_and_insert(access);
}

void CacheModel::make_room_and_insert(const Access& access) {
    while (used_ + access.size > capacity_) {
        const Slot victim = policy_->choose_victim(access);
        policy_->on_evict(victim);
        used_ -= entries_[victim].size;
        slot_of_->erase(entries_[victim].key);
        evicted_.push_back(entries_[victim].key);
        free_.push_back(victim);
    }
    Slot slot;
    if (!free_.empty()) {
        slot = free_.back();
        free_.pop_back();
    } else {
        slot = static_cast<Slot>(entries_.size());
        entries_.emplace_back();
    }
    entries_[slot] = Entry{access.key, access.size};
    used_ += access.size;
    slot_of_->put(access.key, slot);
    policy_->on_insert(slot, access);
}

bool CacheModel::contains(Key key) const {
    return slot_of_->contains(key);
}

void CacheModel::prepare_lookup(Key key) const {
    slot_of_->prefetch(key);
    policy_->prepare_lookup(key);
}

bool CacheModel::erase(Key key) {
    const auto slot = slot_of_->erase(key);
    if (!slot) return false;
    policy_->on_erase(*slot);
    used_ -= entries_[*slot].size;
    free_.push_back(*slot);
    return true;
}

} // namespace iosig::tier
