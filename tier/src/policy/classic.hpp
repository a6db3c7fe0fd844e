// The classic single-order policies (classic.cpp).
#pragma once

#include "orders.hpp"

#include <random>

namespace iosig::tier::detail {

// `slots`: PolicyConfig::expected_entries; the orders are made for that many slots (0: they grow).
class LruPolicy final : public EvictionPolicy {
public:
    explicit LruPolicy(std::size_t slots = 0) { order_.reserve_slots(slots); }
    std::string_view name() const override { return "lru"; }
    void on_hit(Slot slot, const Access& access) override;
    Slot choose_victim(const Access& incoming) override;
    void on_evict(Slot slot) override;
    void on_insert(Slot slot, const Access& access) override;
    void on_erase(Slot slot) override;
    Announces announces() const override { return Announces::slots; }
    std::optional<Slot> upcoming_victim(unsigned later) const override;

private:
    LruOrder order_;
};

class LfuPolicy final : public EvictionPolicy {
public:
    explicit LfuPolicy(std::size_t slots = 0) { order_.reserve_slots(slots); }
    std::string_view name() const override { return "lfu"; }
    void on_hit(Slot slot, const Access& access) override;
    Slot choose_victim(const Access& incoming) override;
    void on_evict(Slot slot) override;
    void on_insert(Slot slot, const Access& access) override;
    void on_erase(Slot slot) override;
    Announces announces() const override { return Announces::slots; }
    std::optional<Slot> upcoming_victim(unsigned later) const override;

private:
    LfuOrder order_;
};

class RandomPolicy final : public EvictionPolicy {
public:
    explicit RandomPolicy(std::uint64_t seed, std::size_t slots = 0);
    std::string_view name() const override { return "random"; }
    void on_hit(Slot slot, const Access& access) override;
    Slot choose_victim(const Access& incoming) override;
    void on_evict(Slot slot) override;
    void on_insert(Slot slot, const Access& access) override;
    void on_erase(Slot slot) override;
    Announces announces() const override { return Announces::slots; }
    std::optional<Slot> upcoming_victim(unsigned later) const override;

private:
    std::mt19937_64 rng_;
    // The draws the next two choose_victim() calls use, made ahead so that the victims are known
    // before they are asked for (the same sequence of draws as drawing on demand).
    std::array<std::uint64_t, 2> next_draws_;
    RandomSet set_;
};

} // namespace iosig::tier::detail
