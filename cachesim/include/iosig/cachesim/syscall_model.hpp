// CAWL Alg. 1, Syscall_IO_Cost: the cost of a buffered (non-synchronous) write() with the page
// cache, background flushing during delays and writes, and the kernel's throttling.
//
// Calls must come in program order; each updates the simulated clock, the dirty blocks and the
// throttling state the next call depends on. Long idle gaps, a drained cache and rewrites are all
// ordinary inputs: the model never aborts.
#pragma once

#include "iosig/cachesim/page_cache.hpp"
#include "iosig/cachesim/parameters.hpp"
#include "iosig/cachesim/throttle.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace iosig::cachesim {

struct WriteCost {
    double cost = 0;        // seconds the call takes
    double start = 0;       // simulated time it starts (after its delay)
    double pause = 0;       // part of `cost` spent paused by balance_dirty_pages
    double paced = 0;       // part of `pause` paced at the task rate (period - think), without the
                            // MAX_PAUSE waits at the limit: what median_sleep_time quantizes
    double dirty_after = 0; // dirty bytes (incl. write-back) when it returns
    std::uint64_t newly_dirtied = 0;         // bytes that were clean before
    CacheState state = CacheState::no_flush; // the most restrictive state during the call
};

// Seconds per byte for write() to rewrite dirty bytes last written `age` seconds ago (an extension
// of CAWL, which charges every byte at r_ramdisk). They are copied into pages already in the cache,
// so nothing is allocated or accounted. Just written, the pages are still in the CPU cache and copy
// at page_cache_rewrite_bw (~35-50 GB/s on this VM); the longer ago, the more of them other work
// has evicted, down to page_cache_rewrite_bw_cold (~6-9 GB/s):
//   1/cold - (1/cold - 1/hot) * exp(-age / rewrite_cooling_time).
// Without a cold rate and cooling time, every rewrite copies at the hot rate; without that,
// memory_bw, else `fresh_rate`. (memory_bw alone is the wrong one when it was measured on a buffer
// that stays in the CPU cache: the harness's fwrite slope, 116 GB/s.)
double rewrite_seconds_per_byte(const ModelParameters& p, double age, double fresh_rate);

// Fixed cost of a write() that starts `age` seconds after the previous call returned (an extension
// of CAWL's constant L_w). Right after another call the kernel's code and data for this file are
// in the CPU caches; the longer the program computed in between, the more of them other work has
// evicted. On this VM a 4 KiB append costs ~4 us right after the previous one and 35-48 us 30 ms
// later:
//   cold - (cold - L_w) * exp(-age / call_cooling_time),  cold = write_syscall_cold_base.
// Without those two keys, L_w whatever the age. A program's first call counts as cold.
double call_base_cost(const ModelParameters& p, double age);

// One point of the predicted dirty trajectory.
struct DirtyPoint {
    double time;
    double dirty; // bytes
};

// Where the simulation starts: dirty data already in the cache (other processes', from the kernel's
// live state) and the simulated clock.
struct InitialState {
    double foreign_dirty = 0; // bytes
    double time = 0;
};

class SyscallWriteModel {
public:
    explicit SyscallWriteModel(const ModelParameters& p, const InitialState& initial = {});

    // Alg. 1: `delay` seconds of computation, then write(fd, size) at `offset` of `file`.
    WriteCost write(FileId file, std::uint64_t offset, std::uint64_t size, double delay);

    // Time passes without IO (the flusher keeps working).
    void idle(double seconds);

    double now() const { return now_; }
    double dirty_bytes() const { return cache_.dirty_bytes(); }
    double dirty_ratelimit() const { return ratelimit_.rate(); }
    const PageCacheModel& cache() const { return cache_; }
    const ModelParameters& parameters() const { return p_; }

    // Receives (time, dirty bytes) at every change of pace when set (for trajectories).
    void record_trajectory(std::vector<DirtyPoint>* out) { trajectory_ = out; }

private:
    double flush_for(double duration);
    bool flusher_writing() const { return flusher_running_ && now_ >= flusher_ready_; }
    double step_bytes() const;
    void note(double time);

    ModelParameters p_;
    PageCacheModel cache_;
    DirtyRatelimit ratelimit_;
    double now_ = 0;
    double paused_when_ = 0;       // the kernel's dirty_paused_when (think-time credit)
    double ratelimit_stamp_ = 0;   // start of the current ratelimit interval
    bool flusher_running_ = false; // background write-back triggered and not finished
    double flusher_ready_ = 0;     // when the triggered flusher really starts writing
    double dirtied_in_interval_ = 0;
    std::optional<double> last_call_end_; // when the previous write() returned (none yet: cold)
    std::vector<DirtyPoint>* trajectory_ = nullptr;
};

} // namespace iosig::cachesim
