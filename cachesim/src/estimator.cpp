// Runs a workload through the model of its method, with the baseline alongside.
#include "iosig/cachesim/estimator.hpp"

#include "iosig/cachesim/stdio_model.hpp"
#include "iosig/cachesim/sync_cost.hpp"
#include "iosig/cachesim/throttle.hpp"

#include <fmt/format.h>

namespace iosig::cachesim {

double baseline_cost(const ModelParameters& p, double size) {
    return p.device_write_bw > 0 ? size / p.device_write_bw : 0.0;
}

std::string validate_for_method(const ModelParameters& p, Method method,
                                std::span<const WriteRequest> workload) {
    if (method != Method::direct) return {};
    const auto block = static_cast<std::uint64_t>(p.block_size);
    for (std::size_t i = 0; i < workload.size(); ++i) {
        const WriteRequest& w = workload[i];
        if (w.offset % block != 0 || w.size % block != 0)
            return fmt::format(
                "line {}: direct IO needs offsets and sizes that are multiples of the "
                "block size ({} B); got offset {} size {}",
                w.line ? w.line : static_cast<int>(i + 2), block, w.offset, w.size);
    }
    return {};
}

InitialState initial_state_from(const KernelDirtyState& state) {
    InitialState initial;
    initial.foreign_dirty = state.dirty_and_writeback();
    return initial;
}

namespace {

// The mean cost with its paced pause replaced by the median number of whole sleeps.
double typical_cost(const ModelParameters& p, double cost, double paced) {
    return cost - paced + median_sleep_time(paced, p.throttle_sleep);
}

void finish(Prediction& prediction, const ModelParameters& p,
            std::span<const WriteRequest> workload) {
    for (std::size_t i = 0; i < prediction.writes.size(); ++i) {
        PredictedWrite& w = prediction.writes[i];
        w.baseline = baseline_cost(p, static_cast<double>(workload[i].size));
        prediction.total_cost += w.cost;
        prediction.total_baseline += w.baseline;
    }
}

} // namespace

Prediction predict(const ModelParameters& p, Method method, std::span<const WriteRequest> workload,
                   const EstimatorOptions& options) {
    Prediction prediction;
    prediction.method = method;
    prediction.writes.reserve(workload.size());
    double clock = options.initial.time;

    switch (method) {
    case Method::direct:
    case Method::sync: {
        SyncWriteSequence sequence(p, method == Method::direct, options.existing_file_size);
        for (const WriteRequest& w : workload) {
            clock += w.delay;
            PredictedWrite out;
            out.start = clock;
            out.cost = sequence.write(w.offset, w.size);
            out.typical = out.cost;
            clock += out.cost;
            prediction.writes.push_back(out);
        }
        break;
    }
    case Method::buffered: {
        SyscallWriteModel model(p, options.initial);
        if (options.record_trajectory) model.record_trajectory(&prediction.trajectory);
        for (const WriteRequest& w : workload) {
            const WriteCost c = model.write(0, w.offset, w.size, w.delay);
            prediction.writes.push_back({c.start, c.cost, typical_cost(p, c.cost, c.paced), 0,
                                         c.pause, c.dirty_after, c.state, 1});
        }
        clock = model.now();
        break;
    }
    case Method::stdio: {
        StdioWriteModel model(p, options.initial);
        if (options.record_trajectory) model.kernel().record_trajectory(&prediction.trajectory);
        for (const WriteRequest& w : workload) {
            const StdioCost c = model.write(0, w.offset, w.size, w.delay);
            prediction.writes.push_back({c.start, c.cost, typical_cost(p, c.cost, c.paced), 0,
                                         c.pause, model.kernel().dirty_bytes(), c.state,
                                         c.syscalls});
        }
        clock = model.now();
        break;
    }
    }
    prediction.elapsed = clock - options.initial.time;
    finish(prediction, p, workload);
    return prediction;
}

} // namespace iosig::cachesim
