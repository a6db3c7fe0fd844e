// A close that fails (the home device fails while its lines go home) leaves them dirty in the
// engine, which writes them home later. Once they are, the file is settled as its close would
// have settled it: its version is what the next open compares with, so a change another program
// makes after that is seen (close-to-open consistency), and the file is listed idle. Before
// session 43 the version was never taken, and the next open served the old size and bytes
// (found by EngineAgainstTheKernelWhileDevicesFail).
#include "engine_fixture.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

namespace iosig::tier {
namespace {

using test_support::descriptors_naming;
using test_support::pattern;
using test_support::read_file;
using test_support::read_through;
using test_support::ScratchDir;
using test_support::small_config;
using test_support::write_outside;

constexpr std::size_t line = 4096;

// The file's lines go home at a flush_all (`by_flush_all`), or by the flusher, after which the
// releaser's round (once a second) settles the file.
void expect_change_seen_after_failed_close(bool by_flush_all) {
    ScratchDir dir;
    const auto path = dir / "data.bin";
    TierConfig config = small_config(dir);
    config.faults = IoFaults::without_power_cuts();
    // Only a flush takes lines home, or the flusher does at once.
    config.writeback_delay = by_flush_all ? 3600 : 0;
    config.idle_files = 0; // a settled file's descriptor is closed at once: that shows it
    auto tier = TierCache::open(config);
    int h = tier->open_file(path, O_RDWR | O_CREAT);
    ASSERT_GE(h, 0);
    const std::vector<char> written = pattern(3 * line, 1);
    ASSERT_EQ(tier->pwrite(h, written.data(), written.size(), 0),
              static_cast<ssize_t>(written.size()));
    config.faults->fail_now({FileRole::home});
    ASSERT_EQ(tier->close(h), -EIO);
    config.faults->clear_failures();
    if (by_flush_all) {
        ASSERT_EQ(tier->flush_all(), 0);
    } else {
        // The flusher takes the lines home and the releaser settles the file (a flush_all
        // would settle it itself, so none is made): it then closes the file's descriptor.
        for (int i = 0; i < 3000 && descriptors_naming(path) > 0; ++i)
            ::usleep(10'000);
    }
    EXPECT_EQ(descriptors_naming(path), 0) << "the file was never settled and released";
    ASSERT_EQ(read_file(path), written);
    // Another program cuts the file to one line and rewrites it.
    const std::vector<char> changed = pattern(line, 2);
    ASSERT_EQ(::truncate(path.c_str(), line), 0);
    write_outside(path, changed, 0);
    h = tier->open_file(path, O_RDONLY);
    ASSERT_GE(h, 0);
    EXPECT_EQ(tier->file_size(h), static_cast<off_t>(line));
    EXPECT_EQ(read_through(*tier, h, 4 * line), changed);
    EXPECT_EQ(tier->close(h), 0);
}

TEST(FailedClose, AChangeMadeAfterAFlushAllGotTheLinesHomeIsSeenByTheNextOpen) {
    expect_change_seen_after_failed_close(true);
}

TEST(FailedClose, AChangeMadeAfterTheFlusherGotTheLinesHomeIsSeenByTheNextOpen) {
    expect_change_seen_after_failed_close(false);
}

// Reopened before its lines went home, the file keeps them: the engine's bytes win, as a handle
// of the engine is its file's only writer, and the new handle's close settles it.
TEST(FailedClose, AFileOpenedAgainBeforeItsLinesWentHomeKeepsThem) {
    ScratchDir dir;
    const auto path = dir / "data.bin";
    TierConfig config = small_config(dir);
    config.faults = IoFaults::without_power_cuts();
    config.writeback_delay = 3600;
    auto tier = TierCache::open(config);
    int h = tier->open_file(path, O_RDWR | O_CREAT);
    ASSERT_GE(h, 0);
    const std::vector<char> written = pattern(2 * line, 3);
    ASSERT_EQ(tier->pwrite(h, written.data(), written.size(), 0),
              static_cast<ssize_t>(written.size()));
    config.faults->fail_now({FileRole::home});
    ASSERT_EQ(tier->close(h), -EIO);
    config.faults->clear_failures();
    h = tier->open_file(path, O_RDONLY);
    ASSERT_GE(h, 0);
    EXPECT_EQ(tier->file_size(h), static_cast<off_t>(written.size()));
    EXPECT_EQ(read_through(*tier, h, 3 * line), written);
    ASSERT_EQ(tier->close(h), 0);
    EXPECT_EQ(read_file(path), written);
}

} // namespace
} // namespace iosig::tier
