// The trace-driven simulator behind iosig-tiersim.
//
// Object mode (oracleGeneral traces): every request is one object of its own size; capacity is in
// bytes; libCacheSim's semantics, so its published miss counts are reproduced exactly.
// Block mode (csv and synthetic block traces): every request is split into the fixed-size lines it
// touches; capacity is cache size / line size lines; a line is what the engine caches.
//
// With a prefetcher, a prefetch buffer of memory sits beside the cache (default 1/32 of the cache
// size), as in the paper and the engine; the main cache keeps its whole size. A reference found in
// the buffer is promoted into the main cache and counts as a hit (no demand fetch from the slow
// tier). Prefetches are issued after the demand reference is served, only into free buffer slots;
// an unused prefetch leaves the buffer after `prefetch_lifetime` references (counted as wasted).
#pragma once

#include "iosig/tier/policy.hpp"
#include "iosig/tier/prefetch.hpp"
#include "iosig/tier/readahead_model.hpp"
#include "iosig/tier/trace.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace iosig::tier {

enum class SimMode : std::uint8_t { object, block };

struct SimConfig {
    std::string policy = "lru";
    PolicyConfig policy_config;     // capacity is filled in by simulate()
    std::uint64_t cache_size = 0;   // bytes
    std::uint64_t line_size = 4096; // bytes (block mode)
    std::optional<SimMode> mode;    // default: object for object traces, block for block traces
    std::string prefetch;           // "", "stream" or "markov"
    PrefetchConfig prefetch_config;
    std::uint64_t prefetch_buffer = 0;   // bytes beside the cache; 0 = cache_size / 32
    std::uint64_t prefetch_lifetime = 0; // references; 0 = 8 * buffer entries
    // Block mode: no line at or past this byte offset is prefetched, as the engine reads nothing
    // past the end of its home file (a stream's window otherwise runs past a scanned file's end).
    // 0: no limit.
    std::uint64_t prefetch_limit = 0;
    bool fills_per_request = false; // block mode: fill SimResult::request_fills
    // As the engine (TierConfig::io_run_bytes): a read miss fetches with it the lines after it in
    // the same request that the cache does not hold, in one IO of up to this many bytes.
    std::uint64_t io_run_bytes = default_io_run_bytes;
    // Block mode, as the engine (TierConfig::sequential_cutoff): a request that makes the trace's
    // sequential stream (the trace is one handle's requests) longer than this many bytes bypasses
    // the cache. Its lines the main cache holds are hits; the others are neither hits nor misses:
    // they are read or written through the home file's page cache (readahead_model.hpp) and not
    // inserted. 0: never.
    std::uint64_t sequential_cutoff = 0;
    ReadaheadConfig readahead; // the home device's, for the bypass's reads
    // The home file's size, which readahead does not pass; 0: the end of the trace's last byte.
    std::uint64_t home_file_size = 0;
    // The replay turns this many references of the trace into cache keys at a time (whole requests;
    // 0: 64 Ki), so that a simulation holds 28 bytes per reference of one chunk, not of the whole
    // trace (Belady adds 4 bytes per reference of the trace for the next uses it looks up). Results
    // do not depend on it.
    std::size_t replay_chunk = 0;
};

struct SimResult {
    std::string policy;
    std::string prefetch;
    SimMode mode = SimMode::object;
    std::uint64_t cache_size = 0;      // bytes
    std::uint64_t capacity = 0;        // main cache, in bytes (object) or lines (block)
    std::uint64_t prefetch_buffer = 0; // bytes beside the cache (0: no prefetcher)
    std::uint64_t requests = 0;        // trace requests
    std::uint64_t references = 0;      // object or line references the cache saw
    std::uint64_t hits = 0;            // includes prefetch_hits
    std::uint64_t misses = 0; // demand misses: fetched from the slow tier on the caller's path
    std::uint64_t read_misses = 0, write_misses = 0;
    // Block mode: write misses on part of a line only, which the engine must fill from the slow
    // tier before it writes (a write of the whole line needs no read).
    std::uint64_t partial_write_misses = 0;
    // With SimConfig::fills_per_request, per trace request: the lines the slow tier reads on its
    // path (its read misses and partial write misses), for pacing a replay of the request stream.
    std::vector<std::uint32_t> request_fills;
    // ... and in how many home reads (SimConfig::io_run_bytes).
    std::vector<std::uint32_t> request_fill_reads;
    std::uint64_t bytes_requested = 0;
    std::uint64_t bytes_missed = 0; // requested bytes that lay in missed objects/lines
    std::uint64_t prefetches_issued = 0;
    // Home reads for them: in block mode, the adjacent lines one reference's prefetcher proposes
    // share a read up to SimConfig::io_run_bytes, as the engine's prefetch worker reads them.
    std::uint64_t prefetch_reads = 0;
    std::uint64_t prefetch_hits = 0;     // references served by the prefetch buffer
    std::uint64_t prefetches_wasted = 0; // left the buffer unused
    // SimConfig::sequential_cutoff: lines that went past the cache, their requested bytes (and
    // those of writes among them), and the home device's reads for them through the page cache.
    std::uint64_t bypassed_references = 0;
    std::uint64_t bypassed_bytes = 0, bypassed_write_bytes = 0;
    HomeReads bypass_reads;
    // ... per trace request, with fills_per_request.
    std::vector<std::uint32_t> request_bypass_ios;
    std::vector<std::uint64_t> request_bypass_bytes;
    // ... and the lines of write requests that went past the cache, as (request, line) in trace
    // order: they dirty the home file's page cache, not a cache line, and the flusher's next sync
    // of the home file writes them (WritebackModelConfig::bypassed_write_lines).
    std::vector<std::pair<std::uint32_t, std::uint64_t>> bypassed_write_lines;
    double seconds = 0; // simulation loop only
    std::optional<LearnerState> learner;

    double miss_ratio() const { return references ? double(misses) / double(references) : 0; }
    double byte_miss_ratio() const {
        return bytes_requested ? double(bytes_missed) / double(bytes_requested) : 0;
    }
    // Share of issued prefetches that were used (prefetches still in the buffer at the end count
    // as unused).
    double prefetch_accuracy() const {
        return prefetches_issued ? double(prefetch_hits) / double(prefetches_issued) : 0;
    }
    double references_per_second() const { return seconds > 0 ? double(references) / seconds : 0; }
    double requests_per_second() const { return seconds > 0 ? double(requests) / seconds : 0; }
};

// Throws std::invalid_argument on a bad configuration (unknown policy, line size not a power of two
// or outside 512 B .. 1 GiB, object mode on a block trace's byte ranges is allowed, block mode on
// an object trace is not).
SimResult simulate(const Trace& trace, const SimConfig& config);

// The trace's footprint in the mode `config` asks for: the bytes of every distinct object (at its
// first size) in object mode, distinct lines x line size in block mode. A cache this large misses
// only on first references; iosig-tiersim sizes caches given as a share of it (`--cache-size 10%`).
std::uint64_t working_set_bytes(const Trace& trace, const SimConfig& config);

std::string_view to_string(SimMode mode);

} // namespace iosig::tier
