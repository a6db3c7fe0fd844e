// The journal's group commit (src/engine/journal.hpp): sync_to(n) makes every record up to n
// durable, and fails for a record that was never appended (Journal::never_appended, which the
// engine keeps for a slot whose CLEAN record could not be written: its next line must not fill it).
#include "engine/journal.hpp"
#include "engine_fixture.hpp"

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

} // namespace
} // namespace iosig::tier::detail
