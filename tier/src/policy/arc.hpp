// ARC (Megiddo & Modha, FAST'03) over variable-size entries: T1/T2 hold resident entries seen once
// / at least twice, B1/B2 remember recently evicted keys, and the target size p of T1 adapts on
// ghost hits. Sizes, capacity and p are in the owner's unit: bytes in the object simulator (where
// this reproduces libCacheSim's byte-based ARC, including its p step of max(|B2|/|B1|, 1) *bytes*),
// lines in the block simulator and the engine (where every entry has size 1 and this is the paper's
// ARC).
#pragma once

#include "orders.hpp"

namespace iosig::tier::detail {

class ArcPolicy final : public EvictionPolicy {
public:
    // `slots`: PolicyConfig::expected_entries. The resident lists are made for that many slots;
    // the ghost lists still grow, as B1 and B2 share one bound and making each for all of it would
    // double their memory.
    explicit ArcPolicy(std::uint64_t capacity, std::size_t slots = 0);
    std::string_view name() const override { return "arc"; }
    void on_hit(Slot slot, const Access& access) override;
    void on_miss(const Access& access) override;
    Slot choose_victim(const Access& incoming) override;
    void on_evict(Slot slot) override;
    void on_insert(Slot slot, const Access& access) override;
    void on_erase(Slot slot) override;
    // A request's key is looked up in both ghost lists.
    void prepare_lookup(Key key) const override {
        b1_.prepare_lookup(key);
        b2_.prepare_lookup(key);
    }

    double target_t1() const { return p_; }

private:
    enum class GhostHit : std::uint8_t { none, b1, b2 };
    enum class List : std::uint8_t { none, t1, t2 };
    Slot replace_victim();
    void remove_resident(Slot slot);

    double capacity_;
    double p_ = 0;
    LruOrder t1_, t2_;
    GhostList b1_, b2_;
    double t1_size_ = 0, t2_size_ = 0;
    std::vector<Key> key_of_;
    std::vector<std::uint64_t> size_of_;
    std::vector<List> list_of_;
    GhostHit ghost_hit_ = GhostHit::none;
    Slot pending_ = nil;              // the slot choose_victim() returned
    bool pending_keeps_ghost_ = true; // false: case IV with an empty B1 drops T1's tail outright
    std::uint64_t clock_ = 0;
};

} // namespace iosig::tier::detail
