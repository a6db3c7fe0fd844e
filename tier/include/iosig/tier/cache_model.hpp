// A metadata-only cache: which keys are resident, driven by an EvictionPolicy. Capacity and sizes
// are in one unit (bytes for objects, 1 per line for block caches). Semantics are libCacheSim's, so
// that its published miss counts are reproducible: a hit updates the policy; a miss evicts victims
// until used + size <= capacity and then inserts; an entry larger than the whole cache is not
// inserted; there is no per-entry overhead.
#pragma once

#include "iosig/tier/policy.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace iosig::tier {

namespace detail {
class FlatMap;
}

class CacheModel {
public:
    // `expected_entries`: how many entries the cache holds when full, if known
    // (PolicyConfig::expected_entries); the index is made for that many and never grows.
    CacheModel(std::uint64_t capacity, std::unique_ptr<EvictionPolicy> policy,
               std::uint64_t expected_entries = 0);
    ~CacheModel();
    CacheModel(CacheModel&&) noexcept;
    CacheModel& operator=(CacheModel&&) noexcept;

    // One request; true on a hit. Keys evicted by it are in evicted() until the next call.
    bool access(const Access& access);
    // Makes `access.key` resident without counting a request (a prefetched line promoted on use is
    // counted by the caller); evicts as access() does. No-op if already resident.
    void insert(const Access& access);
    bool contains(Key key) const;
    // A hint that `key` will be requested soon: starts loading its place in the index (and the
    // policy's own tables, EvictionPolicy::prepare_lookup), so that a replay that knows its next
    // references need not wait for memory on each lookup. Changes no result.
    void prepare_lookup(Key key) const;
    // The key the policy said it will evict next (EvictionPolicy::upcoming_victim), for an owner
    // that wants to start loading its own entries for that key; nothing if the policy did not say.
    std::optional<Key> upcoming_victim_key() const;
    // Removes the key without it counting as an eviction (invalidation). False if not resident.
    bool erase(Key key);

    const std::vector<Key>& evicted() const { return evicted_; }
    std::uint64_t capacity() const { return capacity_; }
    std::uint64_t used() const { return used_; }
    std::size_t resident() const { return entries_.size() - free_.size(); }
    EvictionPolicy& policy() { return *policy_; }
    const EvictionPolicy& policy() const { return *policy_; }

private:
    void make_room_and_insert(const Access& access);
    void start_loading_next_victims();

    std::uint64_t capacity_;
    std::uint64_t used_ = 0;
    std::unique_ptr<EvictionPolicy> policy_;
    std::unique_ptr<detail::FlatMap> slot_of_;
    struct Entry {
        Key key = 0;
        std::uint64_t size = 0;
    };
    std::vector<Entry> entries_; // by slot
    std::vector<Slot> free_;
    std::vector<Key> evicted_;
    // The slot the policy will evict next, as it said after the last insert (make_room_and_insert):
    // a prefetch hint only, possibly stale, and in entries_ (slots are never shrunk away).
    static constexpr Slot no_victim_hint = ~Slot{0};
    Slot victim_hint_ = no_victim_hint;
    bool full_ = false; // the last insert left no room for another entry of its size
    EvictionPolicy::Announces announces_;
};

} // namespace iosig::tier
