// What recovery trusts after a power cut. A DIRTY record is appended, not synced, when a line
// first turns dirty (Engine::mark_dirty): after a crash of the process it is backed by the line's
// bytes in the cache file's pages, but after a power cut the slot's durable bytes may still be the
// previous line's. So recovery compares the page cache the journal was written under (its header,
// page_cache_instance) with its own, and after a power cut writes home only the lines whose DIRTY
// record a COMMIT covers: one appended after the cache file was synced (Engine::commit_journal,
// TierCache::commit, and after every write-back).
#include "engine/journal.hpp"
#include "engine/journal_format.hpp"
#include "engine/page_cache_instance.hpp"
#include "engine_fixture.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>

namespace iosig::tier::detail {
namespace {

using test_support::ScratchDir;

TEST(JournalCommit, ACommitCoversTheRecordsBeforeItsPointAndNoneAfter) {
    ScratchDir dir;
    Journal journal(dir / "cache.journal", nullptr);
    ASSERT_EQ(journal.reset(4096, 8), 0);
    ASSERT_GT(journal.append_dirty(0, 1, 10, 4096), 0);
    const CommitPoint point = journal.commit_point();   // then the cache file is synced
    ASSERT_GT(journal.append_dirty(1, 1, 11, 8192), 0); // after the point: not covered
    ASSERT_GT(journal.append_commit(point), 0);
    ASSERT_GT(journal.append_dirty(2, 1, 12, 12288), 0); // after the COMMIT
    JournalState state = journal.replay();
    ASSERT_EQ(state.dirty.size(), 3u);
    EXPECT_EQ(state.drop_uncommitted(), 2u);
    ASSERT_EQ(state.dirty.size(), 1u);
    EXPECT_EQ(state.dirty.begin()->first, 0u);
    EXPECT_EQ(state.dirty.begin()->second.line, 10u);
}

TEST(JournalCommit, NothingNewNeedsNoCommit) {
    ScratchDir dir;
    Journal journal(dir / "cache.journal", nullptr);
    ASSERT_EQ(journal.reset(4096, 8), 0);
    EXPECT_TRUE(journal.commit_point().nothing_new) << "a header alone";
    ASSERT_GT(journal.append_dirty(0, 1, 10, 4096), 0);
    const CommitPoint point = journal.commit_point();
    EXPECT_FALSE(point.nothing_new);
    ASSERT_GT(journal.append_commit(point), 0);
    EXPECT_TRUE(journal.commit_point().nothing_new) << "the COMMIT record needs none";
    EXPECT_EQ(journal.append_commit(point), 0) << "the same point twice";
}

// A COMMIT appended while the journal is being rewritten names an offset in the old file. Copied
// into the new one with the other records appended meanwhile, it covered records appended after
// the rewrite, which no sync of the cache file had backed (found by the crash sweeps across
// rewrites, session 30). The rewritten file ends in a COMMIT of its own instead.
TEST(JournalCommit, ACommitDuringARewriteDoesNotCoverWhatFollowsTheRewrite) {
    ScratchDir dir;
    Journal journal(dir / "cache.journal", nullptr);
    ASSERT_EQ(journal.reset(4096, 64), 0);
    for (std::uint32_t slot = 0; slot < 40; ++slot)
        ASSERT_GT(journal.append_clean(slot), 0); // an old file much longer than the new one
    ASSERT_GT(journal.append_dirty(0, 1, 10, 4096), 0);
    journal.begin_rewrite();
    const CommitPoint point = journal.commit_point();
    ASSERT_GT(journal.append_commit(point), 0);
    double held = 0;
    ASSERT_EQ(journal.finish_rewrite({{0, DirtyRecord{1, 10, 0, {}}}}, [] { return 0; }, held), 0);
    ASSERT_GT(journal.append_dirty(1, 1, 11, 8192), 0); // after the rewrite, uncommitted
    JournalState state = journal.replay();
    ASSERT_EQ(state.dirty.size(), 2u);
    EXPECT_EQ(state.drop_uncommitted(), 1u);
    ASSERT_EQ(state.dirty.size(), 1u);
    EXPECT_EQ(state.dirty.begin()->second.line, 10u) << "the rewrite's own COMMIT covers line 10";
}

// A journal of version 1 synced every DIRTY record after its line's data: all are trusted.
TEST(JournalCommit, AVersionOneJournalIsTrustedWhole) {
    ScratchDir dir;
    using namespace journal_format;
    std::vector<char> bytes;
    const HeaderPayloadV1 h{magic, 4096, 8, 1};
    encode_record(bytes, header, &h, sizeof h);
    const DirtyPayload d{3, 1, 7, 4096 * 8};
    encode_record(bytes, dirty, &d, sizeof d);
    test_support::write_file(dir / "cache.journal", bytes);
    Journal journal(dir / "cache.journal", nullptr);
    JournalState state = journal.replay();
    ASSERT_TRUE(state.valid);
    EXPECT_EQ(state.page_cache, 0u);
    EXPECT_EQ(state.drop_uncommitted(), 0u);
    EXPECT_EQ(state.dirty.size(), 1u);
}

TEST(JournalCommit, ThePageCacheIsTheSameUntilAPowerCut) {
    ScratchDir dir;
    const std::uint64_t before = page_cache_instance(dir.path());
    EXPECT_NE(before, 0u) << "this machine has /proc/sys/kernel/random/boot_id";
    EXPECT_EQ(page_cache_instance(dir.path()), before);
    IoFaults().crash(1);
    EXPECT_NE(page_cache_instance(dir.path()), before);
}

// The engine: lines 0 and 1 are written and committed, line 2 after the commit; none goes home
// (no write-back within the test). After a crash of the process all three are recovered; after a
// power cut only the committed two, and the report says why.
struct RecoveredLines {
    RecoveryReport report;
    std::vector<char> home;
};

RecoveredLines recover_after(bool power_cut, const std::vector<char>& data) {
    ScratchDir dir;
    const auto home = dir / "home.dat";
    TierConfig config = test_support::small_config(dir);
    config.faults = std::make_shared<IoFaults>();
    {
        auto tier = TierCache::open(config);
        const int h = tier->open_file(home, O_RDWR | O_CREAT);
        EXPECT_EQ(tier->pwrite(h, data.data(), 2 * 4096, 0), 2 * 4096);
        EXPECT_EQ(tier->commit(), 0);
        EXPECT_EQ(tier->pwrite(h, data.data() + 2 * 4096, 4096, 2 * 4096), 4096);
        tier->abandon();
    }
    // A power cut in which every write had reached the disk: a crash of an IoFaults that wrote
    // nothing (the engine's would lose a random part of what was not synced).
    if (power_cut) IoFaults().crash(0);
    auto tier = TierCache::open(test_support::small_config(dir));
    return {tier->recovery(), test_support::read_file(home)};
}

TEST(JournalCommit, AfterAProcessCrashEveryDirtyLineIsRecovered) {
    const std::vector<char> data = test_support::pattern(3 * 4096, 9);
    const RecoveredLines r = recover_after(false, data);
    EXPECT_FALSE(r.report.power_cut);
    EXPECT_EQ(r.report.lines_written_home, 3u);
    EXPECT_EQ(r.report.uncommitted_lines, 0u);
    EXPECT_EQ(r.home, data);
}

TEST(JournalCommit, AfterAPowerCutOnlyCommittedLinesAreRecovered) {
    const std::vector<char> data = test_support::pattern(3 * 4096, 9);
    const RecoveredLines r = recover_after(true, data);
    EXPECT_TRUE(r.report.power_cut);
    EXPECT_EQ(r.report.dirty_lines, 3u);
    EXPECT_EQ(r.report.uncommitted_lines, 1u);
    EXPECT_EQ(r.report.lines_written_home, 2u);
    EXPECT_EQ(r.home, std::vector<char>(data.begin(), data.begin() + 2 * 4096));
}

// Every write-back commits the records appended before it, so that a power cut loses at most the
// writes of about a write-back delay that no fsync covered: an fsync of another file commits
// this one's lines, which stay dirty, and a power cut then brings them home.
TEST(JournalCommit, AWriteBackCommitsTheDirtyLinesOfOtherFilesToo) {
    ScratchDir dir;
    const std::vector<char> data = test_support::pattern(2 * 4096, 10);
    {
        auto tier = TierCache::open(test_support::small_config(dir));
        const int a = tier->open_file(dir / "a.dat", O_RDWR | O_CREAT);
        const int b = tier->open_file(dir / "b.dat", O_RDWR | O_CREAT);
        ASSERT_EQ(tier->pwrite(a, data.data(), data.size(), 0), 2 * 4096);
        ASSERT_EQ(tier->pwrite(b, "b", 1, 0), 1);
        ASSERT_EQ(tier->fsync(b), 0);
        EXPECT_EQ(tier->stats().dirty_lines, 2u) << "a's lines are not home";
        tier->abandon();
    }
    IoFaults().crash(0);
    auto tier = TierCache::open(test_support::small_config(dir));
    EXPECT_TRUE(tier->recovery().power_cut);
    EXPECT_EQ(tier->recovery().uncommitted_lines, 0u);
    EXPECT_EQ(test_support::read_file(dir / "a.dat"), data);
}

} // namespace
} // namespace iosig::tier::detail
