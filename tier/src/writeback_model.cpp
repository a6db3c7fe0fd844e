// The engine's write-back count, replayed on a trace (writeback_model.hpp).
#include "iosig/tier/writeback_model.hpp"

#include "iosig/tier/throttle_slices.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <span>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

namespace iosig::tier {
namespace {

// The flusher of engine_flush.cpp as a single server: it looks for work at its wake-ups, runs
// batches back to back while there is work, and sleeps to the next wake-up when there is none.
class FlusherReplay {
public:
    explicit FlusherReplay(const WritebackModelConfig& config)
        : config_(config), tick_(std::clamp(config.writeback_delay / 2, 0.005, 1.0)),
          next_check_(tick_), write_budget_(config.write_throttle_slice),
          page_(std::max<std::uint64_t>(config.home_page_bytes, 1)) {}

    // Everything the flusher does before `until`.
    void run_until(double until) {
        while (true) {
            if (in_flight_ && batch_end_ <= until) {
                complete_batch();
                continue;
            }
            if (in_flight_ || next_check_ > until) return;
            check(next_check_);
        }
    }

    // A writer at `now` waits while more than max_dirty_lines are dirty; it wakes the flusher,
    // which then writes lines back regardless of their age. Returns when the writer may go on.
    double wait_for_room(double now) {
        writer_waiting_ = true;
        while (dirty_.size() > config_.max_dirty_lines) {
            if (!in_flight_) next_check_ = std::min(next_check_, now);
            const double ready = in_flight_ ? batch_end_ : next_check_;
            if (ready > now) {
                writer_wait_ += ready - now;
                now = ready;
            }
            run_until(now);
        }
        writer_waiting_ = false;
        return now;
    }

    void dirty(std::uint64_t line, double now) {
        const auto [it, fresh] = dirty_.try_emplace(line, DirtyLine{now, ++periods_, 0});
        if (fresh)
            fifo_.emplace_back(line, it->second.period);
        else
            ++it->second.generation; // a rewrite: a write-back in flight no longer cleans it
    }

    // Bytes [begin, end) of the home file the sequential bypass wrote into its page cache.
    void bypass_write(std::uint64_t begin, std::uint64_t end) {
        bypass_pending_.insert(begin / page_, (end + page_ - 1) / page_);
    }

    // close: the batch in flight completes, then every dirty line is written home.
    WritebackEstimate close(double now) {
        run_until(now);
        double end = now;
        if (in_flight_) {
            end = std::max(end, batch_end_);
            complete_batch();
        }
        // The engine's close writes the file's dirty lines in line order, a batch at a time.
        std::vector<std::uint64_t> rest;
        rest.reserve(dirty_.size());
        for (const auto& entry : dirty_)
            rest.push_back(entry.first);
        std::sort(rest.begin(), rest.end());
        const std::size_t depth = std::max(1u, config_.queue_depth);
        // close's first batch syncs the home file; with no batch, nothing syncs it.
        double units = rest.empty() ? 0 : sync_bypass();
        for (std::size_t first = 0; first < rest.size(); first += depth) {
            units +=
                write_units(std::span(rest).subspan(first, std::min(depth, rest.size() - first)));
            ++syncs_;
        }
        writebacks_ += rest.size();
        end = finish(end, units + static_cast<double>((rest.size() + depth - 1) / depth));
        return WritebackEstimate{.writebacks = writebacks_,
                                 .writes = writes_,
                                 .write_units = units_,
                                 .syncs = syncs_,
                                 .writer_wait = writer_wait_,
                                 .bypass_synced_bytes = bypass_synced_,
                                 .bypass_writes = bypass_writes_,
                                 .bypass_deferred_bytes = bypass_pending_bytes(),
                                 .seconds = end};
    }

    double writer_wait() const { return writer_wait_; }

private:
    struct DirtyLine {
        double since;             // when its dirty period began
        std::uint64_t period;     // which dirty period: tells current FIFO entries from stale
        std::uint64_t generation; // rewrites since
    };

    // When `ios` line writes (write-backs in line-write units, and syncs) begun at `start`
    // complete: at the write rate, or when a throttle slice lets the last of them through.
    double finish(double start, double ios) {
        return config_.writeback_rate > 0 ? write_budget_.serve(start, ios / config_.writeback_rate)
                                          : start;
    }

