// The home device fails for a while under a cache whose every line is dirty (failing_device.hpp:
// four lines of 4 KiB, all of them allowed dirty): the write-back fails, the flusher keeps the
// error until its next pass (a second later here), and in that while no slot can be cleaned. A
// miss then does not fail: it reads or writes the home file as the program would have without the
// cache, whether the device works again yet or not.
#include "failing_device.hpp"

#include <gtest/gtest.h>

namespace iosig::tier {
namespace {

using test_support::pattern;
using test_support::read_file;
using test_support::slice;

constexpr std::size_t line = test_support::device_test_line;

TEST(HomeDeviceFailure, WhileEveryLineIsDirtyAndCannotGoHomeAMissGoesHomeItself) {
    test_support::FailingDevice t;
    ASSERT_GE(t.h, 0);
    const auto four = pattern(4 * line, 2);
    ASSERT_EQ(t.tier->pwrite(t.h, four.data(), four.size(), 0), static_cast<ssize_t>(four.size()));
    t.faults->fail_now({FileRole::home});
    // Line 4 misses: the flusher is woken to clean a slot, fails, and the read goes home, whose
    // reads still work.
    EXPECT_EQ(t.read_line(4), slice(t.initial, 4 * line, line));
    EXPECT_GT(t.faults->injected_failures(), 0u) << "no write-back was tried";
    EXPECT_EQ(t.tier->stats().dirty_lines, 4u);
    // The device works again, before the flusher's next pass: a write of 100 bytes of line 4
    // finds no slot either and goes home.
    t.faults->clear_failures();
    const std::vector<char> hundred(100, 'h');
    EXPECT_EQ(t.tier->pwrite(t.h, hundred.data(), hundred.size(), 4 * line + 10), 100);
    auto expected = four;
    expected.insert(expected.end(), t.initial.begin() + 4 * line, t.initial.end());
    std::copy(hundred.begin(), hundred.end(), expected.begin() + 4 * line + 10);
    EXPECT_EQ(t.read_line(4), slice(expected, 4 * line, line));
    EXPECT_EQ(slice(read_file(t.home), 4 * line, line), slice(expected, 4 * line, line));
    // And the four dirty lines reach home at the fsync.
    EXPECT_EQ(t.tier->fsync(t.h), 0);
    EXPECT_EQ(read_file(t.home), expected);
    EXPECT_EQ(t.tier->stats().dirty_lines, 0u);
    ASSERT_EQ(t.tier->close(t.h), 0);
    EXPECT_EQ(read_file(t.home), expected);
}

} // namespace
} // namespace iosig::tier
