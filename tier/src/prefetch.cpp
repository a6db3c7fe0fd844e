// The stream identifier and the Markov-chain predictor (prefetch.hpp).
#include "iosig/tier/prefetch.hpp"

#include "flat_map.hpp"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <stdexcept>

namespace iosig::tier {
namespace {

// Tracks up to `streams` strided sequences in the miss stream. A reference continuing a stream
// (key = last + k*stride, 1 <= k <= its window: lines already cached do not show up in the miss
// stream) confirms it; a nearby reference trains an unconfirmed stream's stride; anything else
// starts a new stream in the least recently used entry. Confirmed streams keep a window of lines
// prefetched ahead: `depth` at first, doubled at every refill of an adjacent stream up to
// `max_depth`.
class StreamPrefetcher final : public Prefetcher {
public:
    explicit StreamPrefetcher(const PrefetchConfig& config)
        : config_(config), streams_(config.streams) {}
    std::string_view name() const override { return "stream"; }

    void on_miss_stream(Key key, std::vector<Key>& candidates) override {
        ++tick_;
        const auto k = static_cast<std::int64_t>(key);
        for (Stream& s : streams_) {
            if (!s.within_window(k)) continue;
            s.last = k;
            s.used = tick_;
            if (++s.confirmations >= config_.confirmations) issue(s, candidates);
            return;
        }
        Stream* nearest = nullptr;
        std::int64_t nearest_distance = 0;
        for (Stream& s : streams_) {
            if (!s.valid || s.confirmations >= config_.confirmations) continue;
            const std::int64_t d = k > s.last ? k - s.last : s.last - k;
            if (d == 0 || d > static_cast<std::int64_t>(config_.max_stride)) continue;
            if (nearest == nullptr || d < nearest_distance) {
                nearest = &s;
                nearest_distance = d;
            }
        }
        if (nearest != nullptr) {
            nearest->stride = k - nearest->last;
            nearest->last = k;
            nearest->frontier = k;
            nearest->confirmations = 1;
            nearest->window = config_.depth;
            nearest->issued = false;
            nearest->rejected = false;
            nearest->used = tick_;
            return;
        }
        Stream* victim = &streams_[0];
        for (Stream& s : streams_) {
            if (!s.valid) {
                victim = &s;
                break;
            }
            if (s.used < victim->used) victim = &s;
        }
        *victim = Stream{true, k, 0, k, 0, tick_, config_.depth, false, false};
    }

    void on_rejected(Key key) override {
        const auto k = static_cast<std::int64_t>(key);
        for (Stream& s : streams_) {
            if (!s.issued || !s.within_window(k)) continue;
            // The first rejected key of a batch pulls the frontier back to just before it; the
            // later ones of that batch are beyond it already.
            if ((s.frontier - (k - s.stride)) / s.stride > 0) {
                s.frontier = k - s.stride;
                s.window = std::max(config_.depth, s.window / 2);
                s.rejected = true;
            }
            return;
        }
    }

private:
    struct Stream {
        bool valid = false;
        std::int64_t last = 0;
        std::int64_t stride = 0;
        std::int64_t frontier = 0; // farthest key already proposed, in the stream's direction
        unsigned confirmations = 0;
        std::uint64_t used = 0;
        unsigned window = 0;   // lines kept ahead
        bool issued = false;   // the first window went out
        bool rejected = false; // the owner had no room for part of the last batch
        // Whether `k` is 1 .. window strides ahead of the stream's last line.
        bool within_window(std::int64_t k) const {
            if (!valid || stride == 0 || (k - last) % stride != 0) return false;
            const std::int64_t steps = (k - last) / stride;
            return steps >= 1 && steps <= std::int64_t{window};
        }
    };
    // Keeps the stream's window of lines ahead, refilled in halves: nothing while more than half
    // of it is still ahead, then the rest at once. Batches of adjacent lines let the owner fetch
    // them in one home IO (the engine's prefetch runs); refilling a line per reference made every
    // prefetch its own IO. An adjacent stream that comes back for a refill has used its window, so
    // the window doubles: the lab's prefetched scan of 512 lines took 130 home IOs with a fixed
    // window of 8 lines.
    void issue(Stream& s, std::vector<Key>& candidates) {
        const bool frontier_ahead = s.stride > 0 ? s.frontier > s.last : s.frontier < s.last;
        if (frontier_ahead && (s.frontier - s.last) / s.stride > std::int64_t{s.window} / 2) return;
        if (s.issued && !s.rejected && (s.stride == 1 || s.stride == -1))
            s.window = std::max(s.window, std::min(2 * s.window, config_.max_depth));
        s.issued = true;
        s.rejected = false;
        const std::int64_t limit = s.last + s.stride * std::int64_t{s.window};
        std::int64_t next = (frontier_ahead ? s.frontier : s.last) + s.stride;
        for (; s.stride > 0 ? next <= limit : next >= limit; next += s.stride) {
            if (next < 0) break;
            candidates.push_back(static_cast<Key>(next));
            s.frontier = next;
        }
    }

