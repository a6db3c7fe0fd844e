// Belady's MIN (offline optimum for unit sizes): evict the resident entry whose next request lies
// farthest in the future. Needs Access::next_access, so only the trace simulator can use it.
#pragma once

#include "orders.hpp"

#include <set>
#include <utility>
#include <vector>

namespace iosig::tier::detail {

class BeladyPolicy final : public EvictionPolicy {
public:
    std::string_view name() const override { return "belady"; }
    void on_hit(Slot slot, const Access& access) override;
    Slot choose_victim(const Access& incoming) override;
    void on_evict(Slot slot) override;
    void on_insert(Slot slot, const Access& access) override;
    void on_erase(Slot slot) override;

private:
    // Ordered by next access, then slot, so ties (several entries never requested again) resolve
    // the same way on every run.
    std::set<std::pair<std::int64_t, Slot>> by_next_;
    std::vector<std::int64_t> next_of_;
};

} // namespace iosig::tier::detail
