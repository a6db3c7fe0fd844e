// Prefetchers (paper Sec. 3: "stream identifiers and Markov chains"). Both learn from the *miss
// stream*: the references the main cache did not satisfy (demand misses and hits in the prefetch
// buffer, which would have been misses without it). They propose keys (line numbers); the owner
// decides whether there is room for them (prefetch only into free buffer slots, demand first).
#pragma once

#include "iosig/tier/policy.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace iosig::tier {

struct PrefetchConfig {
    unsigned streams = 16; // stream identifier: streams tracked at once
    // Lines ahead of a confirmed stream (its first window) / along a Markov path.
    unsigned depth = 8;
    // An adjacent stream (stride +1 or -1) doubles its window at every refill, up to this many
    // lines (readahead ramp-up, as Linux does): its refills then grow into larger home IOs. Owners
    // fit it to their buffer and their largest IO (fit_prefetch_window).
    unsigned max_depth = 64;
    std::uint64_t max_stride = 256;      // lines; larger jumps start a new stream instead
    unsigned confirmations = 2;          // stride matches before a stream prefetches
    std::size_t markov_states = 1 << 16; // rows of the transition table (oldest replaced first)
    double markov_min_probability =
        0.3;                       // a successor is predicted only above this share of its row
    unsigned markov_min_count = 2; // ... and after this many observed transitions
};

class Prefetcher {
public:
    virtual ~Prefetcher() = default;
    virtual std::string_view name() const = 0;
    // Learns from one reference of the miss stream and appends the keys worth prefetching now.
    virtual void on_miss_stream(Key key, std::vector<Key>& candidates) = 0;
    // The owner had no room for this proposed key. A stream proposes it again at its next refill
    // and halves its window (down to depth) instead of growing it: windows grow only while the
    // buffer takes them whole.
    virtual void on_rejected(Key) {}
};

// `config` with the stream window's growth fitted to an owner whose buffer holds `buffer_lines`
// prefetched lines and whose largest home IO holds `run_lines` lines: the window grows to at most
// max_depth, the buffer, and two IOs (a refill is half the window, so refills become whole IOs),
// and never shrinks below depth. With one line per IO it does not grow: growth only buys larger
// IOs.
PrefetchConfig fit_prefetch_window(PrefetchConfig config, std::uint64_t buffer_lines,
                                   std::uint64_t run_lines);

// "stream" or "markov"; throws std::invalid_argument otherwise.
std::unique_ptr<Prefetcher> make_prefetcher(std::string_view name,
                                            const PrefetchConfig& config = {});
std::vector<std::string> prefetcher_names();

} // namespace iosig::tier
