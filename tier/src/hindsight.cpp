// The best LRU/LFU switching schedule in hindsight (hindsight.hpp).
#include "iosig/tier/hindsight.hpp"

#include "flat_map.hpp"
#include "iosig/tier/cache_model.hpp"
#include "references.hpp"

#include <array>
#include <stdexcept>
#include <vector>

namespace iosig::tier {
namespace {

constexpr int lru = 0, lfu = 1;

// Per window: each expert's misses, and at its end how many entries each expert's cache holds
// that the other's does not (the refill a switch to it would cost).
struct Window {
    std::array<std::uint64_t, 2> misses{};
    std::array<std::uint64_t, 2> only_in{};
};

// Which of the two caches hold each key (bit e for expert e), with the counts of keys held by one
// only.
class Membership {
public:
    void set(Key key, int expert, bool held) {
        std::uint32_t* bits = held_.find(key);
        const std::uint32_t before = bits ? *bits : 0;
        const std::uint32_t after = held ? before | (1u << expert) : before & ~(1u << expert);
        count(before, -1);
        count(after, +1);
        if (after == 0)
            held_.erase(key);
        else if (bits)
            *bits = after;
        else
            held_.put(key, after);
    }
    std::uint64_t only_in(int expert) const { return only_[expert]; }

private:
    void count(std::uint32_t bits, int delta) {
        if (bits == 1u << lru) only_[lru] += delta;
        if (bits == 1u << lfu) only_[lfu] += delta;
    }
    detail::FlatMap held_;
    std::array<std::uint64_t, 2> only_{};
};

} // namespace

SwitchingHindsight switching_hindsight(const Trace& trace, const SimConfig& config,
                                       std::uint64_t window) {
    if (window == 0) throw std::invalid_argument("hindsight window must be > 0 references");
    SwitchingHindsight out;
    out.mode = detail::checked_mode(trace, config);
    const std::uint64_t unit = out.mode == SimMode::object ? 1 : config.line_size;
    out.capacity = config.cache_size / unit;
    if (out.capacity == 0) throw std::invalid_argument("cache size is smaller than one line");
    PolicyConfig pc = config.policy_config;
    pc.capacity = out.capacity;
    std::array<CacheModel, 2> experts{CacheModel(out.capacity, make_policy("lru", pc)),
                                      CacheModel(out.capacity, make_policy("lfu", pc))};

    out.references = detail::reference_totals(trace, out.mode, config.line_size).references;
    std::vector<Window> windows;
    Membership membership;
    Window current;
    for (detail::ReferenceChunks chunks(trace, out.mode, config.line_size); chunks.next();) {
        const std::vector<detail::Reference>& refs = chunks.refs();
        for (std::size_t j = 0; j < refs.size(); ++j) {
            const Access access{refs[j].key, refs[j].size};
            for (int e : {lru, lfu}) {
                if (!experts[e].access(access)) {
                    ++current.misses[e];
                    if (experts[e].contains(access.key)) membership.set(access.key, e, true);
                }
                for (const Key k : experts[e].evicted())
                    membership.set(k, e, false);
            }
            const std::uint64_t i = chunks.base() + j;
            if ((i + 1) % window == 0 || i + 1 == out.references) {
                current.only_in = {membership.only_in(lru), membership.only_in(lfu)};
                windows.push_back(current);
                current = Window{};
            }
        }
    }
    out.windows = windows.size();

    // cost[e]: the fewest misses of a schedule that follows expert e in the window just done;
    // switches[e]: the switches of that schedule. Either expert may be followed from the start.
    std::array<std::uint64_t, 2> cost{}, switches{};
    for (std::size_t w = 0; w < windows.size(); ++w) {
        const Window& win = windows[w];
        out.lru_misses += win.misses[lru];
        out.lfu_misses += win.misses[lfu];
        out.free_switching_misses += std::min(win.misses[lru], win.misses[lfu]);
        std::array<std::uint64_t, 2> next_cost{}, next_switches{};
        for (int e : {lru, lfu}) {
            const int other = 1 - e;
            // Switching to e at the start of this window refills what e's cache held at the end
            // of the previous window and the other's did not.
            const std::uint64_t refill = w == 0 ? 0 : windows[w - 1].only_in[e];
            const std::uint64_t stay = cost[e], move = cost[other] + refill;
            const bool switch_here = w > 0 && move < stay;
            next_cost[e] = (switch_here ? move : stay) + win.misses[e];
            next_switches[e] = switch_here ? switches[other] + 1 : switches[e];
        }
        cost = next_cost;
        switches = next_switches;
    }
    const int best = cost[lru] <= cost[lfu] ? lru : lfu;
    out.charged_switching_misses = cost[best];
    out.charged_switches = static_cast<unsigned>(switches[best]);
    return out;
}

} // namespace iosig::tier
