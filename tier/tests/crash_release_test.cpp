// Crash safety across a file's release (TierConfig::idle_files): what a file's next fsync owes
// must not be forgotten with the file when it is released at its last close and its lines leave
// the cache.
#include "crash_config.hpp"

#include <gtest/gtest.h>

namespace iosig::tier {
namespace {

using test_support::after_the_journal_fails;
using test_support::pattern;

constexpr std::size_t line = 4096;

// The journal fails with the CLEAN records of lines 0-3 appended and not durable. Line 0 is evicted
// (by a read of line 4) and written again, past the cache, so the fsync that follows fails: the
// journal cannot make line 0's CLEAN record durable, and without it recovery would write the
// slot's older bytes over the new ones (AnFsyncAfterAWritePastTheCacheCoversTheCleanRecords).
// Then the program closes the file, which is released (idle_files = 0); another program changes
// it, so that its next open drops its cached lines (close-to-open consistency); it is closed again
// and, with no line left in the cache, forgotten. An fsync of the file opened once more must still
// fail: the journal has taken nothing since. Before session 38 the duty to sync it went with the
// forgotten file, the fsync succeeded, and a power cut let recovery write line 0's older bytes over
// the acknowledged ones (found by the cache-side crash sweep with files released, under TSan).
TEST(CrashSafety, AFileReleasedAndForgottenStillOwesItsFsyncTheCleanRecords) {
    const std::vector<char> first = pattern(line, 6);
    const std::vector<char> second = pattern(line, 7);
    std::uint64_t fsyncs_acknowledged = 0;
    for (std::uint64_t seed = 1; seed <= 32; ++seed) {
        bool acknowledged = false;
        const std::vector<char> home = after_the_journal_fails(
            seed, first,
            [&](TierCache& tier, int h, const std::filesystem::path& path) {
                std::vector<char> buffer(line);
                EXPECT_EQ(tier.pread(h, buffer.data(), line, 4 * line), static_cast<ssize_t>(line));
                EXPECT_EQ(tier.pwrite(h, second.data(), line, 0), static_cast<ssize_t>(line));
                EXPECT_LT(tier.fsync(h), 0) << "the journal cannot make the CLEAN records durable";
                EXPECT_EQ(tier.close(h), 0);
                // Another program changes a byte of line 5.
                std::vector<char> changed = test_support::read_file(path);
                changed[5 * line] = static_cast<char>(changed[5 * line] + 1);
                test_support::write_file(path, changed);
                h = tier.open_file(path, O_RDWR);
                ASSERT_GE(h, 0);
                EXPECT_EQ(tier.close(h), 0);
                h = tier.open_file(path, O_RDWR);
                ASSERT_GE(h, 0);
                acknowledged = tier.fsync(h) == 0;
            },
            0);
        fsyncs_acknowledged += acknowledged;
        if (acknowledged)
            EXPECT_TRUE(std::equal(second.begin(), second.end(), home.begin()))
                << "seed " << seed << ": the acknowledged write of line 0 was overwritten";
    }
    EXPECT_EQ(fsyncs_acknowledged, 0u) << "an fsync succeeded although the journal had failed";
}

} // namespace
} // namespace iosig::tier
