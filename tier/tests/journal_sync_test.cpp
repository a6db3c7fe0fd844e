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

TEST(JournalSync, ARecordNeverAppendedCanNeverBeWaitedFor) {
    test_support::ScratchDir dir;
    Journal journal(dir / "cache.journal", nullptr);
    ASSERT_EQ(journal.reset(4096, 4), 0);
    ASSERT_GT(journal.append_clean(1), 0);
    EXPECT_EQ(journal.sync_to(Journal::never_appended), -EIO);
    EXPECT_EQ(journal.sync_to(Journal::never_appended), -EIO) << "not even after a sync";
    EXPECT_EQ(journal.sync_to(journal.appended()), 0);
}

} // namespace
} // namespace iosig::tier::detail
