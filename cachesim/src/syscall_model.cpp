// CAWL Alg. 1 (Syscall_IO_Cost) with the kernel's throttling as the fluid limit of
// balance_dirty_pages: a write is copied in pieces; each piece is charged at the rate of the state
// the cache is in, and above freerun the newly dirtied bytes of a piece are paused for
//   pause = new_bytes / (dirty_ratelimit * pos_ratio) - think time,
// think time being everything since the previous pause (the kernel's dirty_paused_when). The
// flusher writes back concurrently during delays, copies and pauses.
#include "iosig/cachesim/syscall_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace iosig::cachesim {
namespace {

constexpr double max_pause = 0.2;      // s, the kernel's MAX_PAUSE
constexpr double max_think_credit = 1; // s, beyond this the kernel forgets the think time

} // namespace

double call_base_cost(const ModelParameters& p, double age) {
    if (p.write_syscall_cold_base <= 0 || p.call_cooling_time <= 0) return p.write_syscall_base;
    const double cold = p.write_syscall_cold_base;
    return cold -
           (cold - p.write_syscall_base) * std::exp(-std::max(age, 0.0) / p.call_cooling_time);
}

double rewrite_seconds_per_byte(const ModelParameters& p, double age, double fresh_rate) {
    const double hot = p.page_cache_rewrite_bw > 0 ? p.page_cache_rewrite_bw
                       : p.memory_bw > 0           ? p.memory_bw
                                                   : fresh_rate;
    if (p.page_cache_rewrite_bw_cold <= 0 || p.rewrite_cooling_time <= 0) return 1 / hot;
    const double cold = 1 / p.page_cache_rewrite_bw_cold;
    return cold - (cold - 1 / hot) * std::exp(-std::max(age, 0.0) / p.rewrite_cooling_time);
}

SyscallWriteModel::SyscallWriteModel(const ModelParameters& p, const InitialState& initial)
    : p_(p), ratelimit_(p.dirty_ratelimit > 0 ? p.dirty_ratelimit : kernel_initial_dirty_ratelimit,
                        p.page_size),
      now_(initial.time), paused_when_(initial.time), ratelimit_stamp_(initial.time) {
    if (p_.writeback_bw <= 0) p_.writeback_bw = p_.device_write_bw;
    if (p_.page_cache_write_bw_flushing <= 0)
        p_.page_cache_write_bw_flushing = p_.page_cache_write_bw;
    if (initial.foreign_dirty >= 1)
        cache_.insert(foreign_file, 0, static_cast<std::uint64_t>(initial.foreign_dirty),
                      initial.time);
}

void SyscallWriteModel::note(double time) {
    if (trajectory_) trajectory_->push_back({time, cache_.dirty_bytes()});
}

// The flusher is triggered when the dirty level exceeds the background threshold (or data expired)
// and writes from writeback_start_latency later until the level is back under the threshold.
double SyscallWriteModel::flush_for(double duration) {
    if (duration <= 0) return 0;
    if (!flusher_running_ && (cache_.dirty_bytes() > p_.thresholds.background ||
                              cache_.has_expired(now_, p_.dirty_expire))) {
        flusher_running_ = true;
        flusher_ready_ = now_ + p_.writeback_start_latency;
    }
    double start = now_, span = duration;
    if (flusher_running_ && flusher_ready_ > now_) {
        const double waking = std::min(duration, flusher_ready_ - now_);
        start += waking;
        span -= waking;
    }
    std::function<void(double, double)> progress;
    if (trajectory_)
        progress = [this](double t, double dirty) { trajectory_->push_back({t, dirty}); };
    const double busy = span > 0
                            ? cache_
                                  .flush(start, span, p_.writeback_bw, p_.thresholds.background,
                                         p_.dirty_expire, p_.writeback_interval, progress)
                                  .busy
                            : 0.0;
    if (cache_.dirty_bytes() <= p_.thresholds.background &&
        !cache_.has_expired(now_ + duration, p_.dirty_expire))
        flusher_running_ = false;
    return busy;
}

void SyscallWriteModel::idle(double seconds) {
    if (seconds <= 0) return;
    flush_for(seconds);
    now_ += seconds;
    note(now_);
}

// Pieces small enough that the state does not jump across a threshold within one of them.
double SyscallWriteModel::step_bytes() const {
    const double gap = p_.thresholds.freerun() - p_.thresholds.background;
    const double step = std::max(64 * p_.page_size, gap / 64);
    return std::max(p_.page_size, std::floor(step / p_.page_size) * p_.page_size);
}

