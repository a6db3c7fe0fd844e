// The journal's group commit (src/engine/journal.hpp): sync_to(n) makes every record up to n
// durable, and fails for a record that was never appended (Journal::never_appended, which the
// engine keeps for a slot whose CLEAN record could not be written: its next line must not fill it).
// And which of the engine's calls sync it.
#include "engine/journal.hpp"
#include "engine_fixture.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>

namespace iosig::tier::detail {
namespace {

TEST(JournalSync, ARecordAppendedIsDurableOnceSyncedTo) {
    test_support::ScratchDir dir;
    Journal journal(dir / "cache.journal", nullptr);
    ASSERT_EQ(journal.reset(4096, 4), 0);
    const std::int64_t record = journal.append_clean(2);
    ASSERT_GT(record, 0);
    int before_calls = 0;
    EXPECT_EQ(journal.sync_to(record, [&] { return ++before_calls, 0; }), 0);
    EXPECT_EQ(before_calls, 1);
    EXPECT_EQ(journal.sync_to(record, [&] { return ++before_calls, 0; }), 0);
    EXPECT_EQ(before_calls, 1) << "already durable: no second sync";
}

// ... and fails at once, without syncing anything: a slot that waits for such a record is offered
// to every miss until the engine is reopened.
TEST(JournalSync, ARecordNeverAppendedCanNeverBeWaitedFor) {
    test_support::ScratchDir dir;
    Journal journal(dir / "cache.journal", nullptr);
    ASSERT_EQ(journal.reset(4096, 4), 0);
    ASSERT_GT(journal.append_clean(1), 0);
    int before_calls = 0;
    const auto count_before = [&] { return ++before_calls, 0; };
    EXPECT_EQ(journal.sync_to(Journal::never_appended, count_before), -EIO);
    EXPECT_EQ(before_calls, 0) << "synced the cache file for a record that cannot be waited for";
    EXPECT_EQ(journal.sync_to(journal.appended()), 0);
    EXPECT_EQ(journal.sync_to(Journal::never_appended), -EIO) << "not even after a sync";
}

// The syncs writes cost, counted at the device (IoFaults::syncs; on real hardware each is a flush
// of the device's cache). A write syncs nothing, neither a line's first (its DIRTY record) nor an
// append to a line already dirty (a SIZE record). A commit (TierCache::commit, and the engine's
// after each write-back) syncs the cache file, then the journal, once for all records so far.
// Before session 30 every DIRTY and SIZE record cost both: 148 us per 128-byte append and 314 us
// per 4 KiB write to a clean line, with the cache on this machine's ext4 disk
// (bench/tier/file_ops_bench.cpp, "writes with the cache on disk").
TEST(JournalSync, WritesSyncNothingUntilACommit) {
    test_support::ScratchDir dir;
    TierConfig config = test_support::small_config(dir);
    config.faults = std::make_shared<IoFaults>();
    const auto& faults = *config.faults;
    auto tier = TierCache::open(config);
    const int h = tier->open_file(dir / "log.dat", O_RDWR | O_CREAT);
    ASSERT_GE(h, 0);
    const std::vector<char> log = test_support::pattern(3 * 4096, 3);
    const std::uint64_t journal_before = faults.syncs(FileRole::journal);
    const std::uint64_t cache_before = faults.syncs(FileRole::cache);
    for (off_t at = 0; at < 3 * 4096; at += 128) // 3 lines, 32 appends each
        ASSERT_EQ(tier->pwrite(h, log.data() + at, 128, at), 128);
    EXPECT_EQ(faults.syncs(FileRole::journal), journal_before);
    EXPECT_EQ(faults.syncs(FileRole::cache), cache_before);
    EXPECT_EQ(tier->commit(), 0);
    EXPECT_EQ(faults.syncs(FileRole::cache), cache_before + 1) << "the lines' data, first";
    EXPECT_EQ(faults.syncs(FileRole::journal), journal_before + 1) << "then the COMMIT record";
    EXPECT_EQ(tier->commit(), 0);
    EXPECT_EQ(faults.syncs(FileRole::journal), journal_before + 1) << "nothing new to commit";
    EXPECT_EQ(tier->stats().journal_commits, 1u);
    EXPECT_EQ(tier->file_size(h), 3 * 4096);
    std::vector<char> back(log.size());
    ASSERT_EQ(tier->pread(h, back.data(), back.size(), 0), static_cast<ssize_t>(back.size()));
    EXPECT_EQ(back, log);
}

} // namespace
} // namespace iosig::tier::detail
