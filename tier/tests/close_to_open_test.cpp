// Close-to-open consistency, as NFS gives it: a file another program changed (wrote, appended to,
// truncated) while the engine held none of its handles is read afresh on the next open, its size
// included; a file nobody changed keeps its cached lines. While a handle is open the engine assumes
// it is the file's only writer.
#include "engine_fixture.hpp"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace iosig::tier {
namespace {

using test_support::close_during_a_write_back_whose_clean_record_fails;
using test_support::pattern;
using test_support::read_file;
using test_support::read_through;
using test_support::ScratchDir;
using test_support::small_config;
using test_support::write_file;
using test_support::write_outside;

constexpr std::size_t line = 4096;

// The next open of `path` (read-only) finds the file as `expected`: its size, and its bytes.
void expect_next_open_finds(TierCache& tier, const std::filesystem::path& path,
                            const std::vector<char>& expected) {
    const int h = tier.open_file(path, O_RDONLY);
    ASSERT_GE(h, 0);
    EXPECT_EQ(tier.file_size(h), static_cast<off_t>(expected.size()));
    EXPECT_EQ(read_through(tier, h, expected.size() + line), expected);
    ASSERT_EQ(tier.close(h), 0);
}

// Two lines cached and closed; another program rewrites line 0 and appends a third line. The next
// open reads all three lines as they are now (before session 32: line 0's old bytes, and nothing
// past the old end).
TEST(CloseToOpen, AFileChangedWhileNoHandleWasOpenIsReadAfresh) {
    ScratchDir dir;
    const auto path = dir / "data.bin";
    const std::vector<char> original = pattern(2 * line, 1);
    write_file(path, original);
    auto tier = TierCache::open(small_config(dir));
    int h = tier->open_file(path, O_RDONLY);
    ASSERT_GE(h, 0);
    EXPECT_EQ(read_through(*tier, h, 3 * line), original);
    ASSERT_EQ(tier->close(h), 0);

    const std::vector<char> changed = pattern(line, 2);
    const std::vector<char> appended = pattern(line, 3);
    write_outside(path, changed, 0);
    write_outside(path, appended, 2 * line);
    std::vector<char> expected = changed;
    expected.insert(expected.end(), original.begin() + line, original.end());
    expected.insert(expected.end(), appended.begin(), appended.end());

    expect_next_open_finds(*tier, path, expected);
}

// A file another program cut shorter: the next open ends where the file does now.
TEST(CloseToOpen, AFileCutShorterWhileNoHandleWasOpenEndsWhereItDoesNow) {
    ScratchDir dir;
    const auto path = dir / "data.bin";
    const std::vector<char> original = pattern(3 * line, 1);
    write_file(path, original);
    auto tier = TierCache::open(small_config(dir));
    int h = tier->open_file(path, O_RDWR);
    EXPECT_EQ(read_through(*tier, h, 3 * line), original);
    ASSERT_EQ(tier->close(h), 0);
    std::filesystem::resize_file(path, line + 10);

    h = tier->open_file(path, O_RDWR);
    EXPECT_EQ(tier->file_size(h), static_cast<off_t>(line + 10));
    EXPECT_EQ(read_through(*tier, h, 3 * line),
              std::vector<char>(original.begin(), original.begin() + line + 10));
    ASSERT_EQ(tier->close(h), 0);
}

// The same, and then a write into the last line and a crash of the process: recovery writes that
// line home up to the file's size now, not the larger size the journal took before the cut
// (before session 45 it did, and the file grew back to 3 lines, zeros after the write).
// With `refuse_at_open`, the journal refuses that record (one failed write) at the open: the
// write asks for it again before its line is recorded dirty.
void cut_shorter_then_crash(bool refuse_at_open) {
    ScratchDir dir;
    const auto path = dir / "data.bin";
    write_file(path, pattern(line, 1));
    TierConfig config = small_config(dir);
    config.faults = IoFaults::without_power_cuts();
    auto tier = TierCache::open(config);
    int h = tier->open_file(path, O_RDWR);
    std::vector<char> expected = pattern(3 * line, 2);
    ASSERT_EQ(tier->pwrite(h, expected.data(), expected.size(), 0),
              static_cast<ssize_t>(expected.size())); // the journal takes the size 3 lines
    ASSERT_EQ(tier->close(h), 0);
    std::filesystem::resize_file(path, line + 10);
    expected.resize(line + 10);

    if (refuse_at_open) config.faults->fail_one_write(1, {FileRole::journal});
    h = tier->open_file(path, O_RDWR);
    ASSERT_GE(h, 0);
    EXPECT_EQ(config.faults->injected_failures(), refuse_at_open ? 1u : 0u);
    const std::vector<char> written = pattern(5, 3);
    ASSERT_EQ(tier->pwrite(h, written.data(), written.size(), line + 2), 5);
    std::copy(written.begin(), written.end(), expected.begin() + line + 2);
    EXPECT_EQ(tier->stats().dirty_lines, 1u) << "the write went home: no crash case";
    tier->abandon();
    tier.reset();
    (void)TierCache::recover(config.cache_file);
    EXPECT_EQ(std::filesystem::file_size(path), line + 10);
    EXPECT_TRUE(read_file(path) == expected);
}

TEST(CloseToOpen, AFileCutShorterWhileNoHandleWasOpenKeepsItsSizeThroughACrash) {
    cut_shorter_then_crash(false);
}

TEST(CloseToOpen, AFileCutShorterKeepsItsSizeThroughACrashAfterTheJournalRefusedTheRecordOnce) {
    cut_shorter_then_crash(true);
}

// Nobody changed it, the engine's own write-back included: the next open keeps the cached lines
// and its reads hit.
TEST(CloseToOpen, AFileNobodyChangedKeepsItsCachedLines) {
    ScratchDir dir;
    const auto path = dir / "data.bin";
    write_file(path, pattern(2 * line, 1));
    auto tier = TierCache::open(small_config(dir));
    int h = tier->open_file(path, O_RDWR);
    const std::vector<char> written = pattern(line, 4);
    ASSERT_EQ(tier->pwrite(h, written.data(), line, line), static_cast<ssize_t>(line));
    EXPECT_EQ(read_through(*tier, h, 2 * line).size(), 2 * line);
    ASSERT_EQ(tier->close(h), 0); // writes line 1 home

    h = tier->open_file(path, O_RDONLY);
    const std::uint64_t hits = tier->stats().read_hits;
    std::vector<char> expected = pattern(2 * line, 1);
    std::copy(written.begin(), written.end(), expected.begin() + line);
    EXPECT_EQ(read_through(*tier, h, 2 * line), expected);
    EXPECT_EQ(tier->stats().read_hits - hits, 2u) << "the cached lines were dropped";
    ASSERT_EQ(tier->close(h), 0);
}

// Four threads open the same file, write their own line, read it back and close it, 200 times
// each: handles come and go while the others write, and the last close of each round notes a
// version the next open compares with. No open drops a line another thread wrote, and the file ends
// with every thread's last line (also a run for ThreadSanitizer over open_file and close).
TEST(CloseToOpen, ThreadsOpeningAndClosingOneFileKeepEachOthersWrites) {
    ScratchDir dir;
    const auto path = dir / "data.bin";
    write_file(path, pattern(4 * line, 1));
    auto tier = TierCache::open(small_config(dir));
    constexpr int threads = 4, rounds = 200;
    std::atomic<int> failures{0};
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t)
        workers.emplace_back([&, t] {
            for (int round = 0; round < rounds; ++round) {
                const std::vector<char> mine =
                    pattern(line, static_cast<unsigned>(t * 1000 + round));
                const int h = tier->open_file(path, O_RDWR);
                std::vector<char> back(line);
                const auto at = static_cast<off_t>(t * line);
                if (h < 0 || tier->pwrite(h, mine.data(), line, at) != static_cast<ssize_t>(line) ||
                    tier->pread(h, back.data(), line, at) != static_cast<ssize_t>(line) ||
                    back != mine || tier->close(h) != 0)
                    ++failures;
            }
        });
    for (auto& w : workers)
        w.join();
    EXPECT_EQ(failures.load(), 0);
    std::vector<char> expected;
    for (int t = 0; t < threads; ++t) {
        const std::vector<char> last = pattern(line, static_cast<unsigned>(t * 1000 + rounds - 1));
        expected.insert(expected.end(), last.begin(), last.end());
    }
    EXPECT_EQ(read_file(path), expected);
}

