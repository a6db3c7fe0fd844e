// Alg. 1 (Syscall_IO_Cost): each state's cost, flushing during delays, throttling pauses, rewrites,
// and the inputs the published model aborted on.
#include "iosig/cachesim/syscall_model.hpp"

#include <cmath>
#include <gtest/gtest.h>

namespace iosig::cachesim {
namespace {

constexpr double MiB = 1024.0 * 1024.0;

ModelParameters params() {
    ModelParameters p;
    p.page_size = 4096;
    p.write_syscall_base = 1e-6;          // L_w
    p.page_cache_write_bw = 1e9;          // r_ramdisk
    p.page_cache_write_bw_flushing = 5e8; // r_ramdisk while flushing
    p.writeback_bw = 1e8;                 // the flusher
    p.device_write_bw = 1e8;
    p.dirty_ratelimit = 100 * MiB;
    p.thresholds = {10 * MiB, 20 * MiB, 20 * MiB}; // freerun 15 MiB, setpoint 17.5 MiB
    p.dirty_expire = 30;
    p.writeback_interval = 5;
    return p;
}

TEST(Alg1, NoFlushCostsSyscallPlusCopyAtPageCacheBandwidth) {
    SyscallWriteModel model(params());
    const WriteCost c = model.write(1, 0, 1 << 20, 0);
    EXPECT_EQ(c.state, CacheState::no_flush);
    EXPECT_NEAR(c.cost, 1e-6 + MiB / 1e9, 1e-15);
    EXPECT_DOUBLE_EQ(c.pause, 0);
    EXPECT_DOUBLE_EQ(c.dirty_after, MiB); // nothing flushes below the threshold
    EXPECT_EQ(c.newly_dirtied, 1u << 20);
    EXPECT_NEAR(model.now(), c.cost, 1e-15);
}

TEST(Alg1, BackgroundFlushSlowsTheCopyAndDrainsMeanwhile) {
    SyscallWriteModel model(params(), {12 * MiB, 0});
    const WriteCost c = model.write(1, 0, 65536, 0);
    EXPECT_EQ(c.state, CacheState::background_flush);
    const double cost = 1e-6 + 65536 / 5e8;
    EXPECT_NEAR(c.cost, cost, 1e-15);
    // The flusher wrote 100 MB/s during the whole call.
    EXPECT_NEAR(c.dirty_after, 12 * MiB + 65536 - cost * 1e8, 2);
}

TEST(Alg1, ThrottledWriteIsPausedToTheTaskRatelimit) {
    ModelParameters p = params();
    p.writeback_bw = 1; // keep the flusher out of the arithmetic
    SyscallWriteModel model(p, {16 * MiB, 0});
    const WriteCost c = model.write(1, 0, 65536, 0);
    EXPECT_EQ(c.state, CacheState::throttled);
    // pos_ratio(16 MiB) = 1.216, task rate = 100 MiB/s * 1.216. Since the last pause (t = 0) the
    // task spent L_w + copy; the pause tops that up to the period 65536 / task rate.
    const double period = 65536 / (100 * MiB * 1.216);
    EXPECT_NEAR(c.cost, period, 1e-9);
    EXPECT_NEAR(c.pause, period - 1e-6 - 65536 / 5e8, 1e-9);
}

TEST(Alg1, ThePacedPartOfAPauseLeavesOutTheWaitsAtTheLimit) {
    ModelParameters p = params();
    p.writeback_bw = 1;
    SyscallWriteModel below(p, {16 * MiB, 0});
    const WriteCost c = below.write(1, 0, 65536, 0);
    EXPECT_GT(c.paced, 0);
    EXPECT_DOUBLE_EQ(c.paced, c.pause);
    // At the limit: one 200 ms MAX_PAUSE wait, which is not paced at the task rate.
    SyscallWriteModel at_limit(params(), {21 * MiB, 0});
    const WriteCost d = at_limit.write(1, 0, 65536, 0);
    EXPECT_NEAR(d.pause - d.paced, 0.2, 1e-9);
}

TEST(Alg1, ThinkTimeCountsAgainstThePause) {
    ModelParameters p = params();
    p.writeback_bw = 1;
    SyscallWriteModel model(p, {16 * MiB, 0});
    // A delay longer than the period: the kernel credits it and does not pause.
    const WriteCost c = model.write(1, 0, 65536, 0.01);
    EXPECT_EQ(c.state, CacheState::throttled);
    EXPECT_DOUBLE_EQ(c.pause, 0);
    EXPECT_NEAR(c.cost, 1e-6 + 65536 / 5e8, 1e-12);
}

TEST(Alg1, AtTheLimitTheWriterWaitsForTheFlusher) {
    SyscallWriteModel model(params(), {21 * MiB, 0});
    const WriteCost c = model.write(1, 0, 65536, 0);
    EXPECT_EQ(c.state, CacheState::throttled);
    // pos_ratio is 0 above the limit: one 200 ms pause, in which the flusher (100 MB/s) brings the
    // level down to the background threshold (pos_ratio 2 there); then the ordinary pause for the
    // period at 200 MiB/s, less the copy time since the 200 ms pause ended.
    const double period = 65536 / (200 * MiB);
    EXPECT_NEAR(c.pause, 0.2 + period - 65536 / 5e8, 1e-9);
    EXPECT_NEAR(c.cost, 1e-6 + 0.2 + period, 1e-9);
    // The write's bytes were in the cache during the wait: the flusher stopped at the threshold.
    EXPECT_NEAR(c.dirty_after, 10 * MiB, 2);
}

TEST(Alg1, RewritingDirtyDataAddsNothingAndIsNotThrottled) {
    ModelParameters p = params();
    p.writeback_bw = 1;
    SyscallWriteModel model(p, {16 * MiB, 0});
    model.write(1, 0, 65536, 0);
    const double dirty = model.dirty_bytes();
    const WriteCost again = model.write(1, 0, 65536, 0);
    EXPECT_EQ(again.newly_dirtied, 0u);
    EXPECT_DOUBLE_EQ(again.pause, 0);
    EXPECT_NEAR(again.cost, 1e-6 + 65536 / 5e8, 1e-12);
    EXPECT_NEAR(model.dirty_bytes(), dirty, 1);
}

// Writes 64 KiB, then 64 KiB from its middle: half of the second write rewrites dirty pages.
WriteCost half_rewrite(const ModelParameters& p) {
    SyscallWriteModel model(p);
    model.write(1, 0, 65536, 0);
    return model.write(1, 32768, 65536, 0);
}

TEST(Alg1, RewrittenBytesCopyAtMemorySpeed) {
    ModelParameters p = params();
    p.memory_bw = 1e10;
    const WriteCost c = half_rewrite(p); // 32 KiB at r_ramdisk, 32 KiB at memory speed
    EXPECT_EQ(c.newly_dirtied, 32768u);
    EXPECT_NEAR(c.cost, 1e-6 + 32768 / 1e9 + 32768 / 1e10, 1e-12);
}

// memory_bw can be a rate measured in the CPU cache (the harness's fwrite slope); a measured
// rewrite rate of cached pages takes precedence for the rewritten bytes.
TEST(Alg1, RewrittenBytesCopyAtTheMeasuredRewriteRateWhenKnown) {
    ModelParameters p = params();
    p.memory_bw = 1e11;
    p.page_cache_rewrite_bw = 4e9;
    const WriteCost c = half_rewrite(p);
    EXPECT_EQ(c.newly_dirtied, 32768u);
    EXPECT_NEAR(c.cost, 1e-6 + 32768 / 1e9 + 32768 / 4e9, 1e-12);
}

TEST(RewriteCost, CoolsFromTheHotToTheColdRateWithAge) {
    ModelParameters p = params();
    p.page_cache_rewrite_bw = 4e10;
    p.page_cache_rewrite_bw_cold = 1e10;
    p.rewrite_cooling_time = 0.005;
    EXPECT_DOUBLE_EQ(rewrite_seconds_per_byte(p, 0, 1e9), 1 / 4e10);
    // After one cooling time the difference has fallen to 1/e.
    EXPECT_NEAR(rewrite_seconds_per_byte(p, 0.005, 1e9), 1e-10 - (1e-10 - 2.5e-11) / M_E, 1e-22);
    EXPECT_NEAR(rewrite_seconds_per_byte(p, 10.0, 1e9), 1e-10, 1e-22);
    // Without the cold rate every rewrite costs the hot rate.
    p.page_cache_rewrite_bw_cold = 0;
    EXPECT_DOUBLE_EQ(rewrite_seconds_per_byte(p, 10.0, 1e9), 1 / 4e10);
}

TEST(Alg1, ARewriteAfterComputingCostsMoreThanOneRightAfterTheWrite) {
    ModelParameters p = params();
    p.page_cache_rewrite_bw = 4e10;
    p.page_cache_rewrite_bw_cold = 1e10;
    p.rewrite_cooling_time = 0.005;
    SyscallWriteModel now(p), later(p);
    const WriteCost first = now.write(1, 0, 65536, 0);
    later.write(1, 0, 65536, 0);
    const WriteCost soon = now.write(1, 0, 65536, 0);
    const WriteCost after = later.write(1, 0, 65536, 0.005);
    // The rewritten bytes were written `first.cost` before the copy started (right after L_w),
    // or that plus the 5 ms of computation.
    EXPECT_NEAR(soon.cost, 1e-6 + 65536 * rewrite_seconds_per_byte(p, first.cost, 1e9), 1e-12);
    EXPECT_NEAR(after.cost, 1e-6 + 65536 * rewrite_seconds_per_byte(p, first.cost + 0.005, 1e9),
                1e-12);
    EXPECT_GT(after.cost, 1.5 * soon.cost);
}

TEST(CallCost, CoolsFromL_wToTheColdCostWithAge) {
    ModelParameters p = params();
    p.write_syscall_base = 3e-6;
    p.write_syscall_cold_base = 33e-6;
    p.call_cooling_time = 0.008;
    EXPECT_DOUBLE_EQ(call_base_cost(p, 0), 3e-6);
    EXPECT_NEAR(call_base_cost(p, 0.008), 33e-6 - 30e-6 / M_E, 1e-15);
    EXPECT_NEAR(call_base_cost(p, 10), 33e-6, 1e-15);
    p.call_cooling_time = 0; // not measured: L_w whatever the age
    EXPECT_DOUBLE_EQ(call_base_cost(p, 10), 3e-6);
}

TEST(Alg1, AWriteAfterComputingPaysTheColderCallAndTheFirstIsCold) {
    ModelParameters p = params();
    p.write_syscall_base = 3e-6;
    p.write_syscall_cold_base = 33e-6;
    p.call_cooling_time = 0.008;
    SyscallWriteModel model(p);
    const double copy = 4096 / 1e9;
    const WriteCost first = model.write(1, 0, 4096, 0);
    EXPECT_NEAR(first.cost, 33e-6 + copy, 1e-15);
    const WriteCost next = model.write(1, 4096, 4096, 0);
    EXPECT_NEAR(next.cost, 3e-6 + copy, 1e-15);
    const WriteCost later = model.write(1, 8192, 4096, 0.004);
    EXPECT_NEAR(later.cost, call_base_cost(p, 0.004) + copy, 1e-15);
    EXPECT_GT(later.cost, 2 * next.cost);
}

TEST(Alg1, DelayFlushesDownToTheBackgroundThreshold) {
    SyscallWriteModel model(params(), {12 * MiB, 0});
    model.idle(1.0); // 100 MB/s could write 100 MB, but background write-back stops at 10 MiB
    EXPECT_DOUBLE_EQ(model.dirty_bytes(), 10 * MiB);
    const WriteCost c = model.write(1, 0, 4096, 0);
    EXPECT_EQ(c.state, CacheState::no_flush);
}

TEST(Alg1, StatesFollowTheDirtyLevelDuringALongSequentialWrite) {
    ModelParameters p = params();
    p.writeback_bw = 50e6; // slower than the writer: the level climbs to the throttling range
    SyscallWriteModel model(p);
    bool seen[3] = {false, false, false};
    for (int i = 0; i < 64; ++i) {
        const WriteCost c = model.write(1, static_cast<std::uint64_t>(i) << 20, 1 << 20, 0);
        seen[static_cast<int>(c.state)] = true;
        EXPECT_LE(c.dirty_after, 20 * MiB + (1 << 20));
    }
    EXPECT_TRUE(seen[0] && seen[1] && seen[2]);
    // Throttled, the writer ends up near the flusher's pace: 64 MiB at 50 MB/s plus the head start.
    EXPECT_GT(model.now(), (64 * MiB - 20 * MiB) / 50e6 * 0.8);
}

TEST(Alg1, LongIdleGapAndDrainedCacheDoNotAbort) {
    SyscallWriteModel model(params());
    model.write(1, 0, 1 << 20, 0);
    // An hour of computation: the data expires after 30 s and is written at the 30 s wake-up.
    const WriteCost c = model.write(1, 1 << 20, 1 << 20, 3600);
    EXPECT_EQ(c.state, CacheState::no_flush);
    EXPECT_NEAR(c.dirty_after, MiB, 1);
    // Again with nothing dirty at all, and a rewrite of flushed data (new dirty bytes again).
    model.idle(3600);
    EXPECT_EQ(model.dirty_bytes(), 0);
    const WriteCost rewrite = model.write(1, 0, 1 << 20, 0);
    EXPECT_EQ(rewrite.newly_dirtied, 1u << 20);
}

TEST(Alg1, ExpiredDataPutsTheCacheInBackgroundFlush) {
    SyscallWriteModel model(params());
    model.write(1, 0, 4096, 0);
    model.idle(30.5); // expired at 30 s, but the flusher only looks at 5 s wake-ups: 35 s
    const WriteCost c = model.write(1, 4096, 4096, 0);
    EXPECT_EQ(c.state, CacheState::background_flush);
}

TEST(Alg1, FlusherStartLatencyDelaysWriteBackAndTheSlowdown) {
    ModelParameters p = params();
    p.writeback_start_latency = 0.002;
    SyscallWriteModel model(p, {10 * MiB, 0}); // exactly at the threshold: the flusher is idle
    // 1 MiB at 1 GB/s takes ~1 ms: the flusher, triggered by the first piece above the threshold,
    // only starts 2 ms later, so the whole copy runs at full speed and nothing is written back.
    const WriteCost c = model.write(1, 0, 1 << 20, 0);
    EXPECT_EQ(c.state, CacheState::background_flush);
    EXPECT_NEAR(c.cost, 1e-6 + MiB / 1e9, 1e-12);
    EXPECT_NEAR(c.dirty_after, 11 * MiB, 1);
    // During a delay it wakes up and brings the level back to the threshold.
    model.idle(0.1);
    EXPECT_NEAR(model.dirty_bytes(), 10 * MiB, 1);
    // With no latency (CAWL) the copy above the threshold is slowed from the first piece on.
    ModelParameters q = params();
    SyscallWriteModel eager(q, {10 * MiB, 0});
    EXPECT_GT(eager.write(1, 0, 1 << 20, 0).cost, c.cost);
}

TEST(Alg1, TrajectoryRecordsEveryChange) {
    SyscallWriteModel model(params(), {12 * MiB, 0});
    std::vector<DirtyPoint> trajectory;
    model.record_trajectory(&trajectory);
    model.idle(0.1);
    model.write(1, 0, 1 << 20, 0);
    ASSERT_GE(trajectory.size(), 2u);
    for (std::size_t i = 1; i < trajectory.size(); ++i)
        EXPECT_GE(trajectory[i].time, trajectory[i - 1].time);
    EXPECT_NEAR(trajectory.back().time, model.now(), 1e-12);
    EXPECT_NEAR(trajectory.back().dirty, model.dirty_bytes(), 1e-6);
}

} // namespace
} // namespace iosig::cachesim
