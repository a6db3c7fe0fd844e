// The journal fails (its device is full or gone) while the program goes on. A write of a clean
// line whose DIRTY record cannot be appended goes home (refused_write_test.cpp, for this file and
// the cache file). A slot whose line left without its CLEAN record (a truncate while the journal
// failed) is set aside, not offered to every miss, and returns to use once the journal takes
// records again; lines home but not recordable clean satisfy fsync and are not written again;
// files opened meanwhile are served.
#include "failing_device.hpp"

#include <chrono>
#include <cstring>
#include <gtest/gtest.h>
#include <thread>

namespace iosig::tier {
namespace {

using test_support::pattern;
using test_support::read_file;
using test_support::slice;

constexpr std::size_t line = test_support::device_test_line;

// FailingDevice with the journal failing from now on.
struct FailingJournal : test_support::FailingDevice {
    void fail_journal() { faults->fail_now({FileRole::journal}); }
    // Lines first .. first+lines-1 written (dirty, `seed`), then the file is cut to `first` lines
    // and the journal fails just after it took the TRUNCATE record: the truncate cannot record the
    // lines clean, so their slots are set aside, and the cut stays unfinished (no write may go
    // beyond it).
    void cut_off_while_the_journal_fails(std::size_t first, std::size_t lines, unsigned seed) {
        const auto data = pattern(lines * line, seed);
        ASSERT_EQ(tier->pwrite(h, data.data(), data.size(), static_cast<off_t>(first * line)),
                  static_cast<ssize_t>(data.size()));
        faults->fail_nth_write(2, {FileRole::journal});
        EXPECT_LT(tier->ftruncate(h, static_cast<off_t>(first * line)), 0);
        EXPECT_EQ(tier->stats().slots_out_of_use, lines);
    }
};

// A dirty line already has its DIRTY record: a write into it that does not grow the file needs
// none, and stays in the cache.
TEST(JournalFailure, AWriteOfADirtyLineNeedsNoRecordAndStaysInTheCache) {
    FailingJournal t;
    ASSERT_GE(t.h, 0);
    const auto first = pattern(line, 3);
    ASSERT_EQ(t.tier->pwrite(t.h, first.data(), line, 0), static_cast<ssize_t>(line));
    t.fail_journal();
    const std::vector<char> ten(10, 'w');
    EXPECT_EQ(t.tier->pwrite(t.h, ten.data(), ten.size(), 100), 10);
    EXPECT_EQ(t.tier->stats().cache_refusals, 0u);
    EXPECT_EQ(t.tier->stats().dirty_lines, 1u);
    auto expected = first;
    std::copy(ten.begin(), ten.end(), expected.begin() + 100);
    EXPECT_EQ(t.read_line(0), expected);
}

// Line 4 is dirty in one slot; the other three slots were never used. The journal fails and the
// file is cut to 4 lines: line 4 leaves the cache, but its CLEAN record cannot be appended, so its
// slot may hold no other line (recovery would write that line's bytes over line 4). That one slot
// is set aside; the other three keep serving reads. Line 4 itself takes no write until the journal
// works again (CrashSafety.AWriteOfALineASlotSetAsideStillHoldsIsNeverUndoneByRecovery).
TEST(JournalFailure, ASlotATruncateCouldNotRecordCleanIsSetAsideAndTheOthersServe) {
    FailingJournal t;
    ASSERT_GE(t.h, 0);
    t.cut_off_while_the_journal_fails(4, 1, 4);
    const auto again = pattern(line, 5);
    EXPECT_EQ(t.tier->pwrite(t.h, again.data(), line, 4 * line), -EIO);
    // Lines 0-2 written while the journal fails go home (their DIRTY records cannot be
    // appended); then read twice: the second pass hits the three usable slots.
    const auto three = pattern(3 * line, 5);
    ASSERT_EQ(t.tier->pwrite(t.h, three.data(), three.size(), 0),
              static_cast<ssize_t>(three.size()));
    for (std::size_t l = 0; l < 3; ++l)
        EXPECT_EQ(t.read_line(l), slice(three, l * line, line));
    const std::uint64_t hits_before = t.tier->stats().read_hits;
    for (std::size_t l = 0; l < 3; ++l)
        EXPECT_EQ(t.read_line(l), slice(three, l * line, line));
    EXPECT_EQ(t.tier->stats().read_hits - hits_before, 3u)
        << "the slot set aside was offered to every miss";
}

// The same slot set aside; then the journal takes records again. The slot gets its CLEAN record
// and returns to use: four new lines written all stay in the cache. The close finishes the cut
// the truncate could not make: the home file ends where the engine's does.
TEST(JournalFailure, ASlotSetAsideReturnsOnceTheJournalTakesRecordsAgain) {
    FailingJournal t;
    ASSERT_GE(t.h, 0);
    t.cut_off_while_the_journal_fails(4, 1, 6);
    t.faults->clear_failures();
    const auto four = pattern(4 * line, 7);
    ASSERT_EQ(t.tier->pwrite(t.h, four.data(), four.size(), 0), static_cast<ssize_t>(four.size()));
    const TierStats stats = t.tier->stats();
    EXPECT_EQ(stats.cache_refusals, 0u);
    EXPECT_EQ(stats.dirty_lines, 4u);
    EXPECT_EQ(stats.slots_out_of_use, 0u);
    ASSERT_EQ(t.tier->close(t.h), 0);
    EXPECT_EQ(read_file(t.home), four);
}

// Every slot set aside (four dirty lines cut off while the journal fails): the cache takes no
// line, and reads and writes of other lines go to the home file instead of waiting for a slot
// forever.
TEST(JournalFailure, WithEverySlotSetAsideCallsGoHome) {
    FailingJournal t;
    ASSERT_GE(t.h, 0);
    t.cut_off_while_the_journal_fails(1, 4, 8);
    const auto first = pattern(line, 9);
    ASSERT_EQ(t.tier->pwrite(t.h, first.data(), line, 0), static_cast<ssize_t>(line));
    EXPECT_EQ(t.tier->stats().cache_refusals, 1u);
    EXPECT_EQ(t.read_line(0), first);
    EXPECT_EQ(slice(read_file(t.home), 0, line), first);
}

// Lines 0 and 1 are dirty when the journal fails. An fsync writes them home and syncs the home
// file, but cannot record them clean: they stay dirty in the cache (the journal lists their slots
// as holding them, with the bytes that are now home, so recovery could only write those bytes
// again). The fsync succeeds, as the program's own would have: its bytes are durable.
TEST(JournalFailure, AnFsyncSucceedsOnceTheLinesAreHomeThoughTheJournalCannotRecordThemClean) {
    FailingJournal t;
    ASSERT_GE(t.h, 0);
    const auto two = pattern(2 * line, 10);
    ASSERT_EQ(t.tier->pwrite(t.h, two.data(), two.size(), 0), static_cast<ssize_t>(two.size()));
    t.fail_journal();
    EXPECT_EQ(t.tier->fsync(t.h), 0);
    EXPECT_EQ(slice(read_file(t.home), 0, two.size()), two);
    EXPECT_EQ(t.tier->stats().dirty_lines, 2u) << "recorded clean without a record";
    // Written again (no record needed: the line is dirty) and synced again.
    const auto again = pattern(line, 11);
    ASSERT_EQ(t.tier->pwrite(t.h, again.data(), line, 0), static_cast<ssize_t>(line));
    EXPECT_EQ(t.tier->fsync(t.h), 0);
    EXPECT_EQ(slice(read_file(t.home), 0, line), again);
    // The journal takes records again: the next write-back records them clean.
    t.faults->clear_failures();
    EXPECT_EQ(t.tier->fsync(t.h), 0);
    EXPECT_EQ(t.tier->stats().dirty_lines, 0u);
}

// Every line dirty and none can be recorded clean: a write that needs a slot does not wait for
// one forever, it goes home.
TEST(JournalFailure, WithEveryLineDirtyAndNoneRecordableCleanAWriteGoesHome) {
    FailingJournal t;
    ASSERT_GE(t.h, 0);
    const auto four = pattern(4 * line, 12);
    ASSERT_EQ(t.tier->pwrite(t.h, four.data(), four.size(), 0), static_cast<ssize_t>(four.size()));
    t.fail_journal();
    ASSERT_EQ(t.tier->fsync(t.h), 0);
    const auto fifth = pattern(line, 13);
    EXPECT_EQ(t.tier->pwrite(t.h, fifth.data(), line, 4 * line), static_cast<ssize_t>(line));
    EXPECT_EQ(t.read_line(4), fifth);
    EXPECT_EQ(slice(read_file(t.home), 4 * line, line), fifth);
}

// With the flusher at work (lines ripe after 2 ms), lines written home whose CLEAN records the
// journal did not take are not written home again at every pass: only their records are tried,
// and appended once the journal takes records again.
TEST(JournalFailure, ALineAlreadyHomeIsNotWrittenAgainWhileItWaitsForItsCleanRecord) {
    test_support::ScratchDir dir;
    const auto home = dir / "home.dat";
    test_support::write_file(home, pattern(4 * line, 14));
    auto faults = std::make_shared<IoFaults>();
    TierConfig config = test_support::small_config(dir, 4);
    config.max_dirty_lines = 4;
    config.writeback_delay = 0.002;
    config.faults = faults;
    auto tier = TierCache::open(config);
    const int h = tier->open_file(home, O_RDWR);
    ASSERT_GE(h, 0);
    // The write-back's home write takes 50 ms, so the journal has failed before its CLEAN
    // records are appended.
    faults->slow_down(FileRole::home, std::chrono::milliseconds(50));
    const auto two = pattern(2 * line, 15);
    ASSERT_EQ(tier->pwrite(h, two.data(), two.size(), 0), static_cast<ssize_t>(two.size()));
    faults->fail_now({FileRole::journal});
    const auto until = [&](auto done) {
        for (int i = 0; i < 400 && !done(); ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        return done();
    };
    ASSERT_TRUE(until([&] { return tier->stats().writebacks >= 2; })) << "never written back";
    faults->slow_down(FileRole::home, std::chrono::microseconds(0));
    const std::uint64_t home_writes = faults->writes(FileRole::home);
    std::this_thread::sleep_for(std::chrono::milliseconds(100)); // about 20 flusher passes
    EXPECT_EQ(faults->writes(FileRole::home), home_writes) << "written home again";
    EXPECT_EQ(tier->stats().dirty_lines, 2u);
    faults->clear_failures();
    EXPECT_TRUE(until([&] { return tier->stats().dirty_lines == 0; })) << "never recorded clean";
    EXPECT_EQ(faults->writes(FileRole::home), home_writes) << "written home again";
    EXPECT_EQ(slice(read_file(home), 0, two.size()), two);
}

// A file opened while the journal fails cannot be named in it (its FILE record), so none of its
// lines may be recorded dirty yet: the open succeeds, reads are cached, writes go home. Once the
// journal takes records again, the file's FILE record comes before its first DIRTY record, so
// recovery after a crash of the process finds the home file of a line written then.
TEST(JournalFailure, AFileOpenedWhileTheJournalFailsIsServedAndItsWritesGoHome) {
    FailingJournal t;
    ASSERT_GE(t.h, 0);
    const auto other = t.dir / "other.dat";
    const auto initial = pattern(3 * line, 16);
    test_support::write_file(other, initial);
    t.fail_journal();
    const int h = t.tier->open_file(other, O_RDWR);
    ASSERT_GE(h, 0) << "the open failed: " << std::strerror(-h);
    std::vector<char> got(line);
    ASSERT_EQ(t.tier->pread(h, got.data(), line, 0), static_cast<ssize_t>(line));
    EXPECT_EQ(got, slice(initial, 0, line));
    const std::vector<char> ten(10, 'w');
    EXPECT_EQ(t.tier->pwrite(h, ten.data(), ten.size(), 100), 10);
    auto expected = initial;
    std::copy(ten.begin(), ten.end(), expected.begin() + 100);
    EXPECT_EQ(read_file(other), expected) << "not home";
    t.faults->clear_failures();
    const auto second = pattern(line, 17);
    ASSERT_EQ(t.tier->pwrite(h, second.data(), line, line), static_cast<ssize_t>(line));
    EXPECT_EQ(t.tier->stats().dirty_lines, 1u);
    std::copy(second.begin(), second.end(), expected.begin() + line);
    t.tier->abandon(); // the process crashes: line 1 is only in the cache file
    t.tier.reset();
    const auto recovered = TierCache::open(test_support::small_config(t.dir, 4));
    EXPECT_EQ(recovered->recovery().missing_files, 0u);
    EXPECT_EQ(read_file(other), expected);
}

} // namespace
} // namespace iosig::tier
