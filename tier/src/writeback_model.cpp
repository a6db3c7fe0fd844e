// The engine's write-back count, replayed on a trace (writeback_model.hpp).
#include "iosig/tier/writeback_model.hpp"

#include <algorithm>
#include <deque>
#include <stdexcept>
#include <unordered_map>

namespace iosig::tier {

std::uint64_t expected_writebacks(const Trace& trace, double seconds,
                                  const WritebackModelConfig& config) {
    if (trace.kind != TraceKind::blocks)
        throw std::invalid_argument("the write-back model needs a block trace");
    if (config.line_size == 0 || config.max_dirty_lines == 0)
        throw std::invalid_argument("line size and dirty bound must be > 0");
    const double step =
        trace.requests.empty() ? 0 : seconds / static_cast<double>(trace.requests.size());
    // Dirty lines, oldest first, with the time each became dirty; a line is in `dirty_since`
    // exactly while it is dirty, and its FIFO entry is current when the times agree.
    std::deque<std::pair<std::uint64_t, double>> fifo;
    std::unordered_map<std::uint64_t, double> dirty_since;
    std::uint64_t writebacks = 0;
    // One wake of the flusher: batches of the oldest lines, ripe ones only unless under pressure.
    const auto flush = [&](double now) {
        while (true) {
            const bool pressure = dirty_since.size() * 2 > config.max_dirty_lines;
            unsigned batch = 0;
            while (!fifo.empty() && batch < std::max(1u, config.queue_depth)) {
                const auto [line, since] = fifo.front();
                const auto it = dirty_since.find(line);
                if (it == dirty_since.end() || it->second != since) { // stale entry
                    fifo.pop_front();
                    continue;
                }
                if (!pressure && since > now - config.writeback_delay) break;
                fifo.pop_front();
                dirty_since.erase(it);
                ++writebacks;
                ++batch;
            }
            if (batch == 0) return;
        }
    };
    const double tick = std::clamp(config.writeback_delay / 2, 0.005, 1.0);
    double next_wake = tick;
    for (std::size_t i = 0; i < trace.requests.size(); ++i) {
        const double now = static_cast<double>(i) * step;
        for (; next_wake <= now; next_wake += tick)
            flush(next_wake);
        const Request& r = trace.requests[i];
        if (!r.write) continue;
        for (std::uint64_t line = r.id / config.line_size; line * config.line_size < r.id + r.size;
             ++line) {
            if (dirty_since.emplace(line, now).second) fifo.emplace_back(line, now);
        }
        if (dirty_since.size() > config.max_dirty_lines) flush(now); // the writer waits for room
    }
    return writebacks + dirty_since.size(); // close writes the rest home
}

} // namespace iosig::tier
