// The estimator facade, the baseline and the workload CSV, including its error messages.
#include "iosig/cachesim/estimator.hpp"
#include "iosig/cachesim/sync_cost.hpp"

#include <cmath>
#include <gtest/gtest.h>

namespace iosig::cachesim {
namespace {

ModelParameters params() {
    ModelParameters p;
    p.block_size = 4096;
    p.direct_write_base = 1e-4;
    p.sync_write_syscall_base = 2e-4;
    p.sync_copy_per_byte = 1e-9;
    p.device_write_bw = 1e8;
    p.device_read_bw = 1e8;
    p.write_syscall_base = 1e-6;
    p.page_cache_write_bw = 1e9;
    p.page_cache_write_bw_flushing = 5e8;
    p.writeback_bw = 1e8;
    p.memory_bw = 1e10;
    p.thresholds = {64.0 * (1 << 20), 128.0 * (1 << 20), 128.0 * (1 << 20)};
    return p;
}

TEST(Baseline, IsSizeOverDeviceBandwidth) {
    EXPECT_DOUBLE_EQ(baseline_cost(params(), 1e6), 0.01);
}

TEST(Predict, DirectUsesEq2PerWriteAndSumsTotals) {
    const ModelParameters p = params();
    const std::vector<WriteRequest> w = {
        {0, 4096, 0, 2}, {4096, 8192, 0.5, 3}, {1 << 20, 4096, 0, 4}};
    const Prediction r = predict(p, Method::direct, w);
    ASSERT_EQ(r.writes.size(), 3u);
    EXPECT_DOUBLE_EQ(r.writes[0].cost, 1e-4 + 4096 / 1e8);
    EXPECT_DOUBLE_EQ(r.writes[2].cost, 1e-4 + 4096 / 1e8 + p.seek_latency);
    EXPECT_DOUBLE_EQ(r.total_cost, r.writes[0].cost + r.writes[1].cost + r.writes[2].cost);
    EXPECT_DOUBLE_EQ(r.total_baseline, (4096 + 8192 + 4096) / 1e8);
    EXPECT_NEAR(r.elapsed, r.total_cost + 0.5, 1e-12);
    EXPECT_DOUBLE_EQ(r.writes[1].start, r.writes[0].cost + 0.5);
}

TEST(Predict, SyncUsesEq3) {
    const ModelParameters p = params();
    const std::vector<WriteRequest> w = {{0, 6000, 0, 2}};
    EXPECT_DOUBLE_EQ(predict(p, Method::sync, w).writes[0].cost,
                     sync_write_cost(p, 6000, false, false));
}

TEST(Predict, BufferedAndStdioReportStatesAndDirtyBytes) {
    const ModelParameters p = params();
    const std::vector<WriteRequest> w = sequential_workload(8 << 20, 1 << 20, 0);
    EstimatorOptions options;
    options.record_trajectory = true;
    const Prediction buffered = predict(p, Method::buffered, w, options);
    EXPECT_DOUBLE_EQ(buffered.writes.back().dirty_after, 8.0 * (1 << 20));
    EXPECT_EQ(buffered.writes.back().state, CacheState::no_flush);
    EXPECT_FALSE(buffered.trajectory.empty());
    const Prediction stdio = predict(p, Method::stdio, w, options);
    // 1 MiB fwrites bypass a 4 KiB buffer. The fresh stream sends all of the first one straight to
    // write(); after that glibc first tops up the (empty but now allocated) buffer with 4 KiB and
    // writes it, then the rest: two write() calls each, nothing left buffered.
    EXPECT_EQ(stdio.writes.front().syscalls, 1);
    for (std::size_t i = 1; i < stdio.writes.size(); ++i)
        EXPECT_EQ(stdio.writes[i].syscalls, 2);
    EXPECT_DOUBLE_EQ(stdio.writes.back().dirty_after, 8.0 * (1 << 20));
}

TEST(Predict, ATypicalRunSleepsTheThrottlePauseInWholeSleeps) {
    ModelParameters p = params();
    p.dirty_ratelimit = 100.0 * (1 << 20);
    const std::vector<WriteRequest> w = sequential_workload(256 << 20, 8 << 20, 0);
    const Prediction continuous = predict(p, Method::buffered, w);
    p.throttle_sleep = 0.012;
    const Prediction slept = predict(p, Method::buffered, w);
    // The mean costs do not depend on how the pauses are slept.
    EXPECT_DOUBLE_EQ(slept.total_cost, continuous.total_cost);
    int throttled = 0;
    for (std::size_t i = 0; i < w.size(); ++i) {
        const PredictedWrite& c = continuous.writes[i];
        const PredictedWrite& s = slept.writes[i];
        EXPECT_DOUBLE_EQ(c.typical, c.cost) << "write " << i;
        if (s.pause <= 0) {
            EXPECT_DOUBLE_EQ(s.typical, s.cost) << "write " << i;
            continue;
        }
        ++throttled;
        // The pause (no MAX_PAUSE waits here) becomes a whole number of 12 ms sleeps, the nearest.
        const double unpaused = s.cost - s.pause;
        const double sleeps = (s.typical - unpaused) / 0.012;
        EXPECT_NEAR(sleeps, std::round(s.pause / 0.012), 1e-6) << "write " << i;
    }
    EXPECT_GT(throttled, 10);
}

TEST(Predict, StartsFromTheKernelsDirtyState) {
    const ModelParameters p = params();
    KernelDirtyState live;
    GlobalDirtySample g;
    g.dirty = 70.0 * (1 << 20); // above the background threshold (64 MiB), below freerun (96 MiB)
    g.writeback = 4.0 * (1 << 20);
    live.global = g;
    EstimatorOptions options;
    options.initial = initial_state_from(live);
    EXPECT_DOUBLE_EQ(options.initial.foreign_dirty, 74.0 * (1 << 20));
    const std::vector<WriteRequest> w = {{0, 1 << 20, 0, 2}};
    EXPECT_EQ(predict(p, Method::buffered, w, options).writes[0].state,
              CacheState::background_flush);
    EXPECT_EQ(predict(p, Method::buffered, w).writes[0].state, CacheState::no_flush);
}

TEST(ValidateForMethod, DirectNeedsBlockAlignment) {
    const ModelParameters p = params();
    const std::vector<WriteRequest> w = {{0, 4096, 0, 2}, {4096, 6000, 0, 3}};
    EXPECT_EQ(validate_for_method(p, Method::direct, w),
              "line 3: direct IO needs offsets and sizes that are multiples of the block size "
              "(4096 B); got "
              "offset 4096 size 6000");
    EXPECT_EQ(validate_for_method(p, Method::buffered, w), "");
}

TEST(Workload, ParsesUnitsCommentsAndBlankLines) {
    const WorkloadResult r = parse_workload(
        "# a comment\noffset,size,delay_s\n0,4K,0\n\n4096, 1M , 5ms\n8M,100,0.25\n", "w.csv");
    ASSERT_TRUE(r.ok()) << r.error;
    ASSERT_EQ(r.writes.size(), 3u);
    EXPECT_EQ(r.writes[0].size, 4096u);
    EXPECT_EQ(r.writes[1].offset, 4096u);
    EXPECT_EQ(r.writes[1].size, 1u << 20);
    EXPECT_DOUBLE_EQ(r.writes[1].delay, 0.005);
    EXPECT_EQ(r.writes[1].line, 5);
    EXPECT_EQ(r.writes[2].offset, 8u << 20);
    EXPECT_DOUBLE_EQ(r.writes[2].delay, 0.25);
}

TEST(Workload, ErrorsNameFileLineAndProblem) {
    EXPECT_EQ(parse_workload("", "w.csv").error,
              "w.csv:1: empty workload: expected the header `offset,size,delay_s`");
    EXPECT_EQ(parse_workload("size,offset,delay\n", "w.csv").error,
              "w.csv:1: expected the header `offset,size,delay_s`, found `size,offset,delay`");
    EXPECT_EQ(parse_workload("offset,size,delay_s\n0,4K\n", "w.csv").error,
              "w.csv:2: expected 3 fields (offset,size,delay_s), found 2");
    EXPECT_EQ(parse_workload("offset,size,delay_s\n0,0,0\n", "w.csv").error,
              "w.csv:2: size must be positive");
    EXPECT_EQ(parse_workload("offset,size,delay_s\n0,4K,-1\n", "w.csv").error.substr(0, 9),
              "w.csv:2: ");
    EXPECT_NE(
        parse_workload("offset,size,delay_s\n0,4Q,0\n", "w.csv").error.find("w.csv:2: size `4Q`"),
        std::string::npos);
    EXPECT_EQ(load_workload("/nonexistent/w.csv").error,
              "/nonexistent/w.csv: cannot open the workload file");
}

TEST(Workload, GeneratorsAndCsvRoundTrip) {
    const auto seq = sequential_workload(10000, 4096, 0.5);
    ASSERT_EQ(seq.size(), 3u);
    EXPECT_EQ(seq[2].size, 10000u - 8192u);
    // Case A of CAWL Fig. 7: each 1 MiB chunk rewrites the last quarter of the previous one.
    const auto rewrite = rewrite_workload(3 << 20, 1 << 20, 0.25, 0);
    ASSERT_GE(rewrite.size(), 2u);
    EXPECT_EQ(rewrite[1].offset, 3u << 18);
    const WorkloadResult back = parse_workload(to_csv(seq));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back.writes[2].offset, 8192u);
    EXPECT_DOUBLE_EQ(back.writes[2].delay, 0.5);
}

} // namespace
} // namespace iosig::cachesim
