// The fallback collector: samples /proc/vmstat at a fixed interval. It sees the global dirty and
// write-back pages and thresholds, not per-device rates or per-task throttling.
#include "iosig/cachesim/collector.hpp"

#include <chrono>
#include <thread>

namespace iosig::cachesim {
namespace {

class ProcfsCollector final : public DirtyCollector {
public:
    ProcfsCollector(const CollectorOptions& options, std::string reason)
        : DirtyCollector(StateSource::procfs, options) {
        set_fallback_reason(std::move(reason));
    }
    ~ProcfsCollector() override { stop(); }

    int poll(int timeout_ms) override {
        using clock = std::chrono::steady_clock;
        const auto now = clock::now();
        if (now < next_sample_) {
            const auto wait = std::min(
                next_sample_ - now,
                std::chrono::duration_cast<clock::duration>(std::chrono::milliseconds(timeout_ms)));
            std::this_thread::sleep_for(wait);
            if (clock::now() < next_sample_) return 0;
        }
        next_sample_ = clock::now() + std::chrono::duration_cast<clock::duration>(
                                          std::chrono::duration<double>(options_.poll_interval));
        auto state = read_procfs_state();
        if (!state || !state->global) return 0;
        add_global(*state->global);
        return 1;
    }

private:
    std::chrono::steady_clock::time_point next_sample_{};
};

} // namespace

std::unique_ptr<DirtyCollector> open_procfs_collector(const CollectorOptions& options,
                                                      std::string reason) {
    return std::make_unique<ProcfsCollector>(options, std::move(reason));
}

} // namespace iosig::cachesim
