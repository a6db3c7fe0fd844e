// The measurement buffer: a device IO of 1 MiB must reach the block layer as one request, so the
// buffer that device phases use is physically contiguous (transparent huge pages), whatever the
// page allocator hands out for ordinary 4 KiB faults.
#include "io_buffer.hpp"

#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <unistd.h>

namespace iosig::calibrate {
namespace {

std::string transparent_hugepage_mode() {
    std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string line;
    std::getline(in, line);
    return line; // e.g. "always [madvise] never"
}

TEST(IoBuffer, IsPageAlignedZeroedAndAsLargeAsAsked) {
    for (const Pages pages : {Pages::small, Pages::huge}) {
        IoBuffer buffer(5 * 4096 + 1, -1, pages);
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer.data()) % 4096, 0u);
        ASSERT_EQ(buffer.size(), 6u * 4096);
        for (std::size_t i = 0; i < buffer.size(); ++i)
            ASSERT_EQ(buffer.data()[i], std::byte{0});
        buffer.fill_random(7);
        EXPECT_NE(buffer.data()[100], std::byte{0}); // random content now, not zeros
    }
}

TEST(IoBuffer, HugeBufferIsPhysicallyContiguous) {
    if (geteuid() != 0) GTEST_SKIP() << "reading page frame numbers needs root";
    if (transparent_hugepage_mode().find("[never]") != std::string::npos)
        GTEST_SKIP() << "transparent huge pages are disabled on this machine";
    IoBuffer huge(16 << 20, -1, Pages::huge);
    const auto share = huge.contiguous_share();
    ASSERT_TRUE(share.has_value());
    // Eight 2 MiB pages: at most 7 breaks in 4095 steps, unless memory is too fragmented for THP.
    EXPECT_GE(*share, 0.99) << "a 16 MiB huge-page buffer is not contiguous";
}

} // namespace
} // namespace iosig::calibrate