WriteCost SyscallWriteModel::write(FileId file, std::uint64_t offset, std::uint64_t size,
                                   double delay) {
    idle(delay);
    WriteCost out;
    out.start = now_;
    const DirtyThresholds& t = p_.thresholds;

    // Entering the kernel (L_w, more after a long computation): the flusher keeps going meanwhile.
    const double base = call_base_cost(
        p_, last_call_end_ ? now_ - *last_call_end_ : std::numeric_limits<double>::infinity());
    flush_for(base);
    now_ += base;
    out.cost += base;

    const auto step = static_cast<std::uint64_t>(step_bytes());
    std::uint64_t position = offset;
    std::uint64_t remaining = size;
    while (remaining > 0) {
        const std::uint64_t piece = std::min(remaining, step);
        double dirty = cache_.dirty_bytes();
        const CacheState state = classify(t, dirty, cache_.has_expired(now_, p_.dirty_expire));
        out.state = std::max(out.state, state);
        // The copy slows down only while the flusher is actually writing (CAWL's r_ramdisk under
        // background flush); until it has woken up, the copy runs at full speed.
        const double rate = state != CacheState::no_flush && flusher_writing()
                                ? p_.page_cache_write_bw_flushing
                                : p_.page_cache_write_bw;
        // The piece is dirtied as the copy starts (the block's time; a copy takes microseconds).
        // Bytes that rewrite dirty pages only copy into pages already in the cache: no allocation,
        // no accounting; what they cost depends on how long ago they were written
        // (rewrite_seconds_per_byte).
        struct {
            double seconds = 0;
            double now = 0;
            double fresh_rate = 0;
        } rewrite{0, now_, rate};
        const PageCacheModel::RewriteObserver observe = [this, &rewrite](std::uint64_t bytes,
                                                                         double written_at) {
            rewrite.seconds +=
                static_cast<double>(bytes) *
                rewrite_seconds_per_byte(p_, rewrite.now - written_at, rewrite.fresh_rate);
        };
        const std::uint64_t fresh = cache_.insert(file, position, piece, now_, &observe);
        const double copy = static_cast<double>(fresh) / rate + rewrite.seconds;
        out.newly_dirtied += fresh;

        double pause = 0;
        double waited = 0; // MAX_PAUSE waits at the limit: already flushed and on the clock
        if (state == CacheState::throttled && fresh > 0) {
            // At or above the limit the kernel pauses for MAX_PAUSE at a time until the flusher
            // has brought the dirty level back under it.
            double task_rate = ratelimit_.rate() * pos_ratio(t, dirty);
            for (int guard = 0; task_rate <= 0 && guard < 100000; ++guard) {
                flush_for(max_pause);
                now_ += max_pause;
                waited += max_pause;
                paused_when_ = now_;
                dirty = cache_.dirty_bytes();
                task_rate = ratelimit_.rate() * pos_ratio(t, dirty);
            }
            if (task_rate > 0) {
                const double period = static_cast<double>(fresh) / task_rate;
                const double think = now_ + copy - paused_when_;
                const double wait = period - think;
                if (wait > 0) {
                    pause = wait;
                    paused_when_ = now_ + copy + wait;
                } else if (wait < -max_think_credit) {
                    paused_when_ = now_ + copy;
                } else {
                    paused_when_ += period;
                }
            }
            dirtied_in_interval_ += static_cast<double>(fresh);
        } else if (state != CacheState::throttled) {
            paused_when_ = now_ + copy;
            ratelimit_stamp_ = now_ + copy;
            dirtied_in_interval_ = 0;
        }

        const double busy = copy + pause;
        flush_for(busy);
        now_ += busy;
        out.cost += busy + waited;
        out.pause += pause + waited;
        out.paced += pause;
        if (state == CacheState::throttled &&
            now_ - ratelimit_stamp_ >= DirtyRatelimit::update_interval) {
            ratelimit_.update(t, cache_.dirty_bytes(), dirtied_in_interval_,
                              now_ - ratelimit_stamp_, p_.writeback_bw);
            ratelimit_stamp_ = now_;
            dirtied_in_interval_ = 0;
        }
        position += piece;
        remaining -= piece;
    }
    out.dirty_after = cache_.dirty_bytes();
    last_call_end_ = now_;
    note(now_);
    return out;
}

} // namespace iosig::cachesim
