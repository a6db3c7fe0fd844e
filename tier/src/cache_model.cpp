// CacheModel (cache_model.hpp).
#include "iosig/tier/cache_model.hpp"

#include "flat_map.hpp"

namespace iosig::tier {
namespace {

// Victims are announced (start_loading_next_victims) only for an index at least this large.
constexpr std::size_t hinted_table_bytes = std::size_t{1} << 20;

} // namespace

CacheModel::CacheModel(std::uint64_t capacity, std::unique_ptr<EvictionPolicy> policy,
                       std::uint64_t expected_entries)
    : capacity_(capacity), policy_(std::move(policy)),
      slot_of_(std::make_unique<detail::FlatMap>(std::max<std::uint64_t>(1024, expected_entries))),
      announces_(policy_->announces()) {
    entries_.reserve(expected_entries);
}

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
    full_ = used_ + access.size > capacity_;
    start_loading_next_victims();
}

// The next miss of a full cache erases its victim's key from the index: two dependent loads (the
// victim's entry, then its index bucket) from tables too large for the CPU caches. They are
// started a miss apart: the entry of the victim after next now, the bucket of the next victim
// (whose entry the last miss started loading) now, so that neither waits. Only when a request
// like the last one would evict (while the cache fills, the hints are wasted loads), and once the
// index has outgrown a core's L2 cache (below that, the victim's entries are at hand anyway).
void CacheModel::start_loading_next_victims() {
    victim_hint_ = no_victim_hint;
    if (!full_ || announces_ != EvictionPolicy::Announces::slots ||
        slot_of_->table_bytes() < hinted_table_bytes)
        return;
    victim_hint_ = policy_->upcoming_victim(0).value_or(no_victim_hint);
    if (victim_hint_ == no_victim_hint) return;
    slot_of_->prefetch(entries_[victim_hint_].key);
    if (const auto after_next = policy_->upcoming_victim(1))
        __builtin_prefetch(&entries_[*after_next]);
}

bool CacheModel::contains(Key key) const {
    return slot_of_->contains(key);
}

std::optional<Key> CacheModel::upcoming_victim_key() const {
    if (victim_hint_ != no_victim_hint) return entries_[victim_hint_].key;
    if (full_ && announces_ == EvictionPolicy::Announces::keys)
        return policy_->upcoming_victim_key();
    return std::nullopt;
}

void CacheModel::prepare_lookup(Key key) const {
    // A policy that announces slots had its victim's bucket loaded at the last insert already.
    if (announces_ == EvictionPolicy::Announces::keys)
        if (const auto victim = upcoming_victim_key()) slot_of_->prefetch(*victim);
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
