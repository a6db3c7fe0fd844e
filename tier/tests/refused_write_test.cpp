// A write of a line that holds nothing the home file lacks (clean, or just taken for the write)
// goes to the home file when the fast device refuses it: the cache file takes no data (its device
// is gone), or the journal takes no DIRTY record (its device is full or gone). The line leaves the
// cache, so no read sees what the refused write left in its slot, and the write reads back as the
// program's own would have. One specification, run for both files.
#include "failing_device.hpp"

#include <gtest/gtest.h>
#include <ostream>
#include <string>

namespace iosig::tier {
namespace {

using test_support::pattern;
using test_support::read_file;
using test_support::slice;

constexpr std::size_t line = test_support::device_test_line;

enum class Refuser { cache_file, journal };

void PrintTo(Refuser r, std::ostream* os) {
    *os << (r == Refuser::cache_file ? "the cache file" : "the journal");
}

std::string name_of(const ::testing::TestParamInfo<Refuser>& info) {
    return info.param == Refuser::cache_file ? "CacheFile" : "Journal";
}

class RefusedWrite : public ::testing::TestWithParam<Refuser> {
protected:
    void refuse_from_now() {
        if (GetParam() == Refuser::cache_file)
            t.faults->fail_nth_write(1, {FileRole::cache});
        else
            t.faults->fail_now({FileRole::journal});
    }
    // After the refused write: it went home at once, counted once, and left no line dirty.
    void expect_home_now(const std::vector<char>& expected) {
        EXPECT_EQ(read_file(t.home), expected) << "not home";
        EXPECT_EQ(t.tier->stats().cache_refusals, 1u);
        EXPECT_EQ(t.tier->stats().dirty_lines, 0u);
    }
    test_support::FailingDevice t;
};

// The cache's four lines hold lines 0-3, clean. A whole-line write of line 4 takes the least
// recently used one's slot (nothing to fill): the cache file refuses the data, so the slot still
// holds line 0's bytes; or the data lands and the journal refuses the record, so the slot holds
// line 4's bytes under no record. Either way line 4 reads as written and line 0 as before.
TEST_P(RefusedWrite, AWholeLineWriteOfAnEvictedSlotGoesHome) {
    ASSERT_GE(t.h, 0);
    for (std::size_t l = 0; l < 4; ++l)
        EXPECT_EQ(t.read_line(l), slice(t.initial, l * line, line));
    refuse_from_now();
    const auto fresh = pattern(line, 2);
    EXPECT_EQ(t.tier->pwrite(t.h, fresh.data(), line, 4 * line), static_cast<ssize_t>(line));
    auto expected = slice(t.initial, 0, 4 * line);
    expected.insert(expected.end(), fresh.begin(), fresh.end());
    expect_home_now(expected);
    EXPECT_EQ(t.read_line(4), fresh) << "line 4 read other bytes";
    for (std::size_t l = 0; l < 4; ++l)
        EXPECT_EQ(t.read_line(l), slice(t.initial, l * line, line)) << "line " << l;
    ASSERT_EQ(t.tier->close(t.h), 0);
    EXPECT_EQ(read_file(t.home), expected);
}

// Line 0 is cached and clean; a write of ten of its bytes is refused.
TEST_P(RefusedWrite, APartialWriteOfACleanLineGoesHome) {
    ASSERT_GE(t.h, 0);
    EXPECT_EQ(t.read_line(0), slice(t.initial, 0, line));
    refuse_from_now();
    const std::vector<char> ten(10, 'w');
    EXPECT_EQ(t.tier->pwrite(t.h, ten.data(), ten.size(), 100), 10);
    auto expected = t.initial;
    std::copy(ten.begin(), ten.end(), expected.begin() + 100);
    expect_home_now(expected);
    EXPECT_EQ(t.read_line(0), slice(expected, 0, line));
    ASSERT_EQ(t.tier->close(t.h), 0);
    EXPECT_EQ(read_file(t.home), expected);
}

INSTANTIATE_TEST_SUITE_P(ByTheFastDevicesFiles, RefusedWrite,
                         ::testing::Values(Refuser::cache_file, Refuser::journal), name_of);

} // namespace
} // namespace iosig::tier