// What open(2) gives for `flags` on `path`: 0 or -errno.
int open2_result(const std::filesystem::path& path, int flags) {
    const int fd = ::open(path.c_str(), flags);
    if (fd < 0) return -errno;
    ::close(fd);
    return 0;
}

// With the engine holding the file (idle, its descriptor open for writing), every open of it under
// modes 000, 200, 400 and 600 and each access mode ends as open(2) ends, errno included. "" when
// it does; else the first difference. Needs a caller whom the modes bind (not root).
std::string opens_of_a_held_file_end_as_open2_does(const ScratchDir& dir) {
    auto tier = TierCache::open(small_config(dir));
    const auto path = dir / "private.bin";
    const std::vector<char> bytes = pattern(line, 21);
    const int first = tier->open_file(path, O_CREAT | O_RDWR, 0600);
    if (first < 0 || tier->pwrite(first, bytes.data(), line, 0) != static_cast<ssize_t>(line) ||
        tier->close(first) != 0)
        return "could not make the file";
    int refused = 0;
    for (const mode_t mode : {0000, 0200, 0400, 0600}) {
        for (const int flags : {O_RDONLY, O_WRONLY, O_RDWR}) {
            if (::chmod(path.c_str(), mode) != 0) return "chmod failed";
            const int expected = open2_result(path, flags);
            const int h = tier->open_file(path, flags);
            if (h >= 0) tier->close(h);
            const int got = h < 0 ? h : 0;
            if (got != expected) {
                char where[64];
                std::snprintf(where, sizeof where, "mode %04o, flags %d: ", mode, flags);
                return where + std::string("open(2) gave ") + std::strerror(-expected) +
                       ", the engine " + std::strerror(-got);
            }
            refused += expected < 0;
        }
    }
    if (refused == 0) return "open(2) refused nothing: the modes do not bind this caller";
    const int h = tier->open_file(path, O_RDONLY);
    if (h < 0 || read_through(*tier, h, 2 * line) != bytes) return "the bytes changed";
    tier->close(h);
    return "";
}

