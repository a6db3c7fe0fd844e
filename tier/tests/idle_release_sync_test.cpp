// The sync an idle file owes before its release (the home file's bytes that went past the
// write-back, the journal's records its next fsync would sync): made by the releaser thread, not
// by the close of another file, unless the idle files are twice their bound; the write-back goes
// on meanwhile; a sync that fails keeps the file's descriptor. The other releases:
// idle_file_release_test.cpp.
#include "engine_fixture.hpp"

#include <fcntl.h>
#include <future>
#include <gtest/gtest.h>
#include <thread>

namespace iosig::tier {
namespace {

using test_support::descriptors_naming;
using test_support::pattern;
using test_support::read_file;
using test_support::read_through;
using test_support::ScratchDir;
using test_support::small_config;
using test_support::write_file;

constexpr std::size_t line = 4096;

// Every file released at its last close; a stream goes past the cache after its first line.
TierConfig releasing_with_bypass(const ScratchDir& dir) {
    TierConfig config = small_config(dir);
    config.idle_files = 0;
    config.sequential_cutoff = line;
    config.faults = std::make_shared<IoFaults>();
    return config;
}

// Writes `bytes` to a new file at `path` as one stream, a line a call, and leaves it open: its
// first line, which the cache takes, is written home and synced at once, so that no write-back at
// the close syncs the rest, which goes home past the cache. -1 on failure.
int write_stream_past_the_cache(TierCache& tier, const std::filesystem::path& path,
                                const std::vector<char>& bytes) {
    const std::uint64_t bypassed = tier.stats().bypassed_bytes;
    const int h = tier.open_file(path, O_CREAT | O_RDWR);
    for (std::size_t at = 0; h >= 0 && at < bytes.size(); at += line) {
        if (tier.pwrite(h, bytes.data() + at, line, static_cast<off_t>(at)) !=
            static_cast<ssize_t>(line))
            return -1;
        if (at == 0 && tier.fsync(h) != 0) return -1;
    }
    return tier.stats().bypassed_bytes - bypassed == bytes.size() - line ? h : -1;
}

// Bytes that went home past the cache (the sequential bypass) of a file released before the
// engine's flush_all survive a power cut after it, as those of a file the engine kept open do: the
// release synced them.
TEST(IdleFiles, BytesOfAReleasedFileAreDurableAfterFlushAll) {
    ScratchDir dir;
    const TierConfig config = releasing_with_bypass(dir);
    const auto path = dir / "stream.bin";
    const std::vector<char> bytes = pattern(64 * line, 11);
    auto tier = TierCache::open(config);
    const int h = write_stream_past_the_cache(*tier, path, bytes);
    ASSERT_GE(h, 0);
    ASSERT_EQ(tier->close(h), 0);
    ASSERT_EQ(descriptors_naming(path), 0);
    ASSERT_EQ(tier->flush_all(), 0);
    config.faults->crash(3);
    EXPECT_EQ(read_file(path), bytes);
}

// When that sync fails the file keeps its descriptor, and flush_all reports the failure until the
// device works again.
TEST(IdleFiles, AFileWhoseSyncFailsAtItsReleaseKeepsItsDescriptor) {
    ScratchDir dir;
    const TierConfig config = releasing_with_bypass(dir);
    const auto path = dir / "stream.bin";
    const std::vector<char> bytes = pattern(8 * line, 12);
    auto tier = TierCache::open(config);
    const int h = write_stream_past_the_cache(*tier, path, bytes);
    ASSERT_GE(h, 0);
    config.faults->fail_now({FileRole::home});
    ASSERT_EQ(tier->close(h), 0); // nothing was dirty in the cache
    EXPECT_GT(descriptors_naming(path), 0);
    EXPECT_EQ(tier->flush_all(), -EIO);
    config.faults->clear_failures();
    EXPECT_EQ(tier->flush_all(), 0);
    EXPECT_EQ(read_file(path), bytes);
}

// Whether `done()` holds within 10 s.
template <typename Condition>
bool within_ten_seconds(Condition done) {
    for (int waited_ms = 0; waited_ms < 10'000 && !done(); waited_ms += 10)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return done();
}

// An engine that keeps one file idle and releases the next, its streams going past the cache after
// their first line, and beside it a file "other" of one line, whose open and close push the idle
// file out.
struct OneIdleFileAllowed {
    ScratchDir dir;
    TierConfig config = releasing_with_bypass(dir);
    std::unique_ptr<TierCache> tier;
    std::filesystem::path other = dir / "other";

    explicit OneIdleFileAllowed(unsigned other_seed, double writeback_delay = 3600) {
        config.idle_files = 1;
        config.writeback_delay = writeback_delay;
        write_file(other, pattern(line, other_seed));
        tier = TierCache::open(config);
    }
};

// With `idle` the one idle file allowed and owing a sync of `role` (its home file's or the
// journal's), opening and reading "other" and closing it releases `idle`. That close returns while
// the syncs of `role` are held, and the releaser thread makes the sync meanwhile (waited for up to
// 10 s), releasing `idle` only after it. After flush_all and a power cut `idle` holds `expected`.
void expect_the_releaser_syncs_then_releases(OneIdleFileAllowed& t, FileRole role,
                                             const std::filesystem::path& idle,
                                             const std::vector<char>& expected) {
    TierCache& tier = *t.tier;
    IoFaults& faults = *t.config.faults;
    const int h = tier.open_file(t.other, O_RDONLY);
    ASSERT_GE(h, 0);
    ASSERT_EQ(read_through(tier, h, 2 * line), read_file(t.other));
    const std::uint64_t syncs = faults.syncs(role);
    faults.hold_syncs(role);
    auto closing = std::async(std::launch::async, [&] { return tier.close(h); });
    const bool returned = closing.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
    const bool synced_meanwhile = within_ten_seconds([&] { return faults.syncs(role) > syncs; });
    const bool held_meanwhile = descriptors_naming(idle) > 0;
    faults.let_syncs_go();
    EXPECT_TRUE(returned) << "the close waited for the idle file's sync";
    EXPECT_TRUE(synced_meanwhile) << "nobody made the sync the idle file owed";
    EXPECT_TRUE(held_meanwhile) << "the idle file was released before its sync ended";
    EXPECT_EQ(closing.get(), 0);
    EXPECT_TRUE(within_ten_seconds([&] { return descriptors_naming(idle) == 0; }))
        << "the idle file was not released";
    ASSERT_EQ(tier.flush_all(), 0);
    faults.crash(3);
    EXPECT_EQ(read_file(idle), expected);
}

// The sync a release needs is not paid by the close of another file: with one idle file allowed,
// the close of a file only read (nothing of its own to sync) returns while the home device holds
// the sync of the stream written before, which the releaser thread makes, and releases, meanwhile
// (before session 34 that close made the sync itself: seconds on a slow device, for a file it never
// wrote). The stream's bytes are durable after flush_all all the same.
TEST(IdleFiles, TheSyncBeforeAReleaseIsNotPaidByTheCloseOfAnotherFile) {
    OneIdleFileAllowed t(17);
    const auto stream = t.dir / "stream.bin";
    const std::vector<char> bytes = pattern(64 * line, 16);
    const int h = write_stream_past_the_cache(*t.tier, stream, bytes);
    ASSERT_GE(h, 0);
    ASSERT_EQ(t.tier->close(h), 0);
    expect_the_releaser_syncs_then_releases(t, FileRole::home, stream, bytes);
}

// A file that owes only its home file's sync at its release (a write that grew a dirty line went
// home too, as the journal refused its SIZE record, and no fsync followed) is released by the
// releaser thread as well: the close of another file returns while the home syncs are held.
TEST(IdleFiles, AReleaseThatOwesOnlyTheHomeFilesSyncIsMadeByTheReleaser) {
    OneIdleFileAllowed t(24);
    const auto grown = t.dir / "grown.bin";
    const std::vector<char> bytes = pattern(200, 23);
    const int h = t.tier->open_file(grown, O_CREAT | O_RDWR);
    ASSERT_GE(h, 0);
    ASSERT_EQ(t.tier->pwrite(h, bytes.data(), 100, 0), 100); // line 0 dirty, its size journaled
    t.config.faults->fail_one_write(1, {FileRole::journal}); // the SIZE record of the next write
    ASSERT_EQ(t.tier->pwrite(h, bytes.data() + 100, 100, 100), 100);
    ASSERT_EQ(t.config.faults->injected_failures(), 1u);
    ASSERT_EQ(t.tier->close(h), 0); // the one idle file allowed: kept, owing the home file's sync
    expect_the_releaser_syncs_then_releases(t, FileRole::home, grown, bytes);
}

// A file that owes only the journal's sync at its release (its home file synced by an fsync whose
// journal sync then failed) is released by the releaser thread too: the close of another file
// returns while the journal's syncs are held, and the releaser makes the sync, then releases the
// file. Before session 40 nothing made a journal-only duty arise in a test.
TEST(IdleFiles, AReleaseThatOwesOnlyTheJournalsSyncIsMadeByTheReleaser) {
    OneIdleFileAllowed t(22);
    const auto stream = t.dir / "stream.bin";
    const std::vector<char> bytes = pattern(64 * line, 21);
    const int h = write_stream_past_the_cache(*t.tier, stream, bytes);
    ASSERT_GE(h, 0);
    const std::vector<char> kept(bytes.begin(), bytes.end() - line);
    ASSERT_EQ(t.tier->ftruncate(h, static_cast<off_t>(kept.size())), 0); // journal records to sync
    t.config.faults->fail_now({FileRole::journal});
    ASSERT_LT(t.tier->fsync(h), 0) << "the journal's sync did not fail";
    t.config.faults->clear_failures();
    ASSERT_EQ(t.tier->close(h), 0); // the one idle file allowed: kept, owing the journal's sync
    expect_the_releaser_syncs_then_releases(t, FileRole::journal, stream, kept);
}

// Lines of other files go home while a release's sync waits (on a slow device): the thread that
// makes that sync is not the one that writes dirty lines back (before session 35 the flusher made
// both, so a sync of seconds on a slow device stopped all write-back, and writers of other files
// waited on the dirty bound meanwhile).
TEST(IdleFiles, TheWriteBackGoesOnWhileAReleaseWaitsForItsSync) {
    OneIdleFileAllowed t(19, 0.05);
    const auto stream = t.dir / "stream.bin";
    const std::vector<char> bytes = pattern(64 * line, 18);
    const int h = write_stream_past_the_cache(*t.tier, stream, bytes);
    ASSERT_GE(h, 0);
    ASSERT_EQ(t.tier->close(h), 0);
    const std::uint64_t syncs = t.config.faults->syncs(FileRole::home);
    t.config.faults->hold_syncs(stream);
    const int other = t.tier->open_file(t.other, O_RDONLY);
    ASSERT_GE(other, 0);
    ASSERT_EQ(t.tier->close(other), 0); // two files idle: the stream is released, after its sync
    if (!within_ten_seconds([&] { return t.config.faults->syncs(FileRole::home) > syncs; })) {
        t.config.faults->let_syncs_go();
        FAIL() << "nobody synced the stream";
    }
    const int written = t.tier->open_file(t.dir / "written", O_CREAT | O_RDWR);
    ASSERT_GE(written, 0);
    const std::vector<char> line_bytes = pattern(line, 20);
    ASSERT_EQ(t.tier->pwrite(written, line_bytes.data(), line, 0), static_cast<ssize_t>(line));
    const bool written_back = within_ten_seconds([&] { return t.tier->stats().dirty_lines == 0; });
    const bool stream_still_syncing = descriptors_naming(stream) > 0;
    const std::vector<char> home_bytes = read_file(t.dir / "written");
    t.config.faults->let_syncs_go();
    EXPECT_TRUE(written_back) << "the line waited for the stream's sync to be written home";
    EXPECT_TRUE(stream_still_syncing) << "the stream was released before its sync ended";
    EXPECT_EQ(home_bytes, line_bytes);
    ASSERT_EQ(t.tier->close(written), 0);
    ASSERT_EQ(t.tier->flush_all(), 0);
    t.config.faults->crash(3);
    EXPECT_EQ(read_file(stream), bytes);
}

// Past twice the bound the close makes the sync itself, so that a program closing streams faster
// than the home device syncs them holds a bounded number of descriptors: with one idle file
// allowed and home syncs held, the second stream's close leaves the first's sync to the releaser
// (which then waits on it), and the third stream's close, with three files idle, syncs the second
// itself, passing over the first, whose descriptor the releaser is using (before, a release that
// found a descriptor in use gave up altogether, and the close returned holding all three).
TEST(IdleFiles, PastTwiceTheBoundTheCloseMakesTheSyncItself) {
    ScratchDir dir;
    TierConfig config = releasing_with_bypass(dir);
    config.idle_files = 1;
    auto tier = TierCache::open(config);
    std::vector<std::vector<char>> bytes;
    std::vector<int> handles;
    for (unsigned i = 0; i < 3; ++i) {
        bytes.push_back(pattern(16 * line, 20 + i));
        handles.push_back(
            write_stream_past_the_cache(*tier, dir / ("stream" + std::to_string(i)), bytes.back()));
        ASSERT_GE(handles.back(), 0);
    }
    ASSERT_EQ(tier->close(handles[0]), 0);
    const std::uint64_t syncs = config.faults->syncs(FileRole::home);
    const auto wait_for_syncs = [&](std::uint64_t n) {
        for (int waited_ms = 0; waited_ms < 10'000 && config.faults->syncs(FileRole::home) < n;
             waited_ms += 10)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        return config.faults->syncs(FileRole::home) >= n;
    };
    config.faults->hold_syncs(FileRole::home);
    auto second = std::async(std::launch::async, [&] { return tier->close(handles[1]); });
    if (second.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
        config.faults->let_syncs_go();
        FAIL() << "the second close waited for the first stream's sync";
    }
    EXPECT_EQ(second.get(), 0);
    EXPECT_TRUE(wait_for_syncs(syncs + 1)) << "the releaser did not sync the first stream";
    auto closing = std::async(std::launch::async, [&] { return tier->close(handles[2]); });
    EXPECT_TRUE(wait_for_syncs(syncs + 2)) << "the third close did not sync the second stream";
    EXPECT_EQ(closing.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout)
        << "the third close returned without its sync";
    config.faults->let_syncs_go();
    EXPECT_EQ(closing.get(), 0);
    for (int waited_ms = 0; waited_ms < 10'000 && descriptors_naming(dir / "stream0") > 0;
         waited_ms += 10)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(descriptors_naming(dir / "stream0"), 0);
    EXPECT_EQ(descriptors_naming(dir / "stream1"), 0);
    ASSERT_EQ(tier->flush_all(), 0);
    config.faults->crash(4);
    for (unsigned i = 0; i < 3; ++i)
        EXPECT_EQ(read_file(dir / ("stream" + std::to_string(i))), bytes[i]) << "stream " << i;
}

} // namespace
} // namespace iosig::tier
