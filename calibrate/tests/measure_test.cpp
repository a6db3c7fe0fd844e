// Real IO on this machine's own file systems (ext4 under /var/tmp, tmpfs under /dev/shm): every
// measurement returns plausible, internally consistent numbers, honours its time box, and leaves no
// scratch file behind. The device lab tests (lab_calibrate_test.py) check the numbers themselves.
#include "measure.hpp"
#include "system_params.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

namespace iosig::calibrate {
namespace {
namespace fs = std::filesystem;

std::size_t scratch_files_in(const fs::path& dir) {
    std::size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().filename().string().starts_with(".iosig-calibrate-")) ++n;
    return n;
}

class MeasureOn : public ::testing::TestWithParam<const char*> {
protected:
    void SetUp() override {
        dir_ = fs::path(GetParam()) / ("iosig-measure-test-" + std::to_string(getpid()));
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    PhaseLimits box(double seconds, std::uint64_t min_ios = 3) {
        PhaseLimits l;
        l.seconds = seconds;
        l.min_ios = min_ios;
        return l;
    }
    fs::path dir_;
};

TEST_P(MeasureOn, EveryPhaseMeasuresAndCleansUp) {
    const std::string fs_type = std::string(GetParam()) == "/dev/shm" ? "tmpfs" : "ext4";
    {
        MountIo io(dir_, fs_type, 0, -1);
        EXPECT_TRUE(io.method().direct) << "O_DIRECT is supported on " << GetParam();
        EXPECT_GT(io.method().alignment, 0u);
        EXPECT_EQ(scratch_files_in(dir_), 1u);

        const double t0 = now_seconds();
        const Throughput w = io.sequential_write(1 << 20, 16 << 20, box(0.3, 4));
        EXPECT_LT(now_seconds() - t0, 3.0);
        EXPECT_GE(w.ios, 4u);
        EXPECT_EQ(w.bytes, w.ios * (1u << 20));
        EXPECT_GT(w.bytes_per_second, 1e6);
        EXPECT_EQ(io.file_size(), std::min<std::uint64_t>(w.bytes, 16 << 20));

        const Throughput r = io.sequential_read(1 << 20, box(0.2, 4));
        EXPECT_GT(r.bytes_per_second, 1e6);

        const Latencies lat = io.latency(false, true, 4096, box(0.2, 20));
        EXPECT_GE(lat.samples.size(), 20u);
        EXPECT_LE(lat.p50, lat.p99);
        EXPECT_LE(lat.p99, lat.max);
        EXPECT_GT(lat.p50, 0);

        const Iops iops = io.random_iops(true, 4096, 32, box(0.2, 64));
        EXPECT_GE(iops.ios, 64u);
        EXPECT_GT(iops.iops, 100);
        EXPECT_EQ(iops.block, 4096u);

        // Both directions at once, half of the queue each; both complete IOs.
        const MixedIops mixed = io.mixed_iops(4096, 32, box(0.2, 64));
        if (!mixed.engine.empty()) {
            EXPECT_GE(mixed.ios, 64u);
            EXPECT_GT(mixed.read_iops, 50);
            EXPECT_GT(mixed.write_iops, 50);
            EXPECT_GT(read_write_utilisation(mixed, iops, iops), 0);
        }

        const SweepPoint p = io.sweep_point(64 << 10, box(0.1));
        EXPECT_GE(p.ios, 3u);
        EXPECT_GT(p.bytes_per_second(), 1e5);
    }
    EXPECT_EQ(scratch_files_in(dir_), 0u) << "scratch file left in " << dir_;
    EXPECT_EQ(registered_scratch_files(), 0u);
}

INSTANTIATE_TEST_SUITE_P(ThisMachine, MeasureOn, ::testing::Values("/var/tmp", "/dev/shm"));

std::string describe(const CostRegression& r) {
    std::string out =
        "base " + std::to_string(r.base) + " s, per byte " + std::to_string(r.per_byte) + " s;";
    for (const auto& [size, seconds] : r.points)
        out += " " + std::to_string(size) + ":" + std::to_string(seconds * 1e3) + "ms";
    return out;
}

TEST(SystemParameters, RegressionsAndSettingsOnThisMachine) {
    const fs::path dir = fs::path("/var/tmp") / ("iosig-system-test-" + std::to_string(getpid()));
    fs::create_directories(dir);
    SystemOptions o;
    o.page_cache_directory = dir;
    o.seconds = 2;
    const SystemMeasurements s = measure_system(o);
    fs::remove_all(dir);
    EXPECT_TRUE(s.memcpy_cost.ok);
    EXPECT_GT(s.memcpy_cost.per_byte, 0);
    EXPECT_GT(1 / s.memcpy_cost.per_byte, 2e8); // any machine copies faster than 200 MB/s
    EXPECT_GT(s.memcpy_cost.r_squared, 0.5);    // loose: other processes share these cores
    EXPECT_TRUE(s.buffered_small.ok);
    EXPECT_GT(s.buffered_small.base, 0); // a write() costs something even for 1 byte
    EXPECT_LT(s.buffered_small.base, 1e-3);
    EXPECT_TRUE(s.buffered_large.ok);
    EXPECT_GT(s.buffered_large.per_byte, 0); // a page-cache bandwidth was measured
    EXPECT_TRUE(s.buffered_flushing.ok);
    EXPECT_TRUE(s.sync_small.ok) << describe(s.sync_small);
    EXPECT_GE(s.sync_small.points.size(), 5u);
    EXPECT_GE(s.buffered_small.samples, 12u * 5); // many sizes, several repetitions each
    EXPECT_EQ(s.page_size, static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE)));
    ASSERT_TRUE(s.stdio_buffer_size);
    EXPECT_GE(*s.stdio_buffer_size, 512u);
    ASSERT_TRUE(s.dirty_ratio && s.dirty_expire && s.dirty_writeback_interval);
    EXPECT_GE(*s.dirty_ratio, 0);
    EXPECT_LE(*s.dirty_ratio, 1);
    ASSERT_TRUE(s.dirtyable_memory);
    EXPECT_GT(*s.dirtyable_memory, std::uint64_t(64) << 20);
}

} // namespace
} // namespace iosig::calibrate
