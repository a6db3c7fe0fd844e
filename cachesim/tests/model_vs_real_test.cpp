// The model against the real kernel on this machine, in two short scenarios: one direct, one
// buffered.
//
// The machine is shared with other builds and IO-heavy tests, and its synchronous writes come in 4
// ms quanta, so a calibration made a minute earlier says little about now. Here each measurement
// round runs the calibration workloads and the scenario back to back (or shuffled into one run),
// the parameters are fitted from the calibration writes only, and the model's cost for the scenario
// must be within 20 % of the measured one (two more attempts are allowed: see `attempts`). The
// strict per-write numbers (medians, 8 %) are the harness's: docs/performance.md, section cachesim.
#include "calibrate.hpp"
#include "iosig/cachesim/dirty_limits.hpp"
#include "iosig/cachesim/estimator.hpp"
#include "real_run.hpp"
#include "regression.hpp"
#include "staircase.hpp"

#include <algorithm>
#include <filesystem>
#include <gtest/gtest.h>
#include <random>
#include <tuple>
#include <unistd.h>

namespace iosig::cachesim {
namespace {

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB;
// More attempts when the first misses: a burst of other users' IO can take a whole attempt.
constexpr int attempts = 3;

std::vector<WriteRequest> shuffled_appends(std::vector<std::uint64_t> sizes, int copies,
                                           std::mt19937_64& rng) {
    std::vector<std::uint64_t> all;
    for (int c = 0; c < copies; ++c)
        all.insert(all.end(), sizes.begin(), sizes.end());
    std::shuffle(all.begin(), all.end(), rng);
    std::vector<WriteRequest> out;
    std::uint64_t offset = 0;
    for (std::uint64_t s : all) {
        out.push_back({offset, s, 0, 0});
        offset += s;
    }
    return out;
}

std::vector<std::string> describe(const std::vector<validate::SizeMedian>& medians) {
    std::vector<std::string> out;
    for (const validate::SizeMedian& m : medians)
        out.push_back(std::to_string(m.size / KiB) + " KiB: " + std::to_string(m.median * 1e3) +
                      " ms");
    return out;
}

struct Samples {
    std::vector<double> size, cost;
    void add(const std::vector<WriteRequest>& w, const validate::RunTimings& t,
             std::size_t from = 0) {
        for (std::size_t i = from; i < w.size(); ++i) {
            size.push_back(static_cast<double>(w[i].size));
            cost.push_back(t.cost(i));
        }
    }
};

class ModelVsReal : public ::testing::Test {
protected:
    void SetUp() override {
        if (::geteuid() != 0)
            GTEST_SKIP() << "needs root (O_DIRECT on the root disk, /proc/sys/vm)";
        recover_saved_dirty_settings();
        original_ = *read_vm_dirty_settings();
        dir_ = std::filesystem::path("/var/tmp") /
               ("iosig-cachesim-test-" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override {
        if (!dir_.empty()) std::filesystem::remove_all(dir_);
        if (::geteuid() == 0) EXPECT_EQ(*read_vm_dirty_settings(), original_);
    }
    validate::RunTimings run(Method method, const std::vector<WriteRequest>& w) {
        // Other users' dirty data slows buffered runs; O_DIRECT bypasses the cache, and under other
        // users' steady writes waiting long for a clean cache would only stretch the test.
        validate::wait_for_clean(4 * MiB, method == Method::direct ? 1 : 10);
        validate::RunTimings t = validate::run_workload(dir_ / "scenario.dat", method, w);
        EXPECT_TRUE(t.ok()) << t.error;
        return t;
    }

    std::filesystem::path dir_;
    VmDirtySettings original_;
};

TEST_F(ModelVsReal, DirectSyncWritesWithin20Percent) {
    // Synchronous writes here complete on 4 ms ticks, more of them the busier the machine, and the
    // virtual disk is not linear over three decades of sizes (a line through 16 KiB-16 MiB missed
    // 256 KiB by 35 % under load). So the 256 KiB scenario writes are shuffled into the same runs
    // as calibration sizes around them (64 KiB-1 MiB: same moment, same load, the operating range),
    // and Eq. 2 fitted on the others' per-size medians - as a staircase when the medians show
    // ticks - must predict the scenario's median.
    std::mt19937_64 rng(1);
    for (int attempt = 1; attempt <= attempts; ++attempt) {
        Samples calibration;
        std::vector<double> scenario_costs;
        for (int round = 0; round <= 4; ++round) {
            const auto mix =
                shuffled_appends({64 * KiB, 128 * KiB, 256 * KiB, 512 * KiB, 1 * MiB}, 10, rng);
            const auto t = run(Method::direct, mix);
            if (round == 0 || !t.ok()) continue; // warm-up round
            for (std::size_t i = 0; i < mix.size(); ++i) {
                if (mix[i].size == 256 * KiB) {
                    scenario_costs.push_back(t.cost(i));
                } else {
                    calibration.size.push_back(static_cast<double>(mix[i].size));
                    calibration.cost.push_back(t.cost(i));
                }
            }
        }
        ASSERT_FALSE(scenario_costs.empty());
        const auto medians = validate::per_size_medians(calibration.size, calibration.cost);
        const validate::LinearFit line =
            validate::fit_line_relative(calibration.size, calibration.cost);
        ModelParameters p;
        p.block_size = 4096;
        p.sync_completion_quantum = validate::detect_quantum(medians);
        double l = line.intercept, slope = line.slope;
        if (p.sync_completion_quantum > 0)
            std::tie(l, slope) =
                validate::fit_quantized(medians, p.sync_completion_quantum, line.slope,
                                        [](double l, double b, double s) { return l + s * b; });
        p.direct_write_base = std::max(0.0, l);
        p.device_write_bw = slope > 0 ? 1 / slope : 1e12;
        const auto scenario = sequential_workload(16 * 256 * KiB, 256 * KiB, 0);
        const double model = predict(p, Method::direct, scenario).writes[1].cost;
        const double real = validate::median(scenario_costs);
        RecordProperty("model_s", std::to_string(model));
        RecordProperty("measured_s", std::to_string(real));
        const bool within = std::fabs(model - real) <= 0.20 * real;
        if (!within && attempt < attempts) continue; // another user's IO burst took this attempt
        EXPECT_TRUE(within) << "model " << model << " s, measured " << real << " s; L_sync " << l
                            << " s, B_dev " << p.device_write_bw << " B/s, tick "
                            << p.sync_completion_quantum << " s; per-size medians "
                            << testing::PrintToString(describe(medians));
        // The naive model with the same bandwidth knows nothing of the synchronous write's fixed
        // cost.
        EXPECT_LT(std::fabs(model - real), std::fabs(baseline_cost(p, 256 * KiB) - real));
        break;
    }
}

TEST_F(ModelVsReal, BufferedWritesThroughTheBackgroundThresholdWithin20Percent) {
    std::string error;
    auto limits = DirtyLimitOverride::apply(64 * MiB, 32 * MiB, &error, 120);
    ASSERT_TRUE(limits) << error;
    std::mt19937_64 rng(2);
    // 48 MiB in 1 MiB writes: no-flush up to the 32 MiB background threshold, then flushing.
    const auto scenario = sequential_workload(48 * MiB, MiB, 0);
    for (int attempt = 1; attempt <= attempts; ++attempt) {
        Samples no_flush, flushing;
        std::vector<std::vector<double>> measured(scenario.size());
        int rounds = 0;
        for (int round = 0; round <= 5; ++round) {
            const auto small =
                shuffled_appends({64 * KiB, 256 * KiB, 1 * MiB, 2 * MiB}, 3, rng);        // 10 MiB
            const auto stream = shuffled_appends({256 * KiB, 1 * MiB, 2 * MiB}, 24, rng); // 78 MiB
            const auto a = run(Method::buffered, small);
            const auto b = run(Method::buffered, stream);
            const auto s = run(Method::buffered, scenario);
            if (round == 0 || !a.ok() || !b.ok() || !s.ok()) continue;
            no_flush.add(small, a);
            // Writes that start well past the background threshold are made while the flusher runs.
            std::size_t first = 0;
            while (first < stream.size() && stream[first].offset < 40 * MiB)
                ++first;
            flushing.add(stream, b, first);
            for (std::size_t i = 0; i < scenario.size(); ++i)
                measured[i].push_back(s.cost(i));
            ++rounds;
        }
        ASSERT_GT(rounds, 0);
        // Buffered writes are fast with rare long stalls (other users' journal commits, CPU):
        // medians per size and per write, which is also how the harness compares.
        const validate::LinearFit base = validate::fit_line_relative(no_flush.size, no_flush.cost);
        const validate::LinearFit busy = validate::fit_line_relative(flushing.size, flushing.cost);
        ASSERT_GT(base.slope, 0);
        ASSERT_GT(busy.slope, 0);
        ModelParameters p;
        p.write_syscall_base = std::max(0.0, base.intercept);
        p.page_cache_write_bw = 1 / base.slope;
        p.page_cache_write_bw_flushing = 1 / busy.slope;
        p.device_write_bw = p.writeback_bw = 1e9; // write-back keeps up below freerun here
        p.thresholds = {32.0 * MiB, 64.0 * MiB, 64.0 * MiB};
        const Prediction prediction = predict(p, Method::buffered, scenario);
        double real = 0;
        for (const std::vector<double>& m : measured)
            real += validate::median(m);
        bool background = false;
        for (const PredictedWrite& w : prediction.writes)
            background |= w.state == CacheState::background_flush;
        EXPECT_TRUE(background) << "the model never crossed the background threshold";
        RecordProperty("model_s", std::to_string(prediction.total_cost));
        RecordProperty("measured_s", std::to_string(real));
        const bool within = std::fabs(prediction.total_cost - real) <= 0.20 * real;
        if (!within && attempt < attempts) continue; // another user's IO burst took this attempt
        EXPECT_TRUE(within) << "model " << prediction.total_cost << " s, measured " << real
                            << " s; L_w " << base.intercept << " s, r " << 1 / base.slope
                            << " B/s, r_flushing " << 1 / busy.slope << " B/s";
        break;
    }
    ASSERT_TRUE(limits->restore(&error)) << error;
}

} // namespace
} // namespace iosig::cachesim
