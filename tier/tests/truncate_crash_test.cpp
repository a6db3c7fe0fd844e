// A truncate that fails half-way: the engine has cut the file (its lines beyond the new end are
// dropped, reads end there) but the home file may still hold the cut bytes. The cut is finished
// before anything could make those bytes the file's again: an fsync, a close, a write beyond the
// cut and a truncate that grows the file make it first and fail while they cannot; a journal
// rewrite keeps its TRUNCATE record, so that recovery makes it after a crash. A truncate whose
// TRUNCATE record the journal refuses fails before it starts, and changes nothing.
#include "crash_config.hpp"
#include "engine_fixture.hpp"
#include "failing_device.hpp"

#include <chrono>
#include <gtest/gtest.h>
#include <thread>

namespace iosig::tier {
namespace {

using test_support::config_for;
using test_support::four_line_config;
using test_support::pattern;
using test_support::read_file;
using test_support::ScratchDir;
using test_support::slice;

constexpr std::size_t line = 4096;
constexpr std::size_t cut = 2 * line + 100; // inside line 2

// A 6-line home file (`initial`), through a 4-line cache: line 2 is read (so the cut falls in a
// cached line, whose bytes beyond the cut the truncate zeroes in the cache file) and line 4 is
// written with `written` (dirty: the truncate drops it). Then the truncate to `cut` fails at the
// device `failing`, which works again afterwards.
struct FailedTruncate {
    // `rewrite_past`: a journal rewritten past so many bytes, and a flusher writing lines back
    // after a millisecond (else nothing goes home unless a test asks).
    explicit FailedTruncate(FileRole failing, std::uint64_t rewrite_past = 0) {
        test_support::write_file(home, initial);
        TierConfig config = four_line_config(dir, faults);
        if (rewrite_past > 0) {
            config.journal_compaction_bytes = rewrite_past;
            config.writeback_delay = 0.001;
        }
        tier = TierCache::open(config);
        h = tier->open_file(home, O_RDWR);
        std::vector<char> buffer(line);
        EXPECT_EQ(tier->pread(h, buffer.data(), line, 2 * line), static_cast<ssize_t>(line));
        EXPECT_EQ(tier->pwrite(h, written.data(), line, 4 * line), static_cast<ssize_t>(line));
        faults->fail_now({failing});
        EXPECT_EQ(tier->ftruncate(h, cut), -EIO);
        faults->clear_failures();
    }
    // Lines 0 and 1, below the cut, written and written back by the flusher (neither makes the
    // cut) again and again until the journal (DIRTY, CLEAN and COMMIT records) was rewritten
    // twice; returns those two lines' bytes. Needs `rewrite_past`.
    std::vector<char> rewrite_the_journal_twice() {
        const std::vector<char> two = pattern(2 * line, 4);
        for (int round = 0; round < 200 && tier->stats().journal_rewrites < 2; ++round) {
            EXPECT_EQ(tier->pwrite(h, two.data(), two.size(), 0), static_cast<ssize_t>(two.size()));
            for (int wait = 0; wait < 1000 && tier->stats().dirty_lines > 0; ++wait)
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        EXPECT_GE(tier->stats().journal_rewrites, 2u);
        return two;
    }
    // The home file after a crash (the process's when `seed` is 0, else a power cut) and
    // recovery.
    std::vector<char> after_a_crash(std::uint64_t seed) {
        tier->abandon();
        tier.reset();
        if (seed > 0) faults->crash(seed);
        auto recovered = TierCache::open(config_for(dir, nullptr));
        return read_file(home);
    }

    ScratchDir dir;
    std::filesystem::path home = dir / "home.dat";
    std::vector<char> initial = pattern(6 * line, 1);
    std::vector<char> written = pattern(line, 2);
    std::shared_ptr<IoFaults> faults = std::make_shared<IoFaults>();
    std::unique_ptr<TierCache> tier;
    int h = -1;
};

std::vector<char> prefix(const std::vector<char>& v, std::size_t n) {
    return slice(v, 0, n);
}

// The cache file refused the zeros beyond the cut in line 2, so the home file was never cut. The
// fsync cuts it before it succeeds: before session 31 it succeeded with the home file whole, and
// line 4 there held its bytes from before the write the truncate dropped, which a crash kept.
TEST(TruncateCrash, AnFsyncAfterATruncateTheCacheFileRefusedCutsTheHomeFileFirst) {
    for (std::uint64_t seed = 0; seed <= 8; ++seed) {
        FailedTruncate t(FileRole::cache);
        EXPECT_EQ(read_file(t.home).size(), t.initial.size()) << "the home file was cut";
        EXPECT_EQ(t.tier->fsync(t.h), 0);
        EXPECT_EQ(read_file(t.home), prefix(t.initial, cut));
        EXPECT_EQ(t.after_a_crash(seed), prefix(t.initial, cut)) << "seed " << seed;
    }
}

// The home device refused the cut. While it still does, an fsync fails; once it works, the fsync
// cuts the home file.
TEST(TruncateCrash, AnFsyncFailsWhileTheHomeFileCannotBeCut) {
    FailedTruncate t(FileRole::home);
    t.faults->fail_now({FileRole::home});
    EXPECT_EQ(t.tier->fsync(t.h), -EIO);
    t.faults->clear_failures();
    EXPECT_EQ(t.tier->fsync(t.h), 0);
    EXPECT_EQ(read_file(t.home), prefix(t.initial, cut));
}

// A close makes the cut too: the home file ends where the file does for whoever opens it next.
TEST(TruncateCrash, ACloseCutsTheHomeFile) {
    FailedTruncate t(FileRole::home);
    EXPECT_EQ(t.tier->close(t.h), 0);
    EXPECT_EQ(read_file(t.home), prefix(t.initial, cut));
}

// A write beyond the cut (line 5) would put bytes home beyond it: the cut is made first, so the
// bytes between the cut and the write read zeros at home too, through crashes. While the home
// device refuses, the write fails.
TEST(TruncateCrash, AWriteBeyondTheCutMakesItFirst) {
    const std::vector<char> fifth = pattern(line, 3);
    std::vector<char> expected = prefix(pattern(6 * line, 1), cut);
    expected.resize(5 * line, 0);
    expected.insert(expected.end(), fifth.begin(), fifth.end());
    for (std::uint64_t seed = 0; seed <= 8; ++seed) {
        FailedTruncate t(FileRole::home);
        t.faults->fail_now({FileRole::home});
        EXPECT_EQ(t.tier->pwrite(t.h, fifth.data(), line, 5 * line), -EIO);
        EXPECT_EQ(t.tier->append(t.h, fifth.data(), line), -EIO);
        t.faults->clear_failures();
        ASSERT_EQ(t.tier->pwrite(t.h, fifth.data(), line, 5 * line), static_cast<ssize_t>(line));
        std::vector<char> back(6 * line);
        EXPECT_EQ(t.tier->pread(t.h, back.data(), back.size(), 0), static_cast<ssize_t>(6 * line));
        EXPECT_EQ(back, expected);
        ASSERT_EQ(t.tier->fsync(t.h), 0);
        EXPECT_EQ(read_file(t.home), expected);
        EXPECT_EQ(t.after_a_crash(seed), expected) << "seed " << seed;
    }
}

// The journal refuses one record, the CLEAN record of line 4, which a truncate to 4 lines drops
// (dirty): the truncate is unfinished until the journal takes it, even though its other steps
// worked. Else the journal would still list the slot as holding line 4's old bytes, and a write of
// line 4 made while the journal fails again (it goes home past the cache) would be undone by
// recovery. So that write fails, and once the journal works the write makes the cut, and it and an
// fsync survive a crash of the process and power cuts.
TEST(TruncateCrash, ATruncateIsUnfinishedUntilEveryLineItDroppedIsRecordedClean) {
    const std::vector<char> old_line = pattern(line, 6);
    const std::vector<char> new_line = pattern(line, 7);
    std::vector<char> expected = prefix(pattern(6 * line, 1), 4 * line);
    expected.insert(expected.end(), new_line.begin(), new_line.end());
    for (std::uint64_t seed = 0; seed <= 8; ++seed) {
        ScratchDir dir;
        const auto home = dir / "home.dat";
        test_support::write_file(home, pattern(6 * line, 1));
        auto faults = std::make_shared<IoFaults>();
        {
            auto tier = TierCache::open(four_line_config(dir, faults));
            const int h = tier->open_file(home, O_RDWR);
            ASSERT_EQ(tier->pwrite(h, old_line.data(), line, 4 * line), static_cast<ssize_t>(line));
            faults->fail_one_write(2, {FileRole::journal}); // the CLEAN record, after TRUNCATE
            EXPECT_EQ(tier->ftruncate(h, 4 * line), -EIO);
            faults->fail_now({FileRole::journal});
            EXPECT_EQ(tier->pwrite(h, new_line.data(), line, 4 * line), -EIO);
            faults->clear_failures();
            ASSERT_EQ(tier->pwrite(h, new_line.data(), line, 4 * line), static_cast<ssize_t>(line));
            ASSERT_EQ(tier->fsync(h), 0);
            tier->abandon();
        }
        if (seed > 0) faults->crash(seed);
        auto tier = TierCache::open(config_for(dir, nullptr));
        EXPECT_TRUE(read_file(home) == expected) << "seed " << seed;
    }
}

// An append starts at the cut, which it makes first (the cut bytes beyond the append's end would
// otherwise stay at home).
TEST(TruncateCrash, AnAppendMakesItFirst) {
    const std::vector<char> record = pattern(100, 3);
    std::vector<char> expected = prefix(pattern(6 * line, 1), cut);
    expected.insert(expected.end(), record.begin(), record.end());
    for (std::uint64_t seed = 0; seed <= 8; ++seed) {
        FailedTruncate t(FileRole::home);
        ASSERT_EQ(t.tier->append(t.h, record.data(), record.size()),
                  static_cast<ssize_t>(record.size()));
        EXPECT_EQ(read_file(t.home).size(), cut) << "the append did not cut the home file first";
        ASSERT_EQ(t.tier->fsync(t.h), 0);
        EXPECT_EQ(read_file(t.home), expected);
        EXPECT_EQ(t.after_a_crash(seed), expected) << "seed " << seed;
    }
}

// A truncate that grows the file past an unfinished cut makes that cut first: the bytes between
// the two lengths are zeros at home, not the old ones.
TEST(TruncateCrash, ATruncateThatGrowsTheFileMakesItFirst) {
    FailedTruncate t(FileRole::home);
    ASSERT_EQ(t.tier->ftruncate(t.h, 6 * line), 0);
    ASSERT_EQ(t.tier->fsync(t.h), 0);
    std::vector<char> expected = prefix(t.initial, cut);
    expected.resize(6 * line, 0);
    EXPECT_EQ(read_file(t.home), expected);
}

// The journal is rewritten (past 1 KiB) while the cut is unfinished: the rewrite keeps its
// TRUNCATE record, so recovery after a crash still cuts the home file. Without it the home file
// kept its whole line 4 from before the write the truncate dropped.
TEST(TruncateCrash, AJournalRewriteKeepsTheTruncateRecord) {
    for (std::uint64_t seed = 0; seed <= 8; ++seed) {
        FailedTruncate t(FileRole::home, 1024);
        const std::vector<char> two = t.rewrite_the_journal_twice();
        EXPECT_EQ(read_file(t.home).size(), t.initial.size()) << "the home file was cut";
        std::vector<char> expected = prefix(t.initial, cut);
        std::copy(two.begin(), two.end(), expected.begin());
        const std::vector<char> got = t.after_a_crash(seed);
        EXPECT_EQ(got.size(), cut) << "seed " << seed << ": recovery did not cut the home file";
        EXPECT_TRUE(prefix(got, std::min(cut, got.size())) ==
                    prefix(expected, std::min(cut, got.size())))
            << "seed " << seed;
    }
}

// The journal refuses the TRUNCATE record: the truncate fails and changes nothing. The file keeps
// its length and line 4's write, in the engine and, after a crash of the process (seed 0:
// recovery writes line 4 home) or an fsync and a power cut, at home. Before session 32 the
// truncate dropped the lines first: reads ended at the cut and an fsync made it.
TEST(TruncateCrash, ATruncateTheJournalCannotRecordChangesNothing) {
    std::vector<char> expected = pattern(6 * line, 1);
    const std::vector<char> written = pattern(line, 2);
    std::copy(written.begin(), written.end(), expected.begin() + 4 * line);
    for (std::uint64_t seed = 0; seed <= 8; ++seed) {
        FailedTruncate t(FileRole::journal);
        std::vector<char> back(6 * line);
        EXPECT_EQ(t.tier->pread(t.h, back.data(), back.size(), 0), static_cast<ssize_t>(6 * line));
        EXPECT_EQ(back, expected);
        if (seed > 0) ASSERT_EQ(t.tier->fsync(t.h), 0);
        EXPECT_EQ(read_file(t.home), seed > 0 ? expected : t.initial);
        EXPECT_EQ(t.after_a_crash(seed), expected) << "seed " << seed;
    }
}

// Nor does a rewrite of the journal make the refused truncate: it holds no TRUNCATE record for it,
// and recovery leaves the home file whole.
TEST(TruncateCrash, AJournalRewriteDoesNotMakeATruncateTheJournalRefused) {
    for (std::uint64_t seed = 0; seed <= 8; ++seed) {
        FailedTruncate t(FileRole::journal, 1024);
        const std::vector<char> two = t.rewrite_the_journal_twice();
        std::vector<char> expected = t.initial;
        std::copy(two.begin(), two.end(), expected.begin());
        std::copy(t.written.begin(), t.written.end(), expected.begin() + 4 * line);
        ASSERT_EQ(t.tier->fsync(t.h), 0);
        EXPECT_EQ(t.after_a_crash(seed), expected) << "seed " << seed;
    }
}

} // namespace
} // namespace iosig::tier
namespace iosig::tier {
namespace {

// Line 0 is written whole, committed and fsynced; the file is cut to 100 bytes (the truncate
// zeroes the rest of line 0 in the cache file) and fsynced; then 10 bytes are written at 200, and
// committed. The power is cut. The cut is acknowledged, so bytes 100-199 must read zeros (or the
// file end before them): had the truncate's zeros not been synced before its TRUNCATE record, the
// slot could lose them and recovery, trusting line 0's committed DIRTY record, would write line
// 0's old bytes there.
TEST(TruncateCrash, TheZerosBeyondTheCutInItsLineAreDurableBeforeTheCut) {
    const std::vector<char> whole = pattern(line, 5);
    const std::vector<char> ten(10, 't');
    for (std::uint64_t seed = 1; seed <= 16; ++seed) {
        ScratchDir dir;
        const auto home = dir / "home.dat";
        auto faults = std::make_shared<IoFaults>();
        {
            auto tier = TierCache::open(four_line_config(dir, faults));
            const int h = tier->open_file(home, O_RDWR | O_CREAT);
            ASSERT_EQ(tier->pwrite(h, whole.data(), line, 0), static_cast<ssize_t>(line));
            ASSERT_EQ(tier->commit(), 0);
            ASSERT_EQ(tier->fsync(h), 0);
            ASSERT_EQ(tier->ftruncate(h, 100), 0);
            ASSERT_EQ(tier->fsync(h), 0);
            ASSERT_EQ(tier->pwrite(h, ten.data(), ten.size(), 200), 10);
            ASSERT_EQ(tier->commit(), 0);
            tier->abandon();
        }
        faults->crash(seed);
        auto tier = TierCache::open(config_for(dir, nullptr));
        const std::vector<char> got = read_file(home);
        ASSERT_GE(got.size(), 100u);
        EXPECT_EQ(prefix(got, 100), prefix(whole, 100)) << "seed " << seed;
        for (std::size_t b = 100; b < std::min<std::size_t>(got.size(), 200); ++b)
            ASSERT_EQ(got[b], 0) << "seed " << seed << ": byte " << b << " is a cut byte";
    }
}

} // namespace
} // namespace iosig::tier
