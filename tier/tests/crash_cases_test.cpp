// Crash safety one case at a time: each journal ordering rule where the random workloads of
// crash_test.cpp rarely reach it, and the journal's device failing while the engine goes on. Each
// test sets up which line sits in which slot, cuts the power (IoFaults::crash, over several
// seeds), recovers and checks the home file.
#include "crash_config.hpp"
#include "engine_fixture.hpp"
#include "failing_device.hpp"

#include <gtest/gtest.h>

namespace iosig::tier {
namespace {

using test_support::after_the_journal_fails;
using test_support::config_for;
using test_support::four_line_config;
using test_support::read_file;
using test_support::ScratchDir;

// Rule 2 of docs/tier.md, one case at a time: a cache of 4 lines holds lines 4, 0, 2 and 3 (4 the
// least recently used), committed (their DIRTY records trusted after a power cut) and fsynced:
// home, and their CLEAN records appended, line 4's last, but not durable (the journal refuses the
// COMMIT record that would have synced them, then works again). A partial
// write of line 1 then takes line 4's slot, fills it from home, and fails at the cache file before
// its DIRTY record (the write then goes home past the cache); the power is cut. Had the slot been
// refilled before line 4's CLEAN record was durable, a journal that lost the record would still
// say the slot holds line 4, and recovery would write line 1's old bytes over line 4's
// acknowledged ones.
TEST(CrashSafety, ASlotIsRefilledOnlyOnceItsCleanRecordIsDurable) {
    constexpr std::size_t line = 4096;
    const std::vector<char> old_line1 = test_support::pattern(line, 2);
    for (std::uint64_t seed = 1; seed <= 32; ++seed) {
        ScratchDir dir;
        const auto home = dir / "home.dat";
        std::vector<char> initial(5 * line, 0);
        std::copy(old_line1.begin(), old_line1.end(), initial.begin() + line);
        test_support::write_file(home, initial);
        auto faults = std::make_shared<IoFaults>();
        const TierConfig config = four_line_config(dir, faults);
        std::vector<char> expected = initial;
        {
            auto tier = TierCache::open(config);
            const int h = tier->open_file(home, O_RDWR);
            for (const std::size_t l : {4, 0, 2, 3}) {
                const auto data = test_support::pattern(line, static_cast<unsigned>(10 + l));
                ASSERT_EQ(tier->pwrite(h, data.data(), line, static_cast<off_t>(l * line)),
                          static_cast<ssize_t>(line));
                std::copy(data.begin(), data.end(), expected.begin() + l * line);
            }
            ASSERT_EQ(tier->commit(), 0);
            faults->fail_nth_write(5, {FileRole::journal}); // 4 CLEAN records, then the COMMIT
            ASSERT_EQ(tier->fsync(h), 0);
            faults->clear_failures();
            faults->fail_nth_write(2, {FileRole::cache}); // the fill lands, the data does not
            const std::uint64_t cache_writes = faults->writes(FileRole::cache);
            // The cache refuses the data: the write goes home past it (CacheFileFailure.*).
            EXPECT_EQ(tier->pwrite(h, "x", 1, line + 10), 1);
            EXPECT_EQ(faults->writes(FileRole::cache) - cache_writes, 2u) << "fill, then data";
            tier->abandon();
        }
        faults->crash(seed);
        auto tier = TierCache::open(config_for(dir, nullptr));
        // Not fsynced, the 'x' may or may not survive the power cut.
        std::vector<char> with_x = expected;
        with_x[line + 10] = 'x';
        const std::vector<char> got = read_file(home);
        EXPECT_TRUE(got == expected || got == with_x)
            << "seed " << seed << ": acknowledged bytes were overwritten by recovery";
    }
}

// Reading line 4 evicts line 0, whose CLEAN record cannot be made durable, so line 4 is read from
// home and line 0's slot goes back unused. The slot must keep waiting for that record: filled with
// line 5 meanwhile (the cache file still works), a journal that lost the CLEAN record would make
// recovery write line 5's bytes over line 0's acknowledged ones.
TEST(CrashSafety, ASlotWhoseCleanRecordCouldNotBeSyncedIsNotRefilled) {
    constexpr std::size_t line = 4096;
    const std::vector<char> acked = test_support::pattern(line, 6);
    for (std::uint64_t seed = 1; seed <= 32; ++seed) {
        const std::vector<char> home =
            after_the_journal_fails(seed, acked, [](TierCache& tier, int h, const auto&) {
                std::vector<char> buffer(line);
                for (off_t l = 4; l < 6; ++l)
                    EXPECT_EQ(tier.pread(h, buffer.data(), line, l * line),
                              static_cast<ssize_t>(line));
            });
        ASSERT_EQ(home.size(), 6 * line);
        EXPECT_TRUE(std::equal(acked.begin(), acked.end(), home.begin()))
            << "seed " << seed << ": line 0 lost its acknowledged bytes";
    }
}

// The same failure, then line 0 (evicted by a read of line 4, its CLEAN record not durable) is
// written again: the cache cannot take it (its slot waits for that record), so the write goes home
// past the cache. An fsync that returns 0 must mean that recovery cannot write the slot's older
// bytes over it; as the journal cannot be synced, the fsync must fail instead.
TEST(CrashSafety, AnFsyncAfterAWritePastTheCacheCoversTheCleanRecords) {
    constexpr std::size_t line = 4096;
    const std::vector<char> first = test_support::pattern(line, 6);
    const std::vector<char> second = test_support::pattern(line, 7);
    std::uint64_t fsyncs_acknowledged = 0;
    for (std::uint64_t seed = 1; seed <= 32; ++seed) {
        bool acknowledged = false;
        const std::vector<char> home =
            after_the_journal_fails(seed, first, [&](TierCache& tier, int h, const auto&) {
                std::vector<char> buffer(line);
                EXPECT_EQ(tier.pread(h, buffer.data(), line, 4 * line), static_cast<ssize_t>(line));
                EXPECT_EQ(tier.pwrite(h, second.data(), line, 0), static_cast<ssize_t>(line));
                acknowledged = tier.fsync(h) == 0;
            });
        fsyncs_acknowledged += acknowledged;
        if (acknowledged)
            EXPECT_TRUE(std::equal(second.begin(), second.end(), home.begin()))
                << "seed " << seed << ": the acknowledged write of line 0 was overwritten";
    }
    EXPECT_EQ(fsyncs_acknowledged, 0u) << "an fsync succeeded although the journal had failed";
}

// Lines 4-7 of an 8-line file are dirty in the cache (their DIRTY records durable), and the file
// is truncated to 4 lines; the journal's device fails just after the TRUNCATE record: the truncate
// drops the lines but cannot append their CLEAN records. A write of lines 0 and 1 then needs slots.
// Had its bytes landed in the dropped ones, recovery, which still finds the four DIRTY records,
// would write them into lines 4-7. (A write beyond the truncate's length would fail: the truncate
// is unfinished.)
TEST(CrashSafety, ATruncateThatCannotRecordItsLinesCleanLeavesTheirSlotsUnused) {
    constexpr std::size_t line = 4096;
    const std::vector<char> initial = test_support::pattern(8 * line, 8);
    const std::vector<char> written = test_support::pattern(4 * line, 9);
    for (std::uint64_t seed = 1; seed <= 16; ++seed) {
        ScratchDir dir;
        const auto home = dir / "home.dat";
        test_support::write_file(home, initial);
        auto faults = std::make_shared<IoFaults>();
        const TierConfig config = four_line_config(dir, faults);
        {
            auto tier = TierCache::open(config);
            const int h = tier->open_file(home, O_RDWR);
            ASSERT_EQ(tier->pwrite(h, written.data(), written.size(), 4 * line),
                      static_cast<ssize_t>(written.size()));
            faults->fail_nth_write(2, {FileRole::journal}); // after the TRUNCATE record
            EXPECT_LT(tier->ftruncate(h, 4 * line), 0);
            // Lines 0 and 1 are written: the only slots are the dropped lines', which wait for
            // CLEAN records never appended, so the cache refuses the lines and they go home.
            const std::vector<char> other = test_support::pattern(2 * line, 10);
            EXPECT_EQ(tier->pwrite(h, other.data(), other.size(), 0),
                      static_cast<ssize_t>(other.size()));
            EXPECT_EQ(tier->stats().cache_refusals, 2u);
            tier->abandon();
        }
        faults->crash(seed);
        auto tier = TierCache::open(config_for(dir, nullptr));
        const std::vector<char> got = read_file(home);
        for (std::size_t l = 4; l < 8 && l * line < got.size(); ++l) {
            const auto at = got.begin() + static_cast<std::ptrdiff_t>(l * line);
            const auto was = initial.begin() + static_cast<std::ptrdiff_t>(l * line);
            const auto now = written.begin() + static_cast<std::ptrdiff_t>((l - 4) * line);
            const std::size_t n = std::min(line, got.size() - l * line);
            EXPECT_TRUE(std::equal(at, at + static_cast<std::ptrdiff_t>(n), was) ||
                        std::equal(at, at + static_cast<std::ptrdiff_t>(n), now))
                << "seed " << seed << ": line " << l << " holds bytes never written there";
        }
    }
}

// The journal fails (after the TRUNCATE record) with line 0 dirty, and a truncate to 0 cannot
// record it clean: its slot is set aside, and the journal still lists the slot as holding line 0's
// bytes. A later write of line 0 must not be acknowledged while that holds, as recovery would
// write the old bytes over it (before session 29 the write went home, was acknowledged, and a
// crash of the process alone undid it). Once the journal takes records again, a write and an fsync
// of line 0 survive a power cut.
TEST(CrashSafety, AWriteOfALineASlotSetAsideStillHoldsIsNeverUndoneByRecovery) {
    constexpr std::size_t line = 4096;
    const std::vector<char> old_bytes = test_support::pattern(line, 11);
    const std::vector<char> next = test_support::pattern(line, 12);
    const std::vector<char> last = test_support::pattern(line, 13);
    for (std::uint64_t seed = 0; seed <= 16; ++seed) { // seed 0: the process crashes, no power cut
        ScratchDir dir;
        const auto home = dir / "home.dat";
        test_support::write_file(home, test_support::pattern(6 * line, 10));
        auto faults = std::make_shared<IoFaults>();
        const TierConfig config = four_line_config(dir, faults);
        bool next_acknowledged = false;
        {
            auto tier = TierCache::open(config);
            const int h = tier->open_file(home, O_RDWR);
            ASSERT_EQ(tier->pwrite(h, old_bytes.data(), line, 0), static_cast<ssize_t>(line));
            faults->fail_nth_write(2, {FileRole::journal}); // after the TRUNCATE record
            EXPECT_LT(tier->ftruncate(h, 0), 0);
            next_acknowledged = tier->pwrite(h, next.data(), line, 0) == line;
            if (seed == 0) {
                tier->abandon();
            } else {
                faults->clear_failures();
                ASSERT_EQ(tier->pwrite(h, last.data(), line, 0), static_cast<ssize_t>(line));
                ASSERT_EQ(tier->fsync(h), 0);
                tier->abandon();
            }
        }
        if (seed > 0) faults->crash(seed);
        auto tier = TierCache::open(config_for(dir, nullptr));
        const std::vector<char> got = read_file(home);
        // Without an acknowledged write the file may end as the truncate left it (its record
        // reached the journal, and recovery makes the cut) or as before it.
        if (seed == 0 && !next_acknowledged && got.empty()) continue;
        ASSERT_GE(got.size(), line) << "seed " << seed;
        const std::vector<char> line0(got.begin(), got.begin() + line);
        if (seed == 0)
            EXPECT_EQ(line0, next_acknowledged ? next : old_bytes)
                << "recovery undid an acknowledged write, or wrote bytes never written there";
        else
            EXPECT_EQ(line0, last) << "seed " << seed << ": recovery undid an fsynced write";
    }
}

// Home files of 2 lines of old bytes that a truncate cut, then written and fsynced (`write`, which
// returns what the file must then hold). Recovery after a crash, of the process alone (seed 0) or
// a power cut, must keep every fsynced byte: the truncate was done on the home file long before.
// Until session 30 recovery cut the home file back to the TRUNCATE record's length in every run.
template <typename Write>
void expect_recovery_keeps_what_followed_a_truncate(const char* how, bool past_the_cache,
                                                    Write write) {
    for (std::uint64_t seed = 0; seed <= 16; ++seed) { // seed 0: the process crashes
        ScratchDir dir;
        const auto home = dir / "home.dat";
        test_support::write_file(home, test_support::pattern(2 * 4096, 3));
        auto faults = std::make_shared<IoFaults>();
        TierConfig config = config_for(dir, faults);
        if (past_the_cache) config.sequential_cutoff = 4096;
        std::vector<char> expected;
        {
            auto tier = TierCache::open(config);
            expected = write(*tier, home);
            EXPECT_EQ(tier->stats().bypassed_bytes > 0, past_the_cache);
            tier->abandon();
        }
        if (seed > 0) faults->crash(seed);
        auto tier = TierCache::open(config_for(dir, nullptr));
        EXPECT_EQ(read_file(home), expected) << how << ", seed " << seed;
    }
}

// Opened with O_TRUNC (the engine's ftruncate to 0), then 6 lines written and fsynced, through
// the cache or past it (a sequential stream over the cutoff, which appends no record at all).
TEST(CrashSafety, RecoveryNeverUndoesAnFsyncedWriteThatFollowedATruncate) {
    const std::vector<char> written = test_support::pattern(6 * 4096, 4);
    const auto truncate_and_write = [&](TierCache& tier, const std::filesystem::path& home) {
        const int h = tier.open_file(home, O_RDWR | O_TRUNC);
        EXPECT_GE(h, 0);
        EXPECT_EQ(tier.pwrite(h, written.data(), written.size(), 0),
                  static_cast<ssize_t>(written.size()));
        EXPECT_EQ(tier.fsync(h), 0);
        return written;
    };
    expect_recovery_keeps_what_followed_a_truncate("through the cache", false, truncate_and_write);
    expect_recovery_keeps_what_followed_a_truncate("past the cache", true, truncate_and_write);
}

// A dirty line cut to 100 bytes and grown again within it: the write appends no DIRTY record
// (the line is dirty) and writes nothing past the cache, so only fsync makes the truncate's
// TRUNCATE_DONE record durable.
TEST(CrashSafety, RecoveryNeverUndoesAnFsyncedGrowthOfALineATruncateCut) {
    const std::vector<char> first = test_support::pattern(4096, 5);
    const std::vector<char> grown = test_support::pattern(2000, 6);
    expect_recovery_keeps_what_followed_a_truncate(
        "within the line", false, [&](TierCache& tier, const std::filesystem::path& home) {
            const int h = tier.open_file(home, O_RDWR);
            EXPECT_EQ(tier.pwrite(h, first.data(), first.size(), 0), 4096);
            EXPECT_EQ(tier.ftruncate(h, 100), 0);
            EXPECT_EQ(tier.pwrite(h, grown.data(), grown.size(), 100), 2000);
            EXPECT_EQ(tier.fsync(h), 0);
            std::vector<char> expected(first.begin(), first.begin() + 100);
            expected.insert(expected.end(), grown.begin(), grown.end());
            return expected;
        });
}

// The journal fails just after a truncate cut the home file: its TRUNCATE record landed, its
// TRUNCATE_DONE record does not. The truncate itself succeeded; an fsync fails while the journal
// cannot take the record (recovery would cut the bytes the fsync made durable), and appends it
// once the journal works again.
TEST(CrashSafety, AnFsyncAppendsTheTruncateDoneRecordTheJournalRefusedBefore) {
    const std::vector<char> written = test_support::pattern(3 * 4096, 8);
    for (std::uint64_t seed = 0; seed <= 16; ++seed) { // seed 0: the process crashes
        ScratchDir dir;
        const auto home = dir / "home.dat";
        test_support::write_file(home, test_support::pattern(2 * 4096, 3));
        auto faults = std::make_shared<IoFaults>();
        {
            auto tier = TierCache::open(config_for(dir, faults));
            const int h = tier->open_file(home, O_RDWR);
            faults->fail_nth_write(2, {FileRole::journal}); // TRUNCATE, then TRUNCATE_DONE
            EXPECT_EQ(tier->ftruncate(h, 0), 0);
            EXPECT_EQ(tier->pwrite(h, written.data(), written.size(), 0),
                      static_cast<ssize_t>(written.size()));
            EXPECT_EQ(tier->fsync(h), -EIO);
            faults->clear_failures();
            EXPECT_EQ(tier->fsync(h), 0);
            tier->abandon();
        }
        if (seed > 0) faults->crash(seed);
        auto tier = TierCache::open(config_for(dir, nullptr));
        EXPECT_EQ(read_file(home), written) << "seed " << seed;
    }
}

// The journal fails while line 0, dirty, ends the file at 100 bytes; a write grows the file within
// the line, and the journal cannot take its SIZE record. Recovery writes a dirty line home only up
// to its file's journaled size, so the write goes home as well: it succeeds (before session 30 it
// failed with EIO, its bytes in the cache all the same), and a crash of the process keeps it.
TEST(CrashSafety, AWriteThatGrowsADirtyLineTheJournalCannotSizeGoesHomeToo) {
    ScratchDir dir;
    const auto home = dir / "home.dat";
    auto faults = std::make_shared<IoFaults>();
    const std::vector<char> first = test_support::pattern(100, 1);
    const std::vector<char> grown = test_support::pattern(300, 2);
    std::vector<char> expected = first;
    expected.insert(expected.end(), grown.begin(), grown.end());
    {
        auto tier = TierCache::open(four_line_config(dir, faults));
        const int h = tier->open_file(home, O_RDWR | O_CREAT);
        ASSERT_EQ(tier->pwrite(h, first.data(), first.size(), 0), 100);
        faults->fail_now({FileRole::journal});
        EXPECT_EQ(tier->pwrite(h, grown.data(), grown.size(), 100), 300);
        EXPECT_EQ(tier->file_size(h), 400);
        std::vector<char> back(400);
        EXPECT_EQ(tier->pread(h, back.data(), back.size(), 0), 400);
        EXPECT_EQ(back, expected);
        const std::vector<char> at_home = read_file(home);
        ASSERT_EQ(at_home.size(), 400u);
        EXPECT_EQ(test_support::slice(at_home, 100, 300), grown);
        tier->abandon();
    }
    faults->clear_failures();
    auto tier = TierCache::open(config_for(dir, nullptr));
    EXPECT_EQ(read_file(home), expected);
}

TEST(CrashSafety, TornJournalTailIsIgnored) {
    ScratchDir dir;
    {
        auto tier = TierCache::open(config_for(dir, nullptr));
        const int h = tier->open_file(dir / "x.dat", O_RDWR | O_CREAT);
        ASSERT_EQ(tier->pwrite(h, "abc", 3, 0), 3);
        tier->abandon();
    }
    // Half a record at the end, as a crash in the middle of an append leaves it.
    const auto journal = (dir / "cache.tier").string() + ".journal";
    auto bytes = read_file(journal);
    bytes.insert(bytes.end(), {'\x12', '\x34', '\x56', '\x03', '\x00'});
    test_support::write_file(journal, bytes);
    auto tier = TierCache::open(config_for(dir, nullptr));
    EXPECT_TRUE(tier->recovery().torn_tail);
    EXPECT_EQ(tier->recovery().lines_written_home, 1u);
    EXPECT_EQ(read_file(dir / "x.dat"), std::vector<char>({'a', 'b', 'c'}));
}

} // namespace
} // namespace iosig::tier