// A close that begins while the flusher is writing the file's only dirty line home waits for that
// write-back; the journal refuses the line's CLEAN record then (one failed write, a transient
// error) and takes records again by the time the write-back is done. The close succeeds, so the
// file must be settled: another program then appends to it, and the next open sees the new size
// and bytes. Before session 44 the close left the line dirty for want of its record, the file
// unsettled, and the next open served the old size.
TEST(CloseToOpen, AFileClosedDuringAWriteBackWhoseCleanRecordFailedIsReadAfresh) {
    ScratchDir dir;
    const auto path = dir / "data.bin";
    write_file(path, pattern(line, 30));
    TierConfig config = small_config(dir);
    config.writeback_delay = 0.002;
    config.faults = std::make_shared<IoFaults>();
    auto tier = TierCache::open(config);
    int h = tier->open_file(path, O_RDWR);
    ASSERT_GE(h, 0);
    const std::vector<char> written = pattern(line, 31);
    ASSERT_EQ(close_during_a_write_back_whose_clean_record_fails(*tier, *config.faults, h, written),
              0);
    EXPECT_EQ(read_file(path), written);

    const std::vector<char> appended = pattern(line, 32);
    write_outside(path, appended, line);
    std::vector<char> expected = written;
    expected.insert(expected.end(), appended.begin(), appended.end());
    expect_next_open_finds(*tier, path, expected);
}