    // What one home write of `bytes` costs, in line writes.
    double write_cost(std::uint64_t bytes) const {
        return config_.write_cost
                   ? config_.write_cost(bytes)
                   : static_cast<double>(bytes) / static_cast<double>(config_.line_size);
    }

    // The home writes of a batch of `lines` (sorted): runs of adjacent lines up to io_run_bytes,
    // as the engine's write_runs makes them; counts them and returns their cost in line writes.
    double write_units(std::span<const std::uint64_t> lines) {
        const std::uint64_t most = io_run_lines(config_.io_run_bytes, config_.line_size);
        double units = 0;
        for (std::size_t i = 0; i < lines.size();) {
            std::size_t j = i + 1;
            while (j < lines.size() && lines[j] == lines[j - 1] + 1 && j - i < most)
                ++j;
            units += write_cost((j - i) * config_.line_size);
            ++writes_;
            i = j;
        }
        units_ += units;
        return units;
    }

    // A batch's sync of the home file writes the bypass's dirty pages: each run of adjacent pages
    // in whole IOs of home_max_io_bytes and the rest. Returns their cost in line writes.
    double sync_bypass() {
        const std::uint64_t io = std::max(config_.home_max_io_bytes, page_);
        double units = 0;
        for (const auto& [first, end] : bypass_pending_.ranges()) {
            const std::uint64_t bytes = (end - first) * page_;
            const std::uint64_t whole = bytes / io, rest = bytes % io;
            units += static_cast<double>(whole) * write_cost(io) + (rest ? write_cost(rest) : 0);
            bypass_writes_ += whole + (rest ? 1 : 0);
            bypass_synced_ += bytes;
        }
        bypass_pending_.clear();
        units_ += units;
        return units;
    }

    std::uint64_t bypass_pending_bytes() const {
        std::uint64_t pages = 0;
        for (const auto& [first, end] : bypass_pending_.ranges())
            pages += end - first;
        return pages * page_;
    }

    // One look for work at time t: a batch of the oldest lines, ripe ones only unless under
    // pressure; none, and the flusher sleeps to its next wake-up.
    void check(double t) {
        const bool pressure = dirty_.size() * 2 > config_.max_dirty_lines || writer_waiting_;
        batch_.clear();
        std::size_t looked = 0;
        while (!fifo_.empty() && batch_.size() < std::max(1u, config_.queue_depth) &&
               looked < fifo_.size()) {
            const auto [line, period] = fifo_.front();
            const auto it = dirty_.find(line);
            if (it == dirty_.end() || it->second.period != period) { // cleaned since: stale entry
                fifo_.pop_front();
                continue;
            }
            if (!pressure && it->second.since > t - config_.writeback_delay) break; // oldest first
            fifo_.pop_front();
            fifo_.emplace_back(line, period); // dropped as stale once the line is clean
            batch_.emplace_back(line, it->second.generation);
            ++looked;
        }
        if (batch_.empty()) {
            next_check_ = (std::floor(t / tick_) + 1) * tick_;
            return;
        }
        writebacks_ += batch_.size();
        ++syncs_;
        in_flight_ = true;
        std::vector<std::uint64_t> lines;
        for (const auto& entry : batch_)
            lines.push_back(entry.first);
        std::sort(lines.begin(), lines.end());
        // The writes, then the home file's sync, which writes the bypass's bytes too.
        batch_end_ = finish(t, write_units(lines) + sync_bypass() + 1);
        next_check_ = batch_end_;
    }

    // The batch's lines are clean unless they were written again while it was in flight; those
    // start a new dirty period when the batch completes.
    void complete_batch() {
        for (const auto& [line, generation] : batch_) {
            const auto it = dirty_.find(line);
            if (it == dirty_.end()) continue;
            if (it->second.generation == generation) {
                dirty_.erase(it);
            } else {
                it->second.since = batch_end_;
                it->second.period = ++periods_;
                fifo_.emplace_back(line, it->second.period);
            }
        }
        in_flight_ = false;
    }

