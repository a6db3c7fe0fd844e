#include "prediction_output.hpp"

#include "iosig/units.hpp"

#include <fmt/format.h>

namespace iosig::cachesim {

std::string prediction_csv(const Prediction& prediction, std::span<const WriteRequest> workload,
                           double page_size) {
    std::string out =
        "index,offset,size,delay_s,cost_s,baseline_s,pause_s,dirty_pages,state,syscalls,"
        "typical_s\n";
    for (std::size_t i = 0; i < prediction.writes.size(); ++i) {
        const PredictedWrite& w = prediction.writes[i];
        out += fmt::format("{},{},{},{},{:.9g},{:.9g},{:.9g},{:.0f},{},{},{:.9g}\n", i,
                           workload[i].offset, workload[i].size, workload[i].delay, w.cost,
                           w.baseline, w.pause, w.dirty_after / page_size, to_string(w.state),
                           w.syscalls, w.typical);
    }
    return out;
}

void print_prediction(std::FILE* out, const Prediction& prediction,
                      std::span<const WriteRequest> workload, double page_size,
                      std::size_t max_rows) {
    fmt::print(out, "{:>7} {:>12} {:>10} {:>9} {:>11} {:>11} {:>11} {:>11} {:>16}\n", "write",
               "offset", "size", "delay", "model", "typical", "baseline", "dirty pages", "state");
    const std::size_t n = prediction.writes.size();
    for (std::size_t i = 0; i < n; ++i) {
        if (i == max_rows && n > max_rows + 1) {
            fmt::print(out, "    ... {} more writes (use --csv for all)\n", n - max_rows);
            break;
        }
        const PredictedWrite& w = prediction.writes[i];
        fmt::print(out, "{:>7} {:>12} {:>10} {:>9} {:>11} {:>11} {:>11} {:>11.0f} {:>16}\n", i,
                   workload[i].offset, human_size(static_cast<double>(workload[i].size)),
                   human_duration(workload[i].delay), human_duration(w.cost),
                   human_duration(w.typical), human_duration(w.baseline), w.dirty_after / page_size,
                   to_string(w.state));
    }
    std::size_t states[3] = {0, 0, 0};
    for (const PredictedWrite& w : prediction.writes)
        ++states[static_cast<int>(w.state)];
    fmt::print(out, "\n{} writes ({}), method {}\n", n, human_size([&] {
                   double total = 0;
                   for (const WriteRequest& w : workload)
                       total += static_cast<double>(w.size);
                   return total;
               }()),
               to_string(prediction.method));
    fmt::print(out, "total cost  model (CAWL): {}   baseline (size / bandwidth): {}\n",
               human_duration(prediction.total_cost), human_duration(prediction.total_baseline));
    fmt::print(out, "elapsed incl. delays (model): {}\n", human_duration(prediction.elapsed));
    fmt::print(out, "writes by state: no-flush {}, background-flush {}, throttled {}\n", states[0],
               states[1], states[2]);
}

} // namespace iosig::cachesim
