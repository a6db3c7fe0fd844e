// The classic single-order policies (classic.cpp).
#pragma once

#include "orders.hpp"

#include <random>

namespace iosig::tier::detail {

class LruPolicy final : public EvictionPolicy {
public:
    std::string_view name() const override { return "lru"; }
    void on_hit(Slot slot, const Access& access) override;
    Slot choose_victim(const Access& incoming) override;
    void on_evict(Slot slot) override;
    void on_insert(Slot slot, const Access& access) override;
    void on_erase(Slot slot) override;

private:
    LruOrder order_;
};

class LfuPolicy final : public EvictionPolicy {
public:
    std::string_view name() const override { return "lfu"; }
    void on_hit(Slot slot, const Access& access) override;
    Slot choose_victim(const Access& incoming) override;
    void on_evict(Slot slot) override;
    void on_insert(Slot slot, const Access& access) override;
    void on_erase(Slot slot) override;

private:
    LfuOrder order_;
};

class RandomPolicy final : public EvictionPolicy {
public:
    explicit RandomPolicy(std::uint64_t seed);
    std::string_view name() const override { return "random"; }
    void on_hit(Slot slot, const Access& access) override;
    Slot choose_victim(const Access& incoming) override;
    void on_evict(Slot slot) override;
    void on_insert(Slot slot, const Access& access) override;
    void on_erase(Slot slot) override;

private:
    std::mt19937_64 rng_;
    RandomSet set_;
};

} // namespace iosig::tier::detail
