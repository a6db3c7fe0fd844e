// The journal's rewrite (compaction): when the journal has grown past
// TierConfig::journal_compaction_bytes, the flusher replaces it by one that lists only the lines
// still dirty. A rewrite must keep every dirty line (a crash after it still brings them home), and
// a journal that is large because many lines stay dirty must not be rewritten again at every
// flusher pass: only once it has doubled since the last rewrite.
#include "engine_fixture.hpp"

#include <chrono>
#include <gtest/gtest.h>
#include <thread>

namespace iosig::tier {
namespace {

using test_support::pattern;
using test_support::read_file;
using test_support::ScratchDir;
using test_support::write_file;

constexpr std::size_t line = 4096;
constexpr std::size_t dirty_lines = 16;

TierConfig small_journal_config(const ScratchDir& dir, std::shared_ptr<IoFaults> faults) {
    TierConfig c;
    c.cache_file = dir / "cache.tier";
    c.line_size = line;
    c.cache_size = 64 * line;
    c.max_dirty_lines = 64; // no pressure: the lines stay until they are ripe
    c.writeback_delay = 0.02;
    c.policy = "lru";
    c.sequential_cutoff = 0;
    c.journal_compaction_bytes = 256; // 16 DIRTY records are about 600 bytes
    c.faults = std::move(faults);
    return c;
}

TEST(JournalRewrite, LinesThatCannotGoHomeAreKeptAndTheJournalIsNotRewrittenAtEveryPass) {
    ScratchDir dir;
    const auto home = dir / "home.dat";
    write_file(home, std::vector<char>(dirty_lines * line, 0)); // no write needed to extend it
    const std::vector<char> data = pattern(dirty_lines * line, 7);
    auto faults = std::make_shared<IoFaults>();
    faults->fail_nth_write(1, {FileRole::home}); // the home device is gone: no write-back succeeds
    {
        auto tier = TierCache::open(small_journal_config(dir, faults));
        const int h = tier->open_file(home, O_RDWR);
        ASSERT_GE(h, 0);
        for (std::size_t i = 0; i < dirty_lines; ++i)
            ASSERT_EQ(tier->pwrite(h, data.data() + i * line, line, static_cast<off_t>(i * line)),
                      static_cast<ssize_t>(line));
        // The flusher passes every 10 ms; its write-backs fail, so the lines stay dirty and the
        // journal, once rewritten, no longer grows.
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        const TierStats settled = tier->stats();
        EXPECT_GE(settled.journal_rewrites, 1u) << "the journal passed 256 bytes";
        EXPECT_EQ(settled.dirty_lines, dirty_lines);
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        EXPECT_EQ(tier->stats().journal_rewrites, settled.journal_rewrites)
            << "a journal that has not grown since its rewrite is not rewritten again";
        tier->abandon(); // the crash, with every line still dirty
    }
    faults->clear_failures();
    auto tier = TierCache::open(small_journal_config(dir, nullptr));
    EXPECT_EQ(tier->recovery().lines_written_home, dirty_lines)
        << "the rewritten journal must still list every dirty line";
    EXPECT_EQ(read_file(home), data);
}

// The engine's lock is not held while the new journal is written: lines keep being written, and
// their DIRTY records go to the old journal and to the rewrite's tail, which follows the listed
// lines into the new journal. Journal writes take 3 ms, so a rewrite lasts a few of them while the
// writer appends one record after another. A crash after the last write must find every line.
TEST(JournalRewrite, LinesWrittenDuringARewriteAreInTheRewrittenJournal) {
    constexpr std::size_t lines = 60;
    ScratchDir dir;
    const auto home = dir / "home.dat";
    write_file(home, std::vector<char>(lines * line, 0));
    const std::vector<char> data = pattern(lines * line, 9);
    auto faults = std::make_shared<IoFaults>();
    faults->fail_nth_write(1, {FileRole::home}); // the lines stay dirty
    faults->slow_down(FileRole::journal, std::chrono::microseconds(3000));
    {
        auto tier = TierCache::open(small_journal_config(dir, faults));
        const int h = tier->open_file(home, O_RDWR);
        ASSERT_GE(h, 0);
        for (std::size_t i = 0; i < lines; ++i)
            ASSERT_EQ(tier->pwrite(h, data.data() + i * line, line, static_cast<off_t>(i * line)),
                      static_cast<ssize_t>(line));
        EXPECT_GE(tier->stats().journal_rewrites, 1u) << "the journal passed 256 bytes";
        tier->abandon();
    }
    faults->clear_failures();
    auto tier = TierCache::open(small_journal_config(dir, nullptr));
    EXPECT_EQ(tier->recovery().lines_written_home, lines);
    EXPECT_EQ(read_file(home), data);
}

TEST(JournalRewrite, AGrowingJournalIsRewrittenAgainOnceItHasDoubled) {
    ScratchDir dir;
    const auto home = dir / "home.dat";
    auto config = small_journal_config(dir, nullptr);
    config.writeback_delay = 0.001; // lines go home at once: every line adds DIRTY and CLEAN
    auto tier = TierCache::open(config);
    const int h = tier->open_file(home, O_RDWR | O_CREAT);
    ASSERT_GE(h, 0);
    const std::vector<char> data = pattern(line, 3);
    // 40 dirty periods, each a DIRTY and a CLEAN record (~44 bytes), several times 256 bytes; the
    // flusher, which rewrites the journal at the end of its passes, passes every 5 ms.
    for (int round = 0; round < 40; ++round) {
        const auto at = static_cast<off_t>((round % 32) * line);
        ASSERT_EQ(tier->pwrite(h, data.data(), line, at), static_cast<ssize_t>(line));
        ASSERT_EQ(tier->fsync(h), 0);
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_GE(tier->stats().journal_rewrites, 3u);
    EXPECT_GT(tier->stats().longest_journal_rewrite_seconds, 0.0);
    EXPECT_LT(std::filesystem::file_size(config.cache_file.string() + ".journal"), 1024u)
        << "the journal is kept small";
}

} // namespace
} // namespace iosig::tier
