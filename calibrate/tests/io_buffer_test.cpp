// The measurement buffer: a device IO of 1 MiB must reach the block layer as one request, so the
// buffer that device phases use is physically contiguous (transparent huge pages), whatever the
// page allocator hands out for ordinary 4 KiB faults.
#include "io_buffer.hpp"

#include <algorithm>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <unistd.h>
#include <vector>

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

// Each write's content differs from every earlier one (storage that deduplicates or caches
// repeated content would otherwise be measured faster than a program's data): a scramble changes
// one 8-byte word in every 512 bytes of the range it is given, a different value for each salt,
// and nothing outside the range.
TEST(IoBuffer, AScrambleChangesAWordInEvery512BytesOfItsRangeOnly) {
    IoBuffer buffer(4 * 4096, -1);
    buffer.fill_random(7);
    const std::vector<std::byte> before(buffer.data(), buffer.data() + buffer.size());
    buffer.scramble(4096, 8192, 1);
    const std::vector<std::byte> first(buffer.data(), buffer.data() + buffer.size());
    std::size_t changed_words = 0;
    for (std::size_t i = 0; i < buffer.size(); i += 8) {
        const bool changed =
            !std::equal(first.begin() + i, first.begin() + i + 8, before.begin() + i);
        const bool in_range = i >= 4096 && i < 3 * 4096 && i % 512 == 0;
        EXPECT_EQ(changed, in_range) << "byte " << i;
        changed_words += changed;
    }
    EXPECT_EQ(changed_words, 16u);
    buffer.scramble(4096, 8192, 2);
    EXPECT_FALSE(std::equal(first.begin(), first.end(), buffer.data()))
        << "a second write's scramble left the content as the first's";
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
