// Alg. 2 (Lib_IO_Cost): the libc buffer, flush on seek, large writes bypassing the buffer.
#include "iosig/cachesim/stdio_model.hpp"

#include <gtest/gtest.h>

namespace iosig::cachesim {
namespace {

ModelParameters params() {
    ModelParameters p;
    p.page_size = 4096;
    p.memory_bw = 1e9; // 1 ns per byte copied into the buffer
    p.stdio_buffer_size = 4096;
    p.write_syscall_base = 1e-6;
    p.page_cache_write_bw = 1e9;
    p.page_cache_write_bw_flushing = 1e9;
    p.writeback_bw = 1e8;
    p.device_write_bw = 1e8;
    p.thresholds = {1e12, 2e12, 2e12}; // never flushing: costs stay hand-computable
    return p;
}

// write() of n bytes in the no-flush state: L_w + n / r_ramdisk
double syscall(double n) {
    return 1e-6 + n / 1e9;
}

TEST(Alg2, SmallWritesOnlyCopyIntoTheBuffer) {
    StdioWriteModel model(params());
    StdioCost c = model.write(1, 0, 1000, 0); // a fresh stream buffers what is below one buffer
    EXPECT_EQ(c.syscalls, 0);
    EXPECT_NEAR(c.cost, 1000e-9, 1e-15);
    c = model.write(1, 1000, 3096, 0); // fills the buffer exactly: still no write()
    EXPECT_EQ(c.syscalls, 0);
    EXPECT_NEAR(c.cost, 3096e-9, 1e-15);
    EXPECT_EQ(model.buffered_bytes(), 4096u);
    EXPECT_EQ(model.kernel().dirty_bytes(), 0);
}

TEST(Alg2, AFullBufferIsWrittenByTheNextCall) {
    StdioWriteModel model(params());
    model.write(1, 0, 4096, 0); // fresh stream: 4096 = one whole buffer goes straight to write()
    EXPECT_EQ(model.buffered_bytes(), 0u);
    model.write(1, 4096, 1000, 0);
    model.write(1, 5096, 3096, 0);
    const StdioCost c = model.write(1, 8192, 10, 0);
    EXPECT_EQ(c.syscalls, 1);
    EXPECT_NEAR(c.cost, syscall(4096) + 10e-9, 1e-15);
    EXPECT_EQ(model.buffered_bytes(), 10u);
}

TEST(Alg2, LargeWritesBypassTheBufferInWholeBuffers) {
    StdioWriteModel model(params());
    // Fresh stream, 10000 B: 8192 B straight to write(), the 1808 B remainder buffered.
    const StdioCost c = model.write(1, 0, 10000, 0);
    EXPECT_EQ(c.syscalls, 1);
    EXPECT_NEAR(c.cost, syscall(8192) + 1808e-9, 1e-15);
    EXPECT_EQ(model.buffered_bytes(), 1808u);
    // Next: top up 2288 B, write the full buffer, bypass 4096 B, buffer 3616 B.
    const StdioCost d = model.write(1, 10000, 10000, 0);
    EXPECT_EQ(d.syscalls, 2);
    EXPECT_NEAR(d.cost, 2288e-9 + syscall(4096) + syscall(4096) + 3616e-9, 1e-15);
    EXPECT_EQ(model.buffered_bytes(), 3616u);
    EXPECT_NEAR(model.kernel().dirty_bytes(), 8192 + 8192, 1e-9);
}

TEST(Alg2, SeekWritesTheBufferOut) {
    StdioWriteModel model(params());
    model.write(1, 0, 10000, 0); // 1808 B buffered at offset 8192
    const StdioCost c = model.write(1, 0, 100, 0);
    EXPECT_EQ(c.syscalls, 1);
    // fseek flushes 1808 B, the repositioned stream then buffers the 100 B.
    EXPECT_NEAR(c.cost, syscall(1808) + 100e-9, 1e-15);
    EXPECT_EQ(model.buffered_bytes(), 100u);
    EXPECT_NEAR(model.kernel().dirty_bytes(), 10000, 1e-9);
}

TEST(Alg2, FflushWritesWhatIsBuffered) {
    StdioWriteModel model(params());
    model.write(1, 0, 500, 0);
    EXPECT_NEAR(model.flush(), syscall(500), 1e-15);
    EXPECT_EQ(model.buffered_bytes(), 0u);
    EXPECT_DOUBLE_EQ(model.flush(), 0); // nothing left
}

TEST(Alg2, DelaysReachTheKernelModelAtTheNextWrite) {
    StdioWriteModel model(params());
    model.write(1, 0, 1000, 0.5);
    model.write(1, 1000, 1000, 0.25);
    EXPECT_DOUBLE_EQ(model.kernel().now(), 0); // no write() yet: the kernel model has not moved
    model.write(1, 2000, 4000, 0.125);         // tops up 2096 B, writes 4096 B
    EXPECT_NEAR(model.kernel().now(), model.now() - 1904e-9, 1e-12);  // then 1904 B are copied
    EXPECT_NEAR(model.now(), 0.875 + 6000e-9 + syscall(4096), 1e-12); // 6000 B copied in all
}

TEST(Alg2, TinyBuffersAreNotKeptAligned) {
    ModelParameters p = params();
    p.stdio_buffer_size = 64; // below 128 B glibc writes the whole rest at once
    StdioWriteModel model(p);
    const StdioCost c = model.write(1, 0, 1000, 0);
    EXPECT_EQ(c.syscalls, 1);
    EXPECT_NEAR(c.cost, syscall(1000), 1e-15);
    EXPECT_EQ(model.buffered_bytes(), 0u);
}

} // namespace
} // namespace iosig::cachesim
