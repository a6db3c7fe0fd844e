// Output of `iosig-tiersim --hindsight` (hindsight_report.hpp).
#include "hindsight_report.hpp"

#include "iosig/units.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace {

using iosig::tier::SimMode;
using iosig::tier::SwitchingHindsight;

// Relative to the better single expert, in percent (negative: the schedule gains).
double against_best(std::uint64_t misses, const SwitchingHindsight& r) {
    const double best = static_cast<double>(r.best_single());
    return best > 0 ? 100 * (static_cast<double>(misses) / best - 1) : 0;
}

} // namespace

void print_hindsight(const std::string& source, const std::vector<SwitchingHindsight>& rows,
                     bool json) {
    if (json) {
        nlohmann::json out{{"trace", source}, {"hindsight", nlohmann::json::array()}};
        for (const SwitchingHindsight& r : rows)
            out["hindsight"].push_back({{"mode", to_string(r.mode)},
                                        {"capacity", r.capacity},
                                        {"references", r.references},
                                        {"windows", r.windows},
                                        {"lru_misses", r.lru_misses},
                                        {"lfu_misses", r.lfu_misses},
                                        {"free_switching_misses", r.free_switching_misses},
                                        {"charged_switching_misses", r.charged_switching_misses},
                                        {"charged_switches", r.charged_switches}});
        fmt::print("{}\n", out.dump(2));
        return;
    }
    fmt::print("trace: {}\n", source);
    fmt::print("best LRU/LFU schedule in hindsight, against the better single expert\n");
    fmt::print("{:>12} {:>10} {:>10} {:>14} {:>16} {:>9}\n", "capacity", "lru", "lfu",
               "free switches", "charged refills", "switches");
    for (const SwitchingHindsight& r : rows) {
        const std::string capacity = r.mode == SimMode::object
                                         ? iosig::format_size(r.capacity)
                                         : fmt::format("{} lines", r.capacity);
        fmt::print("{:>12} {:>10} {:>10} {:>13.1f}% {:>15.1f}% {:>9}\n", capacity, r.lru_misses,
                   r.lfu_misses, against_best(r.free_switching_misses, r),
                   against_best(r.charged_switching_misses, r), r.charged_switches);
    }
}
