// The trace-driven simulator (simulator.hpp).
#include "iosig/tier/simulator.hpp"

#include "flat_map.hpp"
#include "iosig/tier/cache_model.hpp"
#include "references.hpp"
#include "sequential_bypass.hpp"

#include <chrono>
#include <deque>
#include <fmt/format.h>
#include <limits>
#include <optional>
#include <stdexcept>
#include <unordered_set>
#include <vector>

namespace iosig::tier {
namespace {

using detail::Reference;

// The replay asks the cache's index to start loading the place of the reference this many ahead.
// When the resident keys' metadata outgrows the CPU caches, each lookup otherwise waits for memory:
// in bench/tier (LRU, 8 GiB, 2 M keys resident) 8.7-9.4 -> 11.6-12.1 M references/s on a large
// object trace, 5.6-6.8 -> 8.3-9.2 on IRM over 8 M pages; nothing changes where the metadata fits.
constexpr std::size_t index_lookahead = 8;

// For Belady: next[i] = the index of the next reference to the key of reference i, or no_next.
// Made backwards over the requests, each one's references in reverse (as ReferenceChunks lists
// them forwards), so that the trace's references are never all held: 4 bytes per reference.
constexpr std::uint32_t no_next = std::numeric_limits<std::uint32_t>::max();
std::vector<std::uint32_t> next_references(const Trace& trace, SimMode mode,
                                           std::uint64_t line_size, std::uint64_t references) {
    if (references >= no_next)
        throw std::invalid_argument("trace too long for Belady (>= 2^32 - 1 references)");
    std::vector<std::uint32_t> next(references, no_next);
    detail::FlatMap last_seen(references / 4 + 16);
    auto i = static_cast<std::uint32_t>(references);
    const auto seen = [&](Key key) {
        --i;
        if (const std::uint32_t* j = last_seen.find(key)) next[i] = *j;
        last_seen.put(key, i);
    };
    for (std::size_t r = trace.requests.size(); r-- > 0;) {
        if (mode == SimMode::object) {
            seen(trace.requests[r].id);
            continue;
        }
        const LineSpan span = line_span(trace.requests[r], line_size);
        for (std::uint64_t line = span.first + span.count; line-- > span.first;)
            seen(line);
    }
    return next;
}

// The separate buffer prefetched entries wait in until they are used or expire (FIFO by issue
// time).
class PrefetchBufferModel {
public:
    explicit PrefetchBufferModel(std::uint64_t capacity) : capacity_(capacity) {}
    bool contains(Key key) const { return index_.contains(key); }
    bool take(Key key) {
        const auto seq = index_.erase(key);
        if (!seq) return false;
        Entry& e = entries_[*seq - base_];
        e.live = false;
        used_ -= e.size;
        return true;
    }
    bool add(Key key, std::uint64_t size, std::uint64_t now) {
        if (used_ + size > capacity_) return false;
        index_.put(key, static_cast<std::uint32_t>(base_ + entries_.size()));
        entries_.push_back(Entry{key, size, now, true});
        used_ += size;
        return true;
    }
    // Drops entries issued more than `lifetime` references ago; returns how many were unused.
    std::uint64_t expire(std::uint64_t now, std::uint64_t lifetime) {
        std::uint64_t wasted = 0;
        while (!entries_.empty() &&
               (!entries_.front().live || entries_.front().issued + lifetime < now)) {
            if (entries_.front().live) {
                ++wasted;
                index_.erase(entries_.front().key);
                used_ -= entries_.front().size;
            }
            entries_.pop_front();
            ++base_;
        }
        return wasted;
    }
    std::uint64_t live() const { return index_.size(); }

private:
    struct Entry {
        Key key;
        std::uint64_t size;
        std::uint64_t issued;
        bool live;
    };
    std::uint64_t capacity_;
    std::uint64_t used_ = 0;
    std::deque<Entry> entries_;
    std::uint64_t base_ = 0; // sequence number of entries_.front(); index_ maps key -> sequence
    detail::FlatMap index_;
};

// Counts a demand miss; true when the slow tier must be read for it (a read, or a write to part
// of a line).
bool count_miss(SimResult& result, const Reference& ref, std::uint64_t line_size) {
    ++result.misses;
    result.bytes_missed += ref.bytes;
    if (!ref.write) {
        ++result.read_misses;
        return true;
    }
    ++result.write_misses;
    const bool partial = result.mode == SimMode::block && ref.bytes < line_size;
    if (partial) ++result.partial_write_misses;
    return partial;
}

} // namespace

std::string_view to_string(SimMode mode) {
    return mode == SimMode::object ? "object" : "block";
}

std::uint64_t working_set_bytes(const Trace& trace, const SimConfig& config) {
    SimConfig probe = config;
    probe.cache_size = 1; // the mode check rejects a zero size; the footprint does not depend on it
    const SimMode mode = detail::checked_mode(trace, probe);
    std::unordered_set<Key> seen;
    std::uint64_t bytes = 0;
    for (detail::ReferenceChunks chunks(trace, mode, config.line_size); chunks.next();)
        for (const detail::Reference& r : chunks.refs())
            if (seen.insert(r.key).second)
                bytes += mode == SimMode::object ? r.size : config.line_size;
    return bytes;
}

SimResult simulate(const Trace& trace, const SimConfig& config) {
    const SimMode mode = detail::checked_mode(trace, config);
    if (!config.prefetch.empty()) make_prefetcher(config.prefetch); // validates the name early
    if (config.sequential_cutoff > 0 && mode != SimMode::block)
        throw std::invalid_argument(
            "the sequential bypass needs block mode (a file's byte ranges)");

    const std::uint64_t unit = mode == SimMode::object ? 1 : config.line_size;
    std::uint64_t buffer = 0;
    if (!config.prefetch.empty()) {
        buffer = (config.prefetch_buffer ? config.prefetch_buffer : config.cache_size / 32) / unit;
        if (buffer == 0) buffer = 1;
    }
    // The prefetch buffer is memory beside the cache, as in the paper ("separate prefetch
    // buffers"; its cache sizes are fixed) and in the engine (prefetched lines wait in memory,
    // outside the cache file): the cache keeps its whole size, and a prefetcher that proposes
    // nothing costs nothing. Carving the buffer out of the cache made a quiet prefetcher cost
    // 2-3 % of misses on uniform random traffic at half the working set and more.
    const std::uint64_t total = config.cache_size / unit;
    if (total == 0)
        throw std::invalid_argument(
            fmt::format("cache size {} is smaller than one {}-byte line", config.cache_size, unit));

    SimResult result;
    result.policy = config.policy;
    result.prefetch = config.prefetch;
    result.mode = mode;
    result.cache_size = config.cache_size;
    result.capacity = total;
    result.prefetch_buffer = buffer * unit;
    result.requests = trace.requests.size();

    PolicyConfig pc = config.policy_config;
    pc.capacity = result.capacity;
    CacheModel cache(result.capacity, make_policy(config.policy, pc));

    const bool per_request = config.fills_per_request && mode == SimMode::block;
    const bool need_request_of = per_request || config.sequential_cutoff > 0;
    if (need_request_of && trace.requests.size() > std::numeric_limits<std::uint32_t>::max())
        throw std::invalid_argument("fills per request: too many requests");
    if (per_request) {
        result.request_fills.assign(trace.requests.size(), 0);
        result.request_fill_reads.assign(trace.requests.size(), 0);
    }
    std::optional<detail::SequentialBypass> bypass;
    if (config.sequential_cutoff > 0) {
        bypass.emplace(trace, config);
        if (per_request) {
            result.request_bypass_ios.assign(trace.requests.size(), 0);
            result.request_bypass_bytes.assign(trace.requests.size(), 0);
        }
    }
    const bool bypass_on = bypass.has_value();

    // The references of one chunk of whole requests at a time.
    detail::ReferenceChunks chunks(trace, mode, config.line_size,
                                   config.replay_chunk ? config.replay_chunk
                                                       : detail::default_reference_chunk,
                                   need_request_of);
    const std::vector<Reference>& refs = chunks.refs();
    const std::vector<std::uint32_t>& request_of = chunks.request_of();
    const detail::ReferenceTotals totals = detail::reference_totals(trace, mode, config.line_size);
    result.references = totals.references;
    result.bytes_requested = totals.bytes;

    // Indices below are chunk-local (j) or trace-wide (i = chunks.base() + j); a request never
    // spans two chunks.
    // A line of a bypassing request that the cache does not hold goes past it.
    const auto bypassed = [&](const Reference& ref, std::size_t j) {
        if (!bypass->bypasses(request_of[j]) || cache.contains(ref.key)) return false;
        bypass->serve(ref, request_of[j], result, per_request);
        return true;
    };
    // The engine's fill runs: a read miss (already inserted, so its evictions are done) fetches
    // the lines after it in its request that the cache does not hold, up to run_lines.
    const std::uint64_t run_lines = io_run_lines(config.io_run_bytes, config.line_size);
    std::size_t run_end = 0; // chunk references [.., run_end) came with the current run
    const auto miss = [&](const Reference& ref, std::size_t j) {
        if (!count_miss(result, ref, config.line_size) || !per_request) return;
        const std::uint32_t request = request_of[j];
        ++result.request_fills[request];
        if (!ref.write && j < run_end) return; // fetched with an earlier line of its request
        ++result.request_fill_reads[request];
        if (ref.write) return; // a partial write fills its line alone
        run_end = j + 1;
        while (run_end < refs.size() && run_end - j < run_lines && request_of[run_end] == request &&
               !cache.contains(refs[run_end].key))
            ++run_end;
    };
    // Belady's look into the future.
    const std::vector<std::uint32_t> next =
        policy_is_offline(config.policy)
            ? next_references(trace, mode, config.line_size, result.references)
            : std::vector<std::uint32_t>{};
    const auto next_use = [&](std::size_t i) {
        return next.empty() || next[i] == no_next ? never_again : std::int64_t{next[i]};
    };
    // SimResult::seconds times the replay loops alone, chunk by chunk, as it did when the whole
    // trace was expanded before the loop.
    using clock = std::chrono::steady_clock;
    const auto add_time = [&](clock::time_point since) {
        result.seconds += std::chrono::duration<double>(clock::now() - since).count();
    };
    bool have_chunk = chunks.next();
    if (config.prefetch.empty()) {
        for (; have_chunk; have_chunk = chunks.next()) {
            const auto chunk_start = clock::now();
            run_end = 0;
            for (std::size_t j = 0; j < refs.size(); ++j) {
                const Reference& ref = refs[j];
                if (j + index_lookahead < refs.size())
                    cache.prepare_lookup(refs[j + index_lookahead].key);
                if (bypass_on && bypassed(ref, j)) continue;
                const Access a{ref.key, ref.size, next_use(chunks.base() + j)};
                if (cache.access(a))
                    ++result.hits;
                else
                    miss(ref, j);
            }
            add_time(chunk_start);
        }
    } else {
        PrefetchBufferModel pbuf(buffer);
        const std::uint64_t mean_size = std::max<std::uint64_t>(
            1, result.bytes_requested / std::max<std::uint64_t>(1, result.references));
        const std::uint64_t buffer_entries =
            std::max<std::uint64_t>(1, mode == SimMode::object ? buffer / mean_size : buffer);
        // Objects are not read in runs, so their streams' windows do not grow.
        const auto prefetcher = make_prefetcher(
            config.prefetch, fit_prefetch_window(config.prefetch_config, buffer_entries,
                                                 mode == SimMode::block ? run_lines : 1));
        const std::uint64_t lifetime =
            config.prefetch_lifetime ? config.prefetch_lifetime : 8 * buffer_entries;
        const auto past_limit = [&](Key k) {
            return mode == SimMode::block && config.prefetch_limit &&
                   k >= (config.prefetch_limit + config.line_size - 1) / config.line_size;
        };
        // Into free buffer slots; adjacent lines share a home read up to run_lines.
        const auto issue_prefetches = [&](const std::vector<Key>& keys, const Reference& ref,
                                          std::size_t i) {
            std::optional<Key> prefetch_last; // the last line of the current prefetch run
            std::uint64_t prefetch_run = 0;
            for (const Key k : keys) {
                if (cache.contains(k) || pbuf.contains(k) || past_limit(k)) {
                    prefetch_last.reset(); // a line not fetched ends the run
                    continue;
                }
                if (!pbuf.add(k, ref.size, i)) {
                    prefetch_last.reset();
                    prefetcher->on_rejected(k);
                    continue;
                }
                ++result.prefetches_issued;
                if (mode == SimMode::block && prefetch_last && k == *prefetch_last + 1 &&
                    prefetch_run < run_lines) {
                    ++prefetch_run;
                } else {
                    ++result.prefetch_reads;
                    prefetch_run = 1;
                }
                prefetch_last = k;
            }
        };
        std::vector<Key> candidates;
        for (; have_chunk; have_chunk = chunks.next()) {
            const auto chunk_start = clock::now();
            run_end = 0;
            for (std::size_t j = 0; j < refs.size(); ++j) {
                const Reference& ref = refs[j];
                const std::size_t i = chunks.base() + j;
                if (j + index_lookahead < refs.size())
                    cache.prepare_lookup(refs[j + index_lookahead].key);
                if (bypass_on && bypassed(ref, j)) {
                    // The engine drops a prefetched line that a write goes past it to.
                    if (ref.write && pbuf.take(ref.key)) ++result.prefetches_wasted;
                    result.prefetches_wasted += pbuf.expire(i, lifetime);
                    continue;
                }
                const Access a{ref.key, ref.size, next_use(i)};
                candidates.clear();
                if (cache.contains(ref.key)) {
                    cache.access(a);
                    ++result.hits;
                } else {
                    if (pbuf.take(ref.key)) {
                        ++result.hits;
                        ++result.prefetch_hits;
                        cache.insert(a);
                    } else {
                        cache.access(a);
                        miss(ref, j);
                    }
                    prefetcher->on_miss_stream(ref.key, candidates);
                }
                issue_prefetches(candidates, ref, i);
                result.prefetches_wasted += pbuf.expire(i, lifetime);
            }
            add_time(chunk_start);
        }
        result.prefetches_wasted += pbuf.live();
    }
    result.learner = cache.policy().learner_state();
    return result;
}

} // namespace iosig::tier
