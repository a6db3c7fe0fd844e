// The readahead model (readahead_model.hpp) against the running kernel: scans of a loop device of
// the test's own, through the page cache, with the device's reads counted by the kernel
// (/sys/block/loopN/stat). Needs root (losetup, blockdev); skipped with the reason elsewhere.
#include "iosig/tier/readahead_model.hpp"
#include "loop_device.hpp"

#include <cstdint>
#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <gtest/gtest.h>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

namespace iosig::tier {
namespace {

constexpr std::uint64_t MiB = 1 << 20;
constexpr std::uint64_t device_bytes = 64 * MiB;
constexpr std::uint64_t window_bytes = 2560 << 10; // the lab's hdd

using test_support::LoopDevice;

// Reads completed and bytes read by the device so far (fields 1 and 3 of its stat file).
HomeReads device_reads(const LoopDevice& loop) {
    std::ifstream stat("/sys/block/" + loop.name() + "/stat");
    std::uint64_t ios = 0, merged = 0, sectors = 0;
    stat >> ios >> merged >> sectors;
    return {ios, sectors * 512};
}

// Reads [from, to) of the device in `request`-byte reads through the page cache, from a cold
// cache; what the device read meanwhile.
HomeReads kernel_scan(const LoopDevice& loop, std::uint64_t from, std::uint64_t to,
                      std::uint64_t request) {
    LoopDevice::run("blockdev --flushbufs " + loop.path());
    const int fd = ::open(loop.path().c_str(), O_RDONLY);
    EXPECT_GE(fd, 0) << loop.path();
    if (fd < 0) return {};
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    std::vector<char> buffer(request);
    const HomeReads before = device_reads(loop);
    for (std::uint64_t offset = from; offset < to; offset += request)
        EXPECT_EQ(::pread(fd, buffer.data(), request, static_cast<off_t>(offset)),
                  static_cast<ssize_t>(request));
    const HomeReads after = device_reads(loop);
    ::close(fd);
    return {after.ios - before.ios, after.bytes - before.bytes};
}

HomeReads model_scan(const ReadaheadConfig& config, std::uint64_t from, std::uint64_t to,
                     std::uint64_t request) {
    PageCacheModel cache(config, device_bytes);
    HomeReads sum;
    for (std::uint64_t offset = from; offset < to; offset += request) {
        const HomeReads r = cache.read(offset, request);
        sum.ios += r.ios;
        sum.bytes += r.bytes;
    }
    return sum;
}

// A scan that stops before the end of the file leaves readahead behind it: the kernel has read
// the window it was in and may have started the next (unless a window ends right at the stop). The
// model reads ahead as the classic kernel does; kernel 6.18 sizes its windows to large folios, so
// the bytes past the stop differ by up to two windows and the reads by a few. A scan to the end
// reads exactly the file, in both.
TEST(ReadaheadAgainstTheKernel, ScansThatStopEarlyAndScansToTheEnd) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to attach a loop device";
    const LoopDevice loop("ra-kernel", device_bytes);
    if (loop.path().empty()) GTEST_SKIP() << "losetup could not attach " << loop.image();
    ASSERT_TRUE(loop.set_readahead(window_bytes));
    const std::optional<DeviceReadahead> found = readahead_of(loop.path());
    ASSERT_TRUE(found) << loop.path();
    ASSERT_EQ(found->config.window_bytes, window_bytes);
    std::printf("from MiB, to MiB, request KiB: kernel reads, MiB | model reads, MiB "
                "(read_ahead %llu KiB, max IO %llu KiB)\n",
                static_cast<unsigned long long>(found->config.window_bytes >> 10),
                static_cast<unsigned long long>(found->config.max_io_bytes >> 10));
    unsigned stopped_early = 0, kernel_read_past = 0, model_read_past = 0;
    for (const std::uint64_t from : {std::uint64_t{0}, MiB})
        for (const std::uint64_t to : {2 * MiB, 4 * MiB, 8 * MiB, 16 * MiB, device_bytes})
            for (const std::uint64_t request : {std::uint64_t{4096}, std::uint64_t{64} << 10}) {
                const HomeReads kernel = kernel_scan(loop, from, to, request);
                const HomeReads model = model_scan(found->config, from, to, request);
                std::printf("%llu, %llu, %llu: %llu, %.2f | %llu, %.2f\n",
                            static_cast<unsigned long long>(from / MiB),
                            static_cast<unsigned long long>(to / MiB),
                            static_cast<unsigned long long>(request >> 10),
                            static_cast<unsigned long long>(kernel.ios),
                            static_cast<double>(kernel.bytes) / MiB,
                            static_cast<unsigned long long>(model.ios),
                            static_cast<double>(model.bytes) / MiB);
                const std::string scan = std::to_string(from / MiB) + ".." +
                                         std::to_string(to / MiB) + " MiB in " +
                                         std::to_string(request >> 10) + " KiB reads";
                if (to == device_bytes) {
                    EXPECT_EQ(kernel.bytes, to - from) << scan << ": the kernel read past the end";
                    EXPECT_EQ(model.bytes, to - from) << scan;
                } else {
                    EXPECT_GE(kernel.bytes, to - from) << scan;
                    EXPECT_GE(model.bytes, to - from) << scan;
                    ++stopped_early;
                    if (kernel.bytes > to - from) ++kernel_read_past;
                    if (model.bytes > to - from) ++model_read_past;
                }
                const auto apart = [](std::uint64_t a, std::uint64_t b) {
                    return a > b ? a - b : b - a;
                };
                EXPECT_LE(apart(model.bytes, kernel.bytes), 2 * window_bytes) << scan;
                EXPECT_LE(apart(model.ios, kernel.ios), 4u) << scan;
            }
    // Where a window ends right at the stop, nothing more is read; elsewhere both read ahead.
    EXPECT_GE(2 * kernel_read_past, stopped_early) << "the kernel read past the stop too rarely";
    EXPECT_GE(2 * model_read_past, stopped_early) << "the model read past the stop too rarely";
}

} // namespace
} // namespace iosig::tier
