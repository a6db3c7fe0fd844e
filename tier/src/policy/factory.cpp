// make_policy and the policy names (policy.hpp).
#include "arc.hpp"
#include "belady.hpp"
#include "classic.hpp"
#include "lecar.hpp"
#include "weight_sharing.hpp"

#include <fmt/format.h>
#include <stdexcept>

namespace iosig::tier {

std::string_view to_string(Expert expert) {
    switch (expert) {
    case Expert::lru:
        return "lru";
    case Expert::lfu:
        return "lfu";
    case Expert::random:
        return "random";
    }
    return "?";
}

std::vector<std::string> policy_names() {
    return {"lru", "lfu", "random", "arc", "ws", "lecar", "belady"};
}

std::unique_ptr<EvictionPolicy> make_policy(std::string_view name, const PolicyConfig& config) {
    using namespace detail;
    const std::size_t slots = config.expected_entries;
    if (name == "lru") return std::make_unique<LruPolicy>(slots);
    if (name == "lfu") return std::make_unique<LfuPolicy>(slots);
    if (name == "random") return std::make_unique<RandomPolicy>(config.seed, slots);
    if (name == "arc") return std::make_unique<ArcPolicy>(config.capacity, slots);
    if (name == "ws" || name == "learner" || name == "ol")
        return std::make_unique<WeightSharingPolicy>(config);
    if (name == "lecar") return std::make_unique<LecarPolicy>(config);
    if (name == "belady") return std::make_unique<BeladyPolicy>();
    throw std::invalid_argument(
        fmt::format("unknown eviction policy '{}' (known: lru, lfu, random, arc, "
                    "ws, lecar, belady)",
                    name));
}

bool policy_is_offline(std::string_view name) {
    return name == "belady";
}

} // namespace iosig::tier
