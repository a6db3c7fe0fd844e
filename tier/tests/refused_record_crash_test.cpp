// A record the journal refused is asked for again, so that a later write, which the engine
// acknowledges, survives a crash of the process. Recovery writes a dirty line home up to its
// file's journaled size, and with TierConfig::dirty_bytes_only only the parts the journal names.
// A write whose SIZE record (or DIRTY_PART record) the journal refused, and whose bytes the home
// file refused too, fails, but its bytes stay in the dirty line; before session 43 a later write
// below that size (or inside that part) appended no record, returned success, and was lost by
// recovery (found by EngineAgainstTheKernelWhileDevicesFailThroughACrash). A CLEAN record refused
// during a write-back a close waits for is asked for again by that close, so that recovery does
// not write the line home over a later change of another program.
#include "engine_fixture.hpp"
#include "failing_device.hpp" // slice

#include <fcntl.h>
#include <gtest/gtest.h>

namespace iosig::tier {
namespace {

using test_support::close_during_a_write_back_whose_clean_record_fails;
using test_support::pattern;
using test_support::read_file;
using test_support::ScratchDir;
using test_support::slice;
using test_support::small_config;
using test_support::write_file;
using test_support::write_outside;

constexpr std::size_t line = 4096;

struct RefusedRecordCrash {
    explicit RefusedRecordCrash(bool dirty_bytes_only) {
        write_file(home, pattern(2 * line + 100, 1));
        config = small_config(dir, 4);
        config.max_dirty_lines = 4;
        config.dirty_bytes_only = dirty_bytes_only;
        config.faults = IoFaults::without_power_cuts();
        tier = TierCache::open(config);
        h = tier->open_file(home, O_RDWR);
    }
    ssize_t write(const std::vector<char>& bytes, off_t offset) {
        return tier->pwrite(h, bytes.data(), bytes.size(), offset);
    }
    // The process crashes (no write-back, no close) and recovery runs.
    std::vector<char> home_after_crash() {
        tier->abandon();
        tier.reset();
        (void)TierCache::recover(config.cache_file);
        return read_file(home);
    }

    ScratchDir dir;
    std::filesystem::path home = dir / "home.dat";
    TierConfig config;
    std::unique_ptr<TierCache> tier;
    int h = -1;
};

// Line 2 is dirty; a write growing the file fails (no SIZE record, no home write); a write below
// the size it left, beyond the journaled one, succeeds and is home after the crash.
TEST(RefusedRecordCrash, AWriteBelowASizeTheJournalRefusedSurvivesACrash) {
    RefusedRecordCrash t(false);
    ASSERT_GE(t.h, 0);
    ASSERT_EQ(t.write(pattern(10, 2), 2 * line), 10);
    t.config.faults->fail_now({FileRole::journal, FileRole::home});
    EXPECT_EQ(t.write(pattern(200, 3), 2 * line + 50), -EIO);
    t.config.faults->clear_failures();
    const std::vector<char> acknowledged = pattern(50, 4);
    ASSERT_EQ(t.write(acknowledged, 2 * line + 150), 50);
    const std::vector<char> home = t.home_after_crash();
    ASSERT_GE(home.size(), 2 * line + 200);
    EXPECT_EQ(slice(home, 2 * line + 150, 50), acknowledged);
}

// With written bytes only: line 2 is dirty in [0, 10); a write at 1000 makes a part the journal
// refuses (its bytes go home); a write inside that part succeeds and is home after the crash.
TEST(RefusedRecordCrash, AWriteInsideAPartTheJournalRefusedSurvivesACrash) {
    RefusedRecordCrash t(true);
    ASSERT_GE(t.h, 0);
    ASSERT_EQ(t.write(pattern(10, 2), 2 * line), 10);
    t.config.faults->fail_now({FileRole::journal});
    EXPECT_EQ(t.write(pattern(100, 3), 2 * line + 1000), 100); // home instead
    t.config.faults->clear_failures();
    const std::vector<char> acknowledged = pattern(20, 4);
    ASSERT_EQ(t.write(acknowledged, 2 * line + 1010), 20);
    const std::vector<char> home = t.home_after_crash();
    ASSERT_GE(home.size(), 2 * line + 1030);
    EXPECT_EQ(slice(home, 2 * line + 1010, 20), acknowledged);
    EXPECT_EQ(slice(home, 2 * line, 10), pattern(10, 2));
}

// A truncate that grows the file, the home file refusing it: the engine shows the file grown (the
// journal took the TRUNCATE record), and so does the home file after a crash of the process, as
// recovery makes the truncates the journal holds unfinished. Before session 43 it made only those
// that cut a file, and left this one at its old length.
TEST(RefusedRecordCrash, ATruncateThatGrowsTheFileAndFailedAtHomeIsMadeByRecovery) {
    RefusedRecordCrash t(false);
    ASSERT_GE(t.h, 0);
    t.config.faults->fail_now({FileRole::home});
    EXPECT_EQ(t.tier->ftruncate(t.h, 5 * line), -EIO);
    t.config.faults->clear_failures();
    EXPECT_EQ(t.tier->file_size(t.h), static_cast<off_t>(5 * line));
    const std::vector<char> home = t.home_after_crash();
    ASSERT_EQ(home.size(), 5 * line);
    EXPECT_EQ(slice(home, 2 * line + 100, 3 * line - 100), std::vector<char>(3 * line - 100, 0));
}

// A close that begins while the flusher writes the file's only dirty line home waits for it; the
// journal refuses that line's CLEAN record (one failed write) and the close records it once more
// before it returns. Then another program rewrites the line, and the process crashes before the
// flusher's next pass (a second away: the write-back came from the dirty bound, not from age).
// Recovery must leave the other program's bytes alone. Without the close's second try the
// journal still listed the line dirty, and recovery wrote the closed file's old bytes over them.
TEST(RefusedRecordCrash, ALineTheCloseRecordedCleanIsNotWrittenHomeAgainAfterACrash) {
    ScratchDir dir;
    const auto path = dir / "data.bin";
    write_file(path, pattern(line, 50));
    TierConfig config = small_config(dir, 4);
    config.max_dirty_lines = 1; // one dirty line is pressure: write-back at the next tick
    config.faults = IoFaults::without_power_cuts();
    auto tier = TierCache::open(config);
    const int h = tier->open_file(path, O_RDWR);
    ASSERT_GE(h, 0);
    const std::vector<char> written = pattern(line, 51);
    ASSERT_EQ(close_during_a_write_back_whose_clean_record_fails(*tier, *config.faults, h, written),
              0);
    ASSERT_EQ(read_file(path), written);

    const std::vector<char> rewritten = pattern(line, 52);
    write_outside(path, rewritten, 0);
    tier->abandon();
    tier.reset();
    (void)TierCache::recover(config.cache_file);
    EXPECT_TRUE(read_file(path) == rewritten)
        << "recovery wrote the closed file's old bytes over the other program's";
}

} // namespace
} // namespace iosig::tier