// The journal refuses every record from the write on: the flusher writes line 0 home, but its
// CLEAN record is refused, and the line stays dirty in the engine. The close succeeds (the bytes
// are home) and settles the file all the same; another program then rewrites line 0 and appends
// line 1, and the next open reads both as they are now, not the cached line 0. Before session 44
// the file stayed unsettled until the journal took the record, and the open served the old size
// and line 0's old bytes.
TEST(CloseToOpen, AFileClosedWhileTheJournalRefusesCleanRecordsIsReadAfresh) {
    ScratchDir dir;
    const auto path = dir / "data.bin";
    write_file(path, pattern(line, 40));
    TierConfig config = small_config(dir);
    config.writeback_delay = 0.002;
    config.faults = std::make_shared<IoFaults>();
    auto tier = TierCache::open(config);
    int h = tier->open_file(path, O_RDWR);
    ASSERT_GE(h, 0);
    const std::vector<char> written = pattern(line, 41);
    ASSERT_EQ(tier->pwrite(h, written.data(), line, 0), static_cast<ssize_t>(line));
    config.faults->fail_now({FileRole::journal});
    for (int i = 0; i < 10'000 && tier->stats().writebacks == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_EQ(tier->stats().writebacks, 1u) << "the flusher never wrote line 0 home";
    ASSERT_EQ(tier->stats().dirty_lines, 1u) << "the journal took the CLEAN record";
    ASSERT_EQ(tier->close(h), 0);
    EXPECT_EQ(read_file(path), written);

    const std::vector<char> rewritten = pattern(line, 42), appended = pattern(line, 43);
    write_outside(path, rewritten, 0);
    write_outside(path, appended, line);
    std::vector<char> expected = rewritten;
    expected.insert(expected.end(), appended.begin(), appended.end());
    expect_next_open_finds(*tier, path, expected);
    config.faults->clear_failures();
    EXPECT_EQ(tier->flush_all(), 0);
    EXPECT_EQ(read_file(path), expected);
}

// The engine answers an open of a file it holds without open(2) (an idle file's descriptor, or
// another handle's): that open checks the caller's access to the file as open(2) would (before
// session 34 a file made read-only after its last close still opened for writing, through the
// descriptor the engine kept). Root passes every mode check, so as root the check runs in a child
// process that has become user and group 65534 first.
TEST(CloseToOpen, AnOpenOfAHeldFileIsRefusedAsOpen2WouldRefuseIt) {
    ScratchDir dir;
    IOSIG_EXPECT_PASSES_AS_NOBODY(
        dir, [&] { return opens_of_a_held_file_end_as_open2_does(dir); },
        "and root passes every mode check");
}

// A file its caller may write but not read (mode 0200), not held by the engine, opened write-only:
// open(2) opens it; the engine, which fills lines by reading the home file, cannot, and says so
// with EOPNOTSUPP, which its caller can tell from a refusal and answer by opening the file itself
// (before session 35 it gave EACCES, as if open(2) had refused). Mode 0000 is refused with EACCES,
// as open(2) refuses it. "" when so.
std::string a_write_only_file_is_declined_not_refused(const ScratchDir& dir) {
    auto tier = TierCache::open(small_config(dir));
    const auto path = dir / "log.bin";
    write_file(path, pattern(line, 23));
    for (const auto& [mode, expected] : {std::pair{0200, -EOPNOTSUPP}, std::pair{0000, -EACCES}}) {
        if (::chmod(path.c_str(), static_cast<mode_t>(mode)) != 0) return "chmod failed";
        if ((open2_result(path, O_WRONLY) == 0) != (mode == 0200))
            return "open(2) does not bind this caller as expected";
        const int got = tier->open_file(path, O_WRONLY);
        if (got >= 0) tier->close(got);
        char octal[8];
        std::snprintf(octal, sizeof octal, "%04o", mode);
        if (got != expected)
            return "mode " + std::string(octal) + ": the engine gave " +
                   (got >= 0 ? std::string("a handle") : std::string(std::strerror(-got))) +
                   ", not " + std::strerror(-expected);
    }
    return "";
}

TEST(CloseToOpen, AWriteOnlyFileIsDeclinedNotRefused) {
    ScratchDir dir;
    IOSIG_EXPECT_PASSES_AS_NOBODY(
        dir, [&] { return a_write_only_file_is_declined_not_refused(dir); },
        "and root passes every mode check");
}

} // namespace
} // namespace iosig::tier