    PrefetchConfig config_;
    std::vector<Stream> streams_;
    std::uint64_t tick_ = 0;
};

// First-order Markov chain over the miss stream (Joseph & Grunwald, ISCA'97): each row keeps the
// four most frequent successors of a key with their counts. Prediction follows the most probable
// successor up to `depth` steps (plus the second most probable at the first step), as long as the
// successor has been seen often enough and holds enough of its row's probability.
class MarkovPrefetcher final : public Prefetcher {
public:
    explicit MarkovPrefetcher(const PrefetchConfig& config)
        : config_(config), index_(config.markov_states) {
        rows_.reserve(config.markov_states);
    }
    std::string_view name() const override { return "markov"; }

    void on_miss_stream(Key key, std::vector<Key>& candidates) override {
        if (has_previous_) record(previous_, key);
        previous_ = key;
        has_previous_ = true;
        Key current = key;
        for (unsigned step = 0; step < config_.depth; ++step) {
            const std::uint32_t* r = index_.find(current);
            if (r == nullptr) break;
            const Row& row = rows_[*r];
            int best = -1, second = -1;
            for (int j = 0; j < ways; ++j) {
                if (row.count[j] == 0) continue;
                if (best < 0 || row.count[j] > row.count[best]) {
                    second = best;
                    best = j;
                } else if (second < 0 || row.count[j] > row.count[second]) {
                    second = j;
                }
            }
            if (best < 0 || !likely(row, best)) break;
            candidates.push_back(row.next[best]);
            if (step == 0 && second >= 0 && likely(row, second))
                candidates.push_back(row.next[second]);
            current = row.next[best];
            if (current == key) break;
        }
    }

private:
    static constexpr int ways = 4;
    struct Row {
        Key key = 0;
        std::array<Key, ways> next{};
        std::array<std::uint32_t, ways> count{};
        std::uint32_t total = 0;
    };
    bool likely(const Row& row, int j) const {
        return row.count[j] >= config_.markov_min_count &&
               row.count[j] >= config_.markov_min_probability * row.total;
    }
    void record(Key from, Key to) {
        std::uint32_t r;
        if (const std::uint32_t* found = index_.find(from)) {
            r = *found;
        } else if (rows_.size() < config_.markov_states) {
            r = static_cast<std::uint32_t>(rows_.size());
            rows_.push_back(Row{from, {}, {}, 0});
            index_.put(from, r);
        } else {
            r = static_cast<std::uint32_t>(oldest_);
            oldest_ = (oldest_ + 1) % rows_.size();
            index_.erase(rows_[r].key);
            rows_[r] = Row{from, {}, {}, 0};
            index_.put(from, r);
        }
        Row& row = rows_[r];
        int slot = -1, weakest = 0;
        for (int j = 0; j < ways; ++j) {
            if (row.count[j] != 0 && row.next[j] == to) slot = j;
            if (row.count[j] < row.count[weakest]) weakest = j;
        }
        if (slot < 0) {
            slot = weakest;
            row.total -= row.count[slot];
            row.next[slot] = to;
            row.count[slot] = 0;
        }
        ++row.count[slot];
        ++row.total;
        if (row.total > (1u << 20)) { // age: keep the chain able to follow a changing pattern
            row.total = 0;
            for (auto& c : row.count)
                row.total += (c = c / 2);
        }
    }

    PrefetchConfig config_;
    std::vector<Row> rows_;
    detail::FlatMap index_;
    std::size_t oldest_ = 0;
    Key previous_ = 0;
    bool has_previous_ = false;
};

} // namespace

PrefetchConfig fit_prefetch_window(PrefetchConfig config, std::uint64_t buffer_lines,
                                   std::uint64_t run_lines) {
    const std::uint64_t fitted = std::min<std::uint64_t>(
        {config.max_depth, buffer_lines, 2 * std::max<std::uint64_t>(run_lines, 1)});
    config.max_depth = std::max<unsigned>(config.depth, static_cast<unsigned>(fitted));
    return config;
}

std::vector<std::string> prefetcher_names() {
    return {"stream", "markov"};
}

std::unique_ptr<Prefetcher> make_prefetcher(std::string_view name, const PrefetchConfig& config) {
    if (name == "stream") return std::make_unique<StreamPrefetcher>(config);
    if (name == "markov") return std::make_unique<MarkovPrefetcher>(config);
    throw std::invalid_argument(
        fmt::format("unknown prefetcher '{}' (known: stream, markov)", name));
}

} // namespace iosig::tier