    const WritebackModelConfig& config_;
    const double tick_;
    double next_check_;
    ThrottleSlices write_budget_;
    const std::uint64_t page_; // of the home file's page cache
    bool in_flight_ = false;
    double batch_end_ = 0;
    bool writer_waiting_ = false;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> batch_; // line, generation at its start
    std::deque<std::pair<std::uint64_t, std::uint64_t>> fifo_;   // line, period; oldest first
    std::unordered_map<std::uint64_t, DirtyLine> dirty_;
    std::uint64_t periods_ = 0;
    std::uint64_t writebacks_ = 0;
    std::uint64_t writes_ = 0;
    double units_ = 0;
    std::uint64_t syncs_ = 0;
    double writer_wait_ = 0;
    CachedPages bypass_pending_; // dirty in the home file's page cache, unsynced
    std::uint64_t bypass_synced_ = 0;
    std::uint64_t bypass_writes_ = 0;
};

// The replay's loop: request i starts at begin(i, now, waited) (now: when the one before it was
// served; waited: the writers' waits so far), a writer then waits for room and dirties its lines,
// and the request is served by served(i, now).
template <class Begin, class Served>
WritebackEstimate replay(const Trace& trace, const WritebackModelConfig& config, Begin begin,
                         Served served) {
    if (trace.kind != TraceKind::blocks)
        throw std::invalid_argument("the write-back model needs a block trace");
    if (config.line_size == 0 || config.max_dirty_lines == 0)
        throw std::invalid_argument("line size and dirty bound must be > 0");
    if (!(config.writeback_rate >= 0))
        throw std::invalid_argument("the write-back rate must be >= 0");
    FlusherReplay flusher(config);
    static const std::vector<std::pair<std::uint32_t, std::uint64_t>> none;
    const auto& bypassed = config.bypassed_write_lines ? *config.bypassed_write_lines : none;
    std::size_t next_bypassed = 0; // trace order, as the lines below
    double now = 0;
    for (std::size_t i = 0; i < trace.requests.size(); ++i) {
        now = begin(i, now, flusher.writer_wait());
        flusher.run_until(now);
        const Request& r = trace.requests[i];
        if (r.write) {
            now = flusher.wait_for_room(now);
            const LineSpan span = line_span(r, config.line_size);
            for (std::uint64_t line = span.first; line < span.first + span.count; ++line) {
                if (next_bypassed < bypassed.size() && bypassed[next_bypassed].first == i &&
                    bypassed[next_bypassed].second == line) {
                    ++next_bypassed;
                    const ByteRange part = line_part(r, line, config.line_size);
                    flusher.bypass_write(part.begin, part.end);
                } else {
                    flusher.dirty(line, now);
                }
            }
        }
        now = served(i, now);
    }
    if (next_bypassed != bypassed.size())
        throw std::invalid_argument("bypassed write lines not in trace order, or not of writes");
    return flusher.close(now);
}

} // namespace

WritebackEstimate estimate_writebacks(const Trace& trace, const std::vector<double>& issue_times,
                                      const WritebackModelConfig& config) {
    if (issue_times.size() != trace.requests.size())
        throw std::invalid_argument("one issue time per request");
    // A writer's wait delays every later request.
    return replay(
        trace, config,
        [&](std::size_t i, double now, double waited) {
            return std::max(now, issue_times[i] + waited);
        },
        [](std::size_t, double now) { return now; });
}

WritebackEstimate estimate_writebacks(const Trace& trace, const std::vector<RequestPace>& pace,
                                      ThrottleSlices fetch_throttle,
                                      const WritebackModelConfig& config) {
    if (pace.size() != trace.requests.size()) throw std::invalid_argument("one pace per request");
    return replay(
        trace, config, [](std::size_t, double now, double) { return now; },
        [&](std::size_t i, double now) {
            const RequestPace& p = pace[i];
            double filled = now;
            if (fetch_throttle.two_budgets()) {
                if (p.fetch_ios > 0) filled = fetch_throttle.serve(now, p.fetch_ios, p.fetch_bytes);
            } else if (p.fetch_seconds > 0) {
                filled = fetch_throttle.serve(now, p.fetch_seconds);
            }
            return filled + p.tier1_seconds;
        });
}

WritebackEstimate estimate_writebacks(const Trace& trace, double seconds,
                                      const WritebackModelConfig& config) {
    const double step =
        trace.requests.empty() ? 0 : seconds / static_cast<double>(trace.requests.size());
    std::vector<double> issue_times(trace.requests.size());
    for (std::size_t i = 0; i < issue_times.size(); ++i)
        issue_times[i] = static_cast<double>(i) * step;
    return estimate_writebacks(trace, issue_times, config);
}

} // namespace iosig::tier
