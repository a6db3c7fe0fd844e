// The paper's weight-sharing learner (weight_sharing.hpp).
#include "weight_sharing.hpp"

#include "classic.hpp"

#include <algorithm>
#include <cmath>

namespace iosig::tier::detail {
namespace {

constexpr double switch_margin = 0.25;
// The switch guard (end_epoch): each expert's shadow misses, decayed by this factor per epoch (a
// memory of about ten epochs).
constexpr double shadow_decay = 0.9;
// The switch cost rule (end_epoch): a proposal whose weight is at least this many times the current
// expert's is decisive and switches at once (between LRU and LFU only).
constexpr double decisive_lead = 2.0;

std::array<CacheModel, expert_count> make_shadows(const PolicyConfig& config) {
    const std::uint64_t n = config.expected_entries;
    return {
        CacheModel(config.capacity, std::make_unique<LruPolicy>(n), n),
        CacheModel(config.capacity, std::make_unique<LfuPolicy>(n), n),
        CacheModel(config.capacity, std::make_unique<RandomPolicy>(config.seed ^ 0x5eed, n), n)};
}

} // namespace

WeightSharingPolicy::WeightSharingPolicy(const PolicyConfig& config)
    : config_(config), rng_(config.seed), slot_of_(config.expected_entries),
      shadow_(make_shadows(config)) {
    state_.current = Expert::lfu;
    state_.probability = {1.0 / 3, 1.0 / 3, 1.0 / 3};
    // Per-slot tables made for the cache's entries when the owner knows how many (the engine), so
    // that none is copied while it fills (PolicyConfig::expected_entries).
    const std::size_t slots = config.expected_entries;
    lru_.reserve_slots(slots);
    lfu_.reserve_slots(slots);
    random_.reserve_slots(slots);
    key_of_.resize(slots);
    for (int e = 0; e < expert_count; ++e) {
        outside_[e].reserve_slots(slots);
        is_outside_[e].resize(slots);
    }
    for (LiveRefillEstimate& estimate : live_refill_)
        estimate.reserve_slots(slots);
}

// Misses of the real cache per epoch: EPOCH_WIDTH polling iterations of iteration_misses each.
std::uint64_t WeightSharingPolicy::epoch_length() const {
    return std::max<std::uint64_t>(1, config_.iteration_misses) *
           std::max(1u, config_.epoch_iterations);
}

void WeightSharingPolicy::observe(const Access& access, bool real_miss) {
    for (int e = 0; e < expert_count; ++e) {
        CacheModel& shadow = shadow_[e];
        const bool shadow_hit = shadow.access(access);
        if (!shadow_hit) ++epoch_shadow_misses_[e];
        if (!shadow_hit && predicted_[e].erase(access.key)) ++epoch_mispredictions_[e];
        for (const Key k : shadow.evicted()) {
            predicted_[e].put(k, 0);
            if (const std::uint32_t* slot = slot_of_.find(k)) mark_outside(e, *slot);
        }
        if (!shadow_hit && !real_miss && shadow.contains(access.key))
            if (const std::uint32_t* slot = slot_of_.find(access.key))
                unmark_outside(e, *slot, true);
        proposed_[e] = shadow.evicted();
    }
    if (!real_miss) return;
    const std::uint64_t epoch_length = this->epoch_length();
    ++epoch_misses_;
    // The first verdict can come early. The starting expert is a guess made before any eviction;
    // once the cache is full, one polling iteration in which it mispredicts a THRESHOLD share of
    // the misses is evidence enough to end the epoch, instead of serving the rest of a whole epoch
    // with an expert that is being penalised. Later epochs run their full length, as in the paper:
    // there an early end would only add noise to the weights.
    const auto chosen_wrong =
        static_cast<double>(epoch_mispredictions_[static_cast<int>(state_.current)]);
    const std::uint64_t iteration = std::max<std::uint64_t>(1, config_.iteration_misses);
    const bool first_verdict_known =
        !first_verdict_given_ && epoch_misses_ >= iteration &&
        chosen_wrong >= config_.threshold * static_cast<double>(epoch_misses_);
    if (epoch_misses_ >= epoch_length || first_verdict_known ||
        chosen_wrong >= config_.threshold * static_cast<double>(epoch_length))
        end_epoch();
}

void WeightSharingPolicy::end_epoch() {
    const double misses = static_cast<double>(epoch_misses_);
    for (int e = 0; e < expert_count; ++e) {
        const double wrong = static_cast<double>(epoch_mispredictions_[e]);
        if (wrong > 0 && !first_verdict_given_) {
            first_verdict_given_ = true;
            first_verdict_epoch_ = state_.epochs;
        }
        if (wrong >= config_.threshold * misses)
            weight_[e] *= std::exp(-config_.learning_rate * wrong / misses);
        state_.mispredictions[e] += epoch_mispredictions_[e];
        epoch_mispredictions_[e] = 0;
        predicted_[e].clear();
    }
    double total = 0;
    for (const double w : weight_)
        total += w;
    const double mean = total / expert_count;
    total = 0;
    for (double& w : weight_) {
        w = (1 - config_.share) * w + config_.share * mean;
        total += w;
    }
    for (int e = 0; e < expert_count; ++e) {
        weight_[e] /= total; // probabilities; also keeps the weights from underflowing
        state_.probability[e] = weight_[e];
    }
    // The most probable expert, with a margin against flapping: experts whose mispredictions stay
    // under THRESHOLD drift apart by single noisy epochs, and every switch costs a refill. Random
    // is chosen only when it clearly leads both deterministic experts; between LRU and LFU the
    // current one stays unless the other leads by the margin.
    const auto lru = static_cast<int>(Expert::lru), lfu = static_cast<int>(Expert::lfu),
               random = static_cast<int>(Expert::random);
    const int leader = weight_[lfu] > weight_[lru] ? lfu : lru;
    int best = leader;
    const int current = static_cast<int>(state_.current);
    if (weight_[random] > weight_[leader] * (1 + switch_margin))
        best = random;
    else if (current != random && weight_[current] * (1 + switch_margin) >= weight_[leader])
        best = current;
    // The switch guard. The weights move only on epochs in which an expert crosses THRESHOLD, and a
    // single such epoch can hand the cache to an expert whose own cache (its shadow) has been
    // missing more than the current one's; nothing under THRESHOLD would ever bring the learner
    // back, and every switch costs a refill. So a switch the weights propose also needs the new
    // expert's shadow to have missed less than the current one's over the last epochs (decayed
    // sums): the weights propose, the shadows confirm. (Letting the shadows alone switch the
    // learner, without the weights, was tried: on the shared trace each extra switch cost 1-6 % of
    // misses.)
    for (int e = 0; e < expert_count; ++e) {
        shadow_misses_[e] =
            shadow_decay * shadow_misses_[e] + static_cast<double>(epoch_shadow_misses_[e]);
        saved_since_switch_[e] =
            e == current ? 0
                         : std::max(0.0, saved_since_switch_[e] +
                                             static_cast<double>(epoch_shadow_misses_[current]) -
                                             static_cast<double>(epoch_shadow_misses_[e]));
    }
    for (int e = 0; e < expert_count; ++e) {
        total_shadow_misses_[e] += epoch_shadow_misses_[e];
        epoch_shadow_misses_[e] = 0;
    }
    total_misses_ += epoch_misses_;
    if (best != current && shadow_misses_[best] >= shadow_misses_[current]) best = current;
    // The switch cost rule. A switch costs up to one miss per line the real cache holds and the new
    // expert's shadow does not (outside_: the lines it has to replace); on the shared trace in
    // block mode one needless switch cost 10-25 % of all misses, and bringing the learner back cost
    // as much again. So, as in ski rental, a switch is made once the new expert's shadow has saved
    // refill_margin (1.25) times that many misses against the current one since the last switch
    // (with 1.0, switches to LRU that had barely saved their refill cost 15.9-19.5 % at 528 and
    // 576 MiB in block mode; 1.5 delays the first switch on Poisson traffic too much), unless the
    // weights
    // are decisive (a regime change: the current expert mispredicts far beyond THRESHOLD, and
    // waiting would pay the new regime's misses for nothing). Only a switch between LRU and LFU can
    // be decisive: the target is the better of those two, and Random leads the weights mostly right
    // after the cache fills, when LRU and LFU both evict large objects and mispredict together (on
    // the shared trace in object mode at 592 MiB a decisive switch to Random there cost 6.4 %;
    // Random's shadow then missed more than LFU's for the rest of the trace).
    //
    // Decisive only early. The exception is for the starting expert, a guess made before any
    // eviction, and for a regime change soon after it; later in a trace a switch can cost a large
    // part of the cache, and the weights, moved by mispredictions, can be decisive for an expert
    // whose shadow leads by little: on the shared trace in block mode (4 KiB lines) decisive
    // switches 134-1,837 epochs after the first verdict cost 1.2-22.3 % at 11 sizes, and the best
    // schedule in hindsight (iosig-tiersim --hindsight) does not switch at 9 of them. So after
    // decisive_epochs epochs from the first verdict every switch waits for its savings (ski
    // rental: a wrong switch costs about twice its refill at most). The needed decisive switches
    // came 3 (block mode, 1008 MiB) and 45-83 epochs (the paper-style switching traffic's first
    // regime change, 8,192 and 4,096 lines) after it; 128 lies between.
    const bool early =
        first_verdict_given_ && state_.epochs - first_verdict_epoch_ <= config_.decisive_epochs;
    const bool decisive = early && best != random &&
                          weight_[best] >= decisive_lead * weight_[current] &&
                          evidence_factor_ <= 1;
    if (best != current && !decisive &&
        saved_since_switch_[best] <
            config_.refill_margin * evidence_factor_ * static_cast<double>(outside_[best].size()))
        best = current;
    for (LiveRefillEstimate& estimate : live_refill_) // LRU's and LFU's
        estimate.close_epoch(state_.epochs);
    if (best == current) best = shadow_switch_target(current, evidence_factor_);
    if (best != current) {
        saved_since_switch_ = {};
        evidence_factor_ = judged_evidence_factor();
        left_at_switch_ = current;
        shadow_misses_at_switch_ = total_shadow_misses_;
        misses_at_switch_ = total_misses_;
    }
    if (best != static_cast<int>(state_.current)) ++state_.switches;
    state_.current = static_cast<Expert>(best);
    ++state_.epochs;
    epoch_misses_ = 0;
}

// The shadow switch. The weights move only when an expert mispredicts a THRESHOLD share of an
// epoch's misses, and a polluted LFU never does: its victims are new objects, asked for again only
// after the epoch. On long traces whose popular objects change, LFU keeps the old ones and missed
// up to 67 % more than LRU, and the learner stayed with it (docs/tier-learner-evidence.md, "LFU
// pollution"). So the shadows alone may also switch the learner between LRU and LFU, under a
// stricter ski rental: the new expert's shadow must have missed less over the last epochs and saved
// shadow_switch_refills times the cost of the switch since the last one, where the cost counts only
// the lines it would drop that are likely to be asked for again (live_refill.hpp; counting all of
// them, as the weights' rule does, never lets this switch happen under pollution, where those lines
// are dead). Not before shadow_switch_turnovers cache turnovers after the first verdict: until the
// lines have been outside for that long, the estimate has not seen them come back (at 12 refills
// but from the first verdict on, the learner lost 5-6 % at 592 and 640-672 MiB on the shared trace
// in object mode).
int WeightSharingPolicy::shadow_switch_target(int current, double evidence_factor) const {
    if (config_.shadow_switch_refills <= 0 || !first_verdict_given_) return current;
    const double turnover_epochs =
        static_cast<double>(resident_) / static_cast<double>(epoch_length());
    if (static_cast<double>(state_.epochs - first_verdict_epoch_) <
        config_.shadow_switch_turnovers * turnover_epochs)
        return current;
    for (const Expert expert : {Expert::lru, Expert::lfu}) {
        const int e = static_cast<int>(expert);
        if (e != current && shadow_misses_[e] < shadow_misses_[current] &&
            saved_since_switch_[e] >= config_.shadow_switch_refills * evidence_factor *
                                          live_refill_[e].expected_live(state_.epochs))
            return e;
    }
    return current;
}

// The losing-switch rule, applied when the learner switches again: the previous switch lost if the
// expert it left has missed less since then (its shadow) than the real cache did. Ski rental
// bounds the loss of one wrong switch, not of a series: when two experts take turns in the lead
// (the LIRS Zigzag trace, where LRU and LFU miss exactly as often, but not at the same time), each
// turn looked like a regime change and the learner switched 18-22 times, +21-28 % over both. A
// loss multiplies the evidence every later switch needs by losing_switch_factor (2) and stops
// decisive switches, which skip the evidence; a switch that paid divides it again, down to 1, so
// one lucky turn does not wipe out a long series of losses.
double WeightSharingPolicy::judged_evidence_factor() const {
    if (left_at_switch_ < 0 || config_.losing_switch_factor <= 1) return evidence_factor_;
    const auto left = static_cast<std::size_t>(left_at_switch_);
    const std::uint64_t left_missed = total_shadow_misses_[left] - shadow_misses_at_switch_[left];
    const std::uint64_t real_missed = total_misses_ - misses_at_switch_;
    return left_missed < real_missed
               ? evidence_factor_ * config_.losing_switch_factor
               : std::max(1.0, evidence_factor_ / config_.losing_switch_factor);
}

void WeightSharingPolicy::on_hit(Slot slot, const Access& access) {
    lru_.move_to_front(slot);
    lfu_.increment(slot);
    observe(access, false);
}

void WeightSharingPolicy::mark_outside(int expert, Slot slot) {
    std::vector<bool>& marked = is_outside_[expert];
    if (slot >= marked.size()) marked.resize(std::max<std::size_t>(slot + 1, marked.size() * 2));
    if (marked[slot]) return;
    marked[slot] = true;
    outside_[expert].push_front(slot);
    if (expert != static_cast<int>(Expert::random))
        live_refill_[expert].left_shadow(slot, state_.epochs);
}

void WeightSharingPolicy::unmark_outside(int expert, Slot slot, bool revived) {
    std::vector<bool>& marked = is_outside_[expert];
    if (slot >= marked.size() || !marked[slot]) return;
    marked[slot] = false;
    outside_[expert].unlink(slot);
    if (expert != static_cast<int>(Expert::random))
        live_refill_[expert].ended(slot, state_.epochs, revived);
}

// Not a request: the experts' shadows must not see it.
void WeightSharingPolicy::on_busy(Slot slot, const Access&) {
    lru_.move_to_front(slot);
    for (int e = 0; e < expert_count; ++e)
        if (slot < is_outside_[e].size() && is_outside_[e][slot]) outside_[e].move_to_front(slot);
    random_.erase(slot);
    random_.insert(slot);
}

void WeightSharingPolicy::on_miss(const Access& access) {
    observe(access, true);
}

Slot WeightSharingPolicy::choose_victim(const Access&) {
    const int expert = static_cast<int>(state_.current);
    if (!outside_[expert].empty()) return outside_[expert].back();
    std::vector<Key>& proposed = proposed_[expert];
    while (!proposed.empty()) {
        const Key k = proposed.back();
        proposed.pop_back();
        if (const std::uint32_t* slot = slot_of_.find(k)) return *slot;
    }
    switch (state_.current) {
    case Expert::lru:
        return lru_.back();
    case Expert::lfu:
        return lfu_.min();
    case Expert::random:
        return random_.pick(rng_);
    }
    return lru_.back();
}

// choose_victim()'s victim is one of the chosen expert's outside lines or, once there are none,
// the key its shadow evicts at this miss.
std::optional<Key> WeightSharingPolicy::upcoming_victim_key() const {
    const int expert = static_cast<int>(state_.current);
    if (!outside_[expert].empty()) return key_of_[outside_[expert].back()];
    return shadow_[expert].upcoming_victim_key();
}

void WeightSharingPolicy::on_evict(Slot slot) {
    remove_resident(slot);
}

void WeightSharingPolicy::on_insert(Slot slot, const Access& access) {
    if (slot >= key_of_.size()) key_of_.resize(std::max<std::size_t>(slot + 1, key_of_.size() * 2));
    key_of_[slot] = access.key;
    slot_of_.put(access.key, slot);
    lru_.push_front(slot);
    lfu_.insert(slot, 1);
    random_.insert(slot);
    ++resident_;
    for (int e = 0; e < expert_count; ++e)
        if (!shadow_[e].contains(access.key)) mark_outside(e, slot);
}

void WeightSharingPolicy::remove_resident(Slot slot) {
    slot_of_.erase(key_of_[slot]);
    lru_.unlink(slot);
    lfu_.erase(slot);
    random_.erase(slot);
    --resident_;
    for (int e = 0; e < expert_count; ++e)
        unmark_outside(e, slot, false);
}

// An invalidated key is gone for every expert, not only for the real cache.
void WeightSharingPolicy::on_erase(Slot slot) {
    const Key key = key_of_[slot];
    remove_resident(slot);
    for (CacheModel& shadow : shadow_)
        shadow.erase(key);
}

// The shadows and the prediction sets are looked up on every request: start loading their entries.
void WeightSharingPolicy::prepare_lookup(Key key) const {
    for (int e = 0; e < expert_count; ++e) {
        shadow_[e].prepare_lookup(key);
        predicted_[e].prefetch(key);
        // The key the shadow evicts at its next miss goes into predicted_ and is looked up in
        // slot_of_ (observe()).
        if (const auto victim = shadow_[e].upcoming_victim_key()) {
            predicted_[e].prefetch(*victim);
            slot_of_.prefetch(*victim);
        }
    }
    slot_of_.prefetch(key);
}

std::optional<LearnerState> WeightSharingPolicy::learner_state() const {
    return state_;
}

} // namespace iosig::tier::detail
