// The paper's weight-sharing learner (weight_sharing.hpp).
#include "weight_sharing.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "classic.hpp"

namespace iosig::tier::detail {
namespace {

std::array<CacheModel, expert_count> make_shadows(const PolicyConfig& config) {
    return {CacheModel(config.capacity, std::make_unique<LruPolicy>()),
            CacheModel(config.capacity, std::make_unique<LfuPolicy>()),
            CacheModel(config.capacity, std::make_unique<RandomPolicy>(config.seed ^ 0x5eed))};
}

} // namespace

WeightSharingPolicy::WeightSharingPolicy(const PolicyConfig& config)
    : config_(config), rng_(config.seed), shadow_(make_shadows(config)) {
    state_.probability = {1.0 / 3, 1.0 / 3, 1.0 / 3};
    if (getenv("WS_LFU")) state_.current = Expert::lfu;
}

void WeightSharingPolicy::observe(const Access& access, bool real_miss) {
    static const bool shared = getenv("WS_SHARED") != nullptr;
    static const bool cap = getenv("WS_CAP") != nullptr;
    if (shared) {
        if (!real_miss) return;
        if (const auto by = evicted_by_.erase(access.key)) ++epoch_mispredictions_[*by];
        if (!cap || seen_.contains(access.key)) ++epoch_contested_;
        else seen_.put(access.key, 0);
        if (epoch_misses_ == 0) {
            const std::uint64_t iteration = config_.iteration_misses != 0
                                                ? config_.iteration_misses
                                                : std::max<std::uint64_t>(1, resident_ / 4);
            epoch_length_ = iteration * std::max(1u, config_.epoch_iterations);
        }
        if (++epoch_misses_ >= epoch_length_) end_epoch();
        return;
    }
    bool contested = false;
    for (int e = 0; e < expert_count; ++e) {
        CacheModel& shadow = shadow_[e];
        const bool shadow_miss = !shadow.access(access);
        static const bool slide = getenv("WS_SLIDE") != nullptr;
        static const double slide_factor = getenv("WS_SLIDE") ? atof(getenv("WS_SLIDE")) : 1.0;
        bool mis;
        if (getenv("WS_B")) mis = shadow_miss;
        else if (slide) mis = shadow_miss && recent_[e].take(access.key).has_value();
        else mis = shadow_miss && predicted_[e].erase(access.key);
        if (mis) {
            ++epoch_mispredictions_[e];
            contested = true;
        }
        if (slide) {
            for (const Key k : shadow.evicted()) recent_[e].push_front(GhostList::Entry{k, access.size, 0, 0});
            while (!recent_[e].empty() && double(recent_[e].bytes()) > slide_factor * double(config_.capacity)) recent_[e].pop_back();
        } else
        for (const Key k : shadow.evicted()) predicted_[e].put(k, 0);
        mirror_[e] = shadow.evicted();
    }
    if (contested) ++epoch_contested_;
    if (!real_miss) return;
    if (epoch_misses_ == 0) {
        const std::uint64_t iteration = config_.iteration_misses != 0
                                            ? config_.iteration_misses
                                            : std::max<std::uint64_t>(1, resident_ / 4);
        epoch_length_ = iteration * std::max(1u, config_.epoch_iterations);
    }
    if (++epoch_misses_ >= epoch_length_) end_epoch();
}

void WeightSharingPolicy::end_epoch() {
    // Cold misses are nobody's misprediction; the share of an expert's mispredictions is taken among
    // the misses some expert could have avoided (paper Sec. 5: "capacity misses with evictions").
    static const bool literal = getenv("WS_LIT") != nullptr;
    const double misses = static_cast<double>(std::max<std::uint64_t>(literal ? epoch_misses_ : epoch_contested_, 1));
    for (int e = 0; e < expert_count; ++e) {
        const double wrong = static_cast<double>(epoch_mispredictions_[e]);
        const double loss = wrong >= config_.threshold * misses ? wrong / misses : 0.0;
        weight_[e] *= std::exp(-config_.learning_rate * loss);
        state_.mispredictions[e] += epoch_mispredictions_[e];
        epoch_mispredictions_[e] = 0;
        predicted_[e].clear();
    }
    evicted_by_.clear();
    double total = 0;
    for (const double w : weight_) total += w;
    const double mean = total / expert_count;
    total = 0;
    for (double& w : weight_) {
        w = (1 - config_.share) * w + config_.share * mean;
        total += w;
    }
    for (int e = 0; e < expert_count; ++e) {
        weight_[e] /= total; // keeps weights from underflowing over long traces
        state_.probability[e] = weight_[e];
    }
    int best = static_cast<int>(state_.current); // ties keep the current expert
    for (int e = 0; e < expert_count; ++e)
        if (weight_[e] > weight_[best]) best = e;
    static const double hyst = getenv("WS_H") ? atof(getenv("WS_H")) : 1.0;
    if (weight_[best] < hyst * weight_[static_cast<int>(state_.current)]) best = static_cast<int>(state_.current);
    if (best != static_cast<int>(state_.current)) ++state_.switches;
    state_.current = static_cast<Expert>(best);
    ++state_.epochs;
    epoch_misses_ = 0;
    epoch_contested_ = 0;
}

void WeightSharingPolicy::on_hit(Slot slot, const Access& access) {
    lru_.move_to_front(slot);
    lfu_.increment(slot);
    observe(access, false);
}

void WeightSharingPolicy::on_miss(const Access& access) { observe(access, true); }

Slot WeightSharingPolicy::choose_victim(const Access&) {
    static const bool mirror = getenv("WS_MIRROR") != nullptr;
    if (mirror) {
        auto& m = mirror_[static_cast<int>(state_.current)];
        while (!m.empty()) {
            const Key k = m.back();
            m.pop_back();
            if (const std::uint32_t* s = slot_of_.find(k)) return *s;
        }
    }
    switch (state_.current) {
    case Expert::lru: return lru_.back();
    case Expert::lfu: return lfu_.min();
    case Expert::random: return random_.pick(rng_);
    }
    return lru_.back();
}

void WeightSharingPolicy::on_evict(Slot slot) {
    evicted_by_.put(key_of_[slot], static_cast<std::uint32_t>(state_.current));
    static const bool ghost = getenv("WS_GHOST") != nullptr;
    if (ghost) {
        frequency_history_.push_front(GhostList::Entry{key_of_[slot], size_of_[slot], 0, lfu_.frequency(slot)});
        while (!frequency_history_.empty() && frequency_history_.bytes() > config_.capacity) frequency_history_.pop_back();
    }
    remove_resident(slot);
}

void WeightSharingPolicy::on_insert(Slot slot, const Access& access) {
    if (slot >= key_of_.size()) key_of_.resize(std::max<std::size_t>(slot + 1, key_of_.size() * 2));
    key_of_[slot] = access.key;
    if (slot >= size_of_.size()) size_of_.resize(key_of_.size());
    size_of_[slot] = access.size;
    std::uint64_t freq = 1;
    if (auto g = frequency_history_.take(access.key)) freq = g->freq + 1;
    slot_of_.put(access.key, slot);
    lru_.push_front(slot);
    lfu_.insert(slot, freq);
    random_.insert(slot);
    ++resident_;
}

void WeightSharingPolicy::remove_resident(Slot slot) {
    slot_of_.erase(key_of_[slot]);
    lru_.unlink(slot);
    lfu_.erase(slot);
    random_.erase(slot);
    --resident_;
}

// An invalidated key is gone for every expert, not only for the real cache.
void WeightSharingPolicy::on_erase(Slot slot) {
    remove_resident(slot);
    for (CacheModel& shadow : shadow_) shadow.erase(key_of_[slot]);
}

std::optional<LearnerState> WeightSharingPolicy::learner_state() const { return state_; }

} // namespace iosig::tier::detail
