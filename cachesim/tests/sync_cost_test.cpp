// Eq. 2 (direct + sync) and Eq. 3-4 (sync through the page cache), against hand-computed values.
#include "iosig/cachesim/sync_cost.hpp"

#include <gtest/gtest.h>

namespace iosig::cachesim {
namespace {

ModelParameters device() {
    ModelParameters p;
    p.block_size = 4096;
    p.direct_write_base = 100e-6;      // L_sync of Eq. 2
    p.sync_write_syscall_base = 50e-6; // L_sync of Eq. 3
    p.device_write_bw = 100e6;         // B_dev
    p.device_read_bw = 200e6;          // B_read
    p.seek_latency = 5e-3;             // L_seek
    p.sync_copy_per_byte = 1e-9;       // 1 GB/s copy into the page cache
    return p;
}

TEST(Eq2DirectSync, OneWriteIsSyscallPlusTransfer) {
    const ModelParameters p = device();
    // 100 us + 1 MB / 100 MB/s = 100 us + 10 ms
    EXPECT_DOUBLE_EQ(direct_sync_write_cost(p, 1e6, false), 100e-6 + 0.01);
    // a random write adds the seek
    EXPECT_DOUBLE_EQ(direct_sync_write_cost(p, 1e6, true), 100e-6 + 0.01 + 5e-3);
}

TEST(Eq2DirectSync, TotalIsNSyscallsPlusSizeOverBandwidthPlusSeeks) {
    const ModelParameters p = device();
    const double sizes[] = {4096, 8192, 1e6};
    const bool random[] = {false, true, true};
    // 3 * 100 us + (4096 + 8192 + 1e6) / 100e6 + 2 * 5 ms
    const double expected = 3 * 100e-6 + (4096 + 8192 + 1e6) / 100e6 + 2 * 5e-3;
    EXPECT_NEAR(direct_sync_total_cost(p, sizes, random), expected, 1e-15);
}

TEST(Eq3SyncThroughCache, BlockMultipleHasNoPenalty) {
    const ModelParameters p = device();
    // 8192 B = 2 blocks: 50 us + 8192 * 1 ns + 8192 / 100e6
    EXPECT_NEAR(sync_write_cost(p, 8192, false, true), 50e-6 + 8192e-9 + 8192 / 100e6, 1e-15);
}

TEST(Eq3SyncThroughCache, RemainderCostsABlockReadAndAWholeBlockWrite) {
    const ModelParameters p = device();
    // 6000 B: s_b = 4096, s_r = 1904 -> + 4096 / B_read + 4096 / B_dev
    const double expected = 50e-6 + 6000e-9 + 4096 / 100e6 + 4096 / 200e6 + 4096 / 100e6;
    EXPECT_NEAR(sync_write_cost(p, 6000, false, true), expected, 1e-15);
    // Without the read (the block is cached or beyond the old end of file) only the write remains.
    EXPECT_NEAR(sync_write_cost(p, 6000, false, false), expected - 4096 / 200e6, 1e-15);
    // Smaller than a block: s_b = 0.
    EXPECT_NEAR(sync_write_cost(p, 100, false, true), 50e-6 + 100e-9 + 4096 / 200e6 + 4096 / 100e6,
                1e-15);
}

TEST(Eq2DirectSync, AMeasuredCurveReplacesTheLine) {
    ModelParameters p = device();
    p.direct_write_curve = CostCurve({{4096, 120e-6}, {65536, 180e-6}});
    EXPECT_DOUBLE_EQ(direct_sync_write_cost(p, 4096, false), 120e-6);
    EXPECT_DOUBLE_EQ(direct_sync_write_cost(p, 34816, false), 150e-6);      // halfway
    EXPECT_DOUBLE_EQ(direct_sync_write_cost(p, 4096, true), 120e-6 + 5e-3); // the seek stays
}

TEST(Eq3SyncThroughCache, AMeasuredCurveIsReadAtTheWholeBlocksWritten) {
    ModelParameters p = device();
    p.sync_write_curve = CostCurve({{4096, 130e-6}, {8192, 150e-6}, {65536, 200e-6}});
    EXPECT_DOUBLE_EQ(sync_write_cost(p, 8192, false, false), 150e-6);
    // 6000 B reach into a second block: the device writes 8 KiB; the read of the partial block is
    // still Eq. 3's.
    EXPECT_DOUBLE_EQ(sync_write_cost(p, 6000, false, false), 150e-6);
    EXPECT_NEAR(sync_write_cost(p, 6000, true, true), 150e-6 + 4096 / 200e6 + 5e-3, 1e-15);
}

TEST(Eq4SyncTotal, IsTheSumOfEq3OverTheChunks) {
    const ModelParameters p = device();
    const double sizes[] = {6000, 8192};
    const bool random[] = {false, true};
    const double expected =
        sync_write_cost(p, 6000, false, true) + sync_write_cost(p, 8192, true, true);
    EXPECT_DOUBLE_EQ(sync_total_cost(p, sizes, random), expected);
    EXPECT_NEAR(expected, 2 * 50e-6 + 14192e-9 + (4096 + 4096 + 8192) / 100e6 + 4096 / 200e6 + 5e-3,
                1e-15);
}

TEST(SyncWriteSequence, DetectsSeeksFromTheEndOfThePreviousWrite) {
    const ModelParameters p = device();
    SyncWriteSequence direct(p, true);
    EXPECT_DOUBLE_EQ(direct.write(0, 4096),
                     direct_sync_write_cost(p, 4096, false)); // first: sequential
    EXPECT_DOUBLE_EQ(direct.write(4096, 4096), direct_sync_write_cost(p, 4096, false)); // continues
    EXPECT_DOUBLE_EQ(direct.write(65536, 4096),
                     direct_sync_write_cost(p, 4096, true));                        // jumps ahead
    EXPECT_DOUBLE_EQ(direct.write(0, 4096), direct_sync_write_cost(p, 4096, true)); // jumps back
}

TEST(SyncWriteSequence, ReadsAPartialBlockOnlyInsideTheOldFileExtent) {
    const ModelParameters p = device();
    SyncWriteSequence fresh(p, false, 0);
    // A new file never needs the read: appends of 6000 B pay only the whole-block write.
    EXPECT_DOUBLE_EQ(fresh.write(0, 6000), sync_write_cost(p, 6000, false, false));
    EXPECT_DOUBLE_EQ(fresh.write(6000, 6000), sync_write_cost(p, 6000, false, false));

    SyncWriteSequence existing(p, false, 1 << 20);
    // The file had 1 MiB the page cache does not hold: the partial block is read.
    EXPECT_DOUBLE_EQ(existing.write(0, 6000), sync_write_cost(p, 6000, false, true));
    // Rewriting what this sequence wrote finds it cached.
    EXPECT_DOUBLE_EQ(existing.write(0, 6000), sync_write_cost(p, 6000, true, false));
    // Beyond the old end of file nothing is read.
    EXPECT_DOUBLE_EQ(existing.write(2 << 20, 6000), sync_write_cost(p, 6000, true, false));
}

} // namespace
} // namespace iosig::cachesim
