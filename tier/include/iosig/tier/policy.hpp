// Eviction policies behind one interface, shared by the trace simulator and the cache engine.
//
// A policy orders the *resident* entries of a cache. Its owner (the simulator's CacheModel or the
// engine's line table) keeps the key -> slot map and the byte/line accounting; the policy sees
// slots (dense small integers the owner assigns, reused after eviction) and the keys and sizes it
// is told about. Ghost state (ARC's B1/B2, LeCaR's histories, the learner's shadow experts) is
// keyed by Key, because ghosts have no slot.
//
// Protocol for one request, as the owner drives it:
//   resident:     on_hit(slot, access)
//   not resident: on_miss(access); then, while the new entry does not fit,
//                 s = choose_victim(access); on_evict(s);   and finally on_insert(new_slot, access)
// on_erase(slot) removes an entry without it counting as an eviction (invalidation, truncation).
// choose_victim() is only called when at least one entry is resident. If the owner cannot evict the
// slot it was given (the engine: a line in use), it reports a use with on_hit() and asks again.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iosig::tier {

using Key = std::uint64_t;
using Slot = std::uint32_t;

// Logical time (request index) meaning "never requested again".
inline constexpr std::int64_t never_again = std::numeric_limits<std::int64_t>::max();

struct Access {
    Key key = 0;
    std::uint64_t size = 1; // in the unit the capacity is counted in (bytes or lines)
    std::int64_t next_access =
        never_again; // index of the next request for `key`; only Belady reads it
};

// The learner's experts, in the order of LearnerState's arrays.
enum class Expert : std::uint8_t { lru = 0, lfu = 1, random = 2 };
inline constexpr int expert_count = 3;
std::string_view to_string(Expert);

// What a learning policy has learnt so far (for reports and tests).
struct LearnerState {
    Expert current = Expert::lru;
    std::array<double, expert_count> probability{};
    std::array<std::uint64_t, expert_count> mispredictions{}; // summed over all epochs
    std::uint64_t epochs = 0;
    std::uint64_t switches = 0; // epochs after which the chosen expert changed
};

class EvictionPolicy {
public:
    virtual ~EvictionPolicy() = default;
    virtual std::string_view name() const = 0;

    virtual void on_hit(Slot slot, const Access& access) = 0;
    virtual void on_miss(const Access& /*access*/) {}
    virtual Slot choose_victim(const Access& incoming) = 0;
    virtual void on_evict(Slot slot) = 0;
    virtual void on_insert(Slot slot, const Access& access) = 0;
    virtual void on_erase(Slot slot) = 0;
    // The owner could not evict `slot` (in use, or dirty and not yet written back): move it away
    // from the eviction end without counting it as a request.
    virtual void on_busy(Slot slot, const Access& access) { on_hit(slot, access); }

    virtual std::optional<LearnerState> learner_state() const { return std::nullopt; }

    // A hint that `key` will be requested soon (CacheModel::prepare_lookup): a policy with lookup
    // tables of its own may start loading their entries. Changes nothing else.
    virtual void prepare_lookup(Key /*key*/) const {}
    // Victim announcements, so that the owner can start loading the metadata of the next victim
    // before it evicts it (CacheModel) instead of waiting for memory then: hints, never promises,
    // and free of any effect on the policy. A policy says once which kind it gives:
    enum class Announces : std::uint8_t { nothing, slots, keys };
    virtual Announces announces() const { return Announces::nothing; }
    // `slots`: the slot choose_victim() would return `later` evictions from now (0: if it were
    // called now) if no request came in between; nothing when the policy cannot tell.
    virtual std::optional<Slot> upcoming_victim(unsigned /*later*/) const { return std::nullopt; }
    // `keys`: the key of the next victim, for a policy that knows it before its slot (the
    // learner: the key its chosen expert's shadow evicts next).
    virtual std::optional<Key> upcoming_victim_key() const { return std::nullopt; }
};

// Parameters every policy may use. Capacity is in the same unit as Access::size.
struct PolicyConfig {
    std::uint64_t capacity = 0;
    // How many entries the cache holds when full, when its owner knows (the engine: its line
    // count); the policies make their hash tables for that many, so that none is rehashed (copied
    // whole) in the middle of a request while the owner's lock is held. 0: unknown, the tables
    // grow as the cache fills (the simulator, whose capacity is bytes in object mode).
    std::uint64_t expected_entries = 0;
    std::uint64_t seed =
        42; // Random, LeCaR and the learner's Random expert; fixed => deterministic

    // The paper's weight-sharing learner (docs/tier.md, "The learner").
    unsigned epoch_iterations = 4; // EPOCH_WIDTH
    double threshold = 0.25;       // THRESHOLD: mispredictions below threshold*misses are ignored
    std::uint64_t iteration_misses = 64; // misses served per polling iteration of the miss queue
    double learning_rate = 2.0; // w_e *= exp(-learning_rate * loss_e) at the end of an epoch
    double share = 0.01;        // fixed share: w_e = (1-share) w_e + share * mean(w)
    // Decisive switches (no ski rental) only this many epochs after the first verdict; later
    // switches must pay for their refill first (docs/tier-learner-evidence.md, "Decisive only
    // early").
    unsigned decisive_epochs = 128;
    // A switch the weights propose that is not decisive waits until the new expert's shadow has
    // saved this many times its refill (ski rental with a margin; docs/tier-learner-evidence.md,
    // "Switch cost rule").
    double refill_margin = 1.25;
    // The shadow switch (docs/tier-learner-evidence.md, "LFU pollution"): with the weights silent,
    // switch to the expert whose shadow has saved this many times the estimated live refill since
    // the last switch (0 = never), once this many cache turnovers have passed since the first
    // verdict.
    double shadow_switch_refills = 12;
    double shadow_switch_turnovers = 2;
    // Losing switches (docs/tier-learner-evidence.md, "Losing switches"): when the learner switches
    // again, the previous switch is judged: if the expert it left would have missed less since (its
    // shadow against the real cache), the evidence every later switch needs is multiplied by this
    // factor; if it paid, divided by it, down to 1. Decisive switches are allowed only at 1.
    // 1 turns the rule off.
    double losing_switch_factor = 2;

    // LeCaR (HotStorage'18; NOTES.md): learning rate, discount^(1/N), weight clamp.
    double lecar_learning_rate = 0.45;
    double lecar_discount_base = 0.005;
    double lecar_min_weight = 0.01;
};

// Names accepted by make_policy: lru, lfu, random, arc, ws (the paper's learner; aliases "learner",
// "ol"), lecar, belady.
std::vector<std::string> policy_names();

// Throws std::invalid_argument naming the policy and the accepted names when `name` is unknown.
std::unique_ptr<EvictionPolicy> make_policy(std::string_view name, const PolicyConfig& config);

// True for policies that read Access::next_access (they need the future of the trace).
bool policy_is_offline(std::string_view name);

} // namespace iosig::tier
