// A program that writes a file and then renames it (a checkpoint written as `ckpt.tmp` and renamed
// over `ckpt`, an output moved into its final directory) leaves the engine's journal naming a path
// where the file no longer is. After a crash, recovery finds the file where it is now, by the
// handle the journal keeps for it (name_to_handle_at / open_by_handle_at, which need the
// CAP_DAC_READ_SEARCH capability), and writes its dirty lines there: without iosig, a crash of the
// process after the rename would have lost nothing either. Without the capability, and for a file
// deleted since, the lines are counted missing as before. Before session 36 recovery looked at
// the journaled path alone, and every such line was lost.
#include "crash_config.hpp"
#include "engine_fixture.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

namespace iosig::tier {
namespace {

using test_support::config_for;
using test_support::leave_a_dirty_line;
using test_support::pattern;
using test_support::read_file;
using test_support::ScratchDir;
using test_support::with_the_dirty_line;
using test_support::write_file;

constexpr std::size_t line = 4096;

// Whether this process may open files by handle (CAP_DAC_READ_SEARCH in its effective set).
bool may_open_by_handle() {
    std::ifstream status("/proc/self/status");
    for (std::string text; std::getline(status, text);)
        if (text.rfind("CapEff:", 0) == 0)
            return (std::stoull(text.substr(7), nullptr, 16) >> 2) & 1;
    return false;
}

// On a tmpfs and on the disk's file system (ext4 here): each gives handles of its own.
class RecoveryOfAMovedFile : public ::testing::TestWithParam<ScratchDir::On> {};
INSTANTIATE_TEST_SUITE_P(OnTmpfsAndDisk, RecoveryOfAMovedFile,
                         ::testing::Values(ScratchDir::On::tmpfs_if_any, ScratchDir::On::disk),
                         [](const auto& on) {
                             return on.param == ScratchDir::On::disk ? "Disk" : "Tmpfs";
                         });

#define SKIP_WITHOUT_OPEN_BY_HANDLE()                                                              \
    if (!may_open_by_handle())                                                                     \
    GTEST_SKIP() << "this process lacks CAP_DAC_READ_SEARCH, which opening a file by its handle "  \
                    "needs (run as root); the fallback without it is "                             \
                    "RecoveryOfAMovedFileAnywhere.WithoutTheCapabilityItsLineIsCountedMissing"

// Recovery wrote the one dirty line into the file where it is now, found by its handle.
void expect_the_line_found_moved(const TierCache& tier, const std::filesystem::path& now_at,
                                 const std::vector<char>& dirty) {
    EXPECT_EQ(tier.recovery().lines_written_home, 1u);
    EXPECT_EQ(tier.recovery().missing_files, 0u);
    EXPECT_EQ(tier.recovery().files_found_moved, 1u);
    EXPECT_EQ(read_file(now_at), with_the_dirty_line(dirty));
}

// The checkpoint pattern: the line of `ckpt.tmp` is dirty at the crash, and the file was renamed
// over `ckpt` (which it replaces). Recovery writes the line into the file at `ckpt`, and makes no
// file at the old path.
TEST_P(RecoveryOfAMovedFile, AFileRenamedOverAnotherGetsItsLineWhereItIsNow) {
    SKIP_WITHOUT_OPEN_BY_HANDLE();
    ScratchDir dir(GetParam());
    const auto written = dir / "ckpt.tmp";
    const auto final_path = dir / "ckpt";
    const std::vector<char> dirty = pattern(line, 2);
    write_file(final_path, pattern(line, 7)); // the previous checkpoint
    ASSERT_EQ(leave_a_dirty_line(dir, written, dirty), "");
    std::filesystem::rename(written, final_path);
    expect_the_line_found_moved(*TierCache::open(config_for(dir, nullptr)), final_path, dirty);
    EXPECT_FALSE(std::filesystem::exists(written));
}

// A file moved to another directory of its file system is found there too.
TEST_P(RecoveryOfAMovedFile, AFileMovedToAnotherDirectoryGetsItsLineThere) {
    SKIP_WITHOUT_OPEN_BY_HANDLE();
    ScratchDir dir(GetParam());
    const auto written = dir / "out.bin";
    const auto done = dir / "done" / "out.bin";
    const std::vector<char> dirty = pattern(line, 2);
    ASSERT_EQ(leave_a_dirty_line(dir, written, dirty), "");
    std::filesystem::create_directories(done.parent_path());
    std::filesystem::rename(written, done);
    auto tier = TierCache::open(config_for(dir, nullptr));
    EXPECT_EQ(tier->recovery().lines_written_home, 1u);
    EXPECT_EQ(read_file(done), with_the_dirty_line(dirty));
    EXPECT_FALSE(std::filesystem::exists(written));
}

// A file moved aside and a new one made at its path: the line goes into the moved file, and the
// new one, which is another file, keeps its own bytes.
TEST_P(RecoveryOfAMovedFile, AFileMovedAsideGetsItsLineAndTheNewFileAtItsPathIsLeftAlone) {
    SKIP_WITHOUT_OPEN_BY_HANDLE();
    ScratchDir dir(GetParam());
    const auto path = dir / "data.bin";
    const auto aside = dir / "data.bin.old";
    const std::vector<char> dirty = pattern(line, 2);
    ASSERT_EQ(leave_a_dirty_line(dir, path, dirty), "");
    std::filesystem::rename(path, aside);
    const std::vector<char> fresh = pattern(3 * line, 5);
    write_file(path, fresh);
    auto tier = TierCache::open(config_for(dir, nullptr));
    EXPECT_EQ(tier->recovery().lines_written_home, 1u);
    EXPECT_EQ(tier->recovery().lines_of_replaced_files, 0u);
    EXPECT_EQ(tier->recovery().files_found_moved, 1u);
    EXPECT_EQ(read_file(aside), with_the_dirty_line(dirty));
    EXPECT_EQ(read_file(path), fresh);
}

// A file moved aside and a loop of symbolic links made at its path (found by
// EngineAgainstTheKernelWhileDevicesFailThroughACrash): opening the path fails with ELOOP, which
// is no file of the journal's, and the handle finds the moved one. Before session 43 recovery
// failed ("Too many levels of symbolic links") and kept the journal until the links went.
TEST_P(RecoveryOfAMovedFile, AFileWhosePathIsNowALoopOfLinksGetsItsLineWhereItIsNow) {
    SKIP_WITHOUT_OPEN_BY_HANDLE();
    ScratchDir dir(GetParam());
    const auto path = dir / "a";
    const auto aside = dir / "c";
    const std::vector<char> dirty = pattern(line, 2);
    ASSERT_EQ(leave_a_dirty_line(dir, path, dirty), "");
    std::filesystem::rename(path, aside);
    std::filesystem::create_symlink("b", path);
    std::filesystem::create_symlink("a", dir / "b");
    expect_the_line_found_moved(*TierCache::open(config_for(dir, nullptr)), aside, dirty);
    EXPECT_TRUE(std::filesystem::is_symlink(path));
}

// A home file reached through a bind mount of a directory of its own file system, the bind mount
// gone at recovery: the path leads nowhere, but the file is where it always was, and its handle
// finds it there (before session 36 its line was counted missing and lost; root only, for the
// mount).
TEST(RecoveryOfAMovedFileAnywhere, AFileWhoseBindMountIsGoneIsFoundOnItsFileSystem) {
    SKIP_WITHOUT_OPEN_BY_HANDLE();
    ScratchDir dir;
    const auto store = dir / "store";
    const auto mounted = dir / "mnt";
    std::filesystem::create_directories(store);
    std::filesystem::create_directories(mounted);
    if (::mount(store.c_str(), mounted.c_str(), nullptr, MS_BIND, nullptr) != 0)
        GTEST_SKIP() << "cannot bind-mount here (" << std::strerror(errno)
                     << "): needs root and mount rights";
    struct Unmount {
        std::filesystem::path mounted;
        ~Unmount() { ::umount2(mounted.c_str(), MNT_DETACH); }
    } unmount{mounted};
    const auto path = mounted / "data.bin";
    const std::vector<char> dirty = pattern(line, 2);
    ASSERT_EQ(leave_a_dirty_line(dir, path, dirty), "");
    ASSERT_EQ(::umount2(mounted.c_str(), 0), 0) << std::strerror(errno);
    ASSERT_FALSE(std::filesystem::exists(path));
    auto tier = TierCache::open(config_for(dir, nullptr));
    EXPECT_EQ(tier->recovery().lines_written_home, 1u);
    EXPECT_EQ(tier->recovery().files_found_moved, 1u);
    EXPECT_EQ(read_file(store / "data.bin"), with_the_dirty_line(dirty));
}

// A file the engine released, deleted, and a new file made at its path in the same inode number
// (ext4 hands it out again): the new file has a handle of its own, and the engine journals that one
// when it opens the new file. Moved after the crash, the new file is found by it and gets its line;
// with the deleted file's handle (stale) the line would be counted missing and lost.
TEST(RecoveryOfAMovedFileAnywhere, ANewFileInAReleasedFilesInodeIsFoundByItsOwnHandle) {
    SKIP_WITHOUT_OPEN_BY_HANDLE();
    ScratchDir dir(ScratchDir::On::disk);
    const auto path = dir / "data.bin";
    const auto moved = dir / "moved.bin";
    write_file(path, pattern(4 * line, 1));
    struct stat before{};
    ASSERT_EQ(::stat(path.c_str(), &before), 0);
    TierConfig config = test_support::four_line_config(dir, nullptr); // nothing goes home
    config.idle_files = 0;                                            // released at its last close
    const std::vector<char> dirty = pattern(line, 2);
    {
        auto tier = TierCache::open(config);
        int h = tier->open_file(path, O_RDONLY);
        ASSERT_GE(h, 0);
        ASSERT_EQ(test_support::read_through(*tier, h, 4 * line), pattern(4 * line, 1));
        ASSERT_EQ(tier->close(h), 0);
        std::filesystem::remove(path);
        write_file(path, pattern(4 * line, 1));
        struct stat after{};
        ASSERT_EQ(::stat(path.c_str(), &after), 0);
        if (after.st_ino != before.st_ino)
            GTEST_SKIP() << "the file system gave the new file another inode than the deleted "
                            "one's: no released file shares it";
        h = tier->open_file(path, O_RDWR);
        ASSERT_GE(h, 0);
        ASSERT_EQ(tier->pwrite(h, dirty.data(), line, line), static_cast<ssize_t>(line));
        ASSERT_EQ(tier->commit(), 0);
        tier->abandon();
    }
    std::filesystem::rename(path, moved);
    expect_the_line_found_moved(*TierCache::open(config_for(dir, nullptr)), moved, dirty);
}

// A file renamed and then deleted is gone: its handle finds nothing, and the line is counted
// missing, as for a file deleted at its path.
TEST_P(RecoveryOfAMovedFile, AFileRenamedAndThenDeletedIsCountedMissing) {
    ScratchDir dir(GetParam());
    const auto path = dir / "data.bin";
    const auto moved = dir / "moved.bin";
    ASSERT_EQ(leave_a_dirty_line(dir, path, pattern(line, 2)), "");
    std::filesystem::rename(path, moved);
    std::filesystem::remove(moved);
    auto tier = TierCache::open(config_for(dir, nullptr));
    EXPECT_EQ(tier->recovery().missing_files, 1u);
    EXPECT_EQ(tier->recovery().lines_written_home, 0u);
    EXPECT_EQ(tier->recovery().files_found_moved, 0u);
    EXPECT_FALSE(std::filesystem::exists(path));
}

// The same when another program still holds the deleted file open: its handle finds it, but it
// has no name, and a line written there would be lost when the program closes it; it is counted
// missing, not written home.
TEST_P(RecoveryOfAMovedFile, AFileDeletedButHeldOpenElsewhereIsCountedMissing) {
    ScratchDir dir(GetParam());
    const auto path = dir / "data.bin";
    const auto moved = dir / "moved.bin";
    ASSERT_EQ(leave_a_dirty_line(dir, path, pattern(line, 2)), "");
    std::filesystem::rename(path, moved);
    const int held = ::open(moved.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(held, 0);
    std::filesystem::remove(moved);
    auto tier = TierCache::open(config_for(dir, nullptr));
    ::close(held);
    EXPECT_EQ(tier->recovery().missing_files, 1u);
    EXPECT_EQ(tier->recovery().lines_written_home, 0u);
    EXPECT_EQ(tier->recovery().files_found_moved, 0u);
}

// An engine without the capability cannot open by handle: the moved file's line is counted
// missing (as before session 36) and the engine opens; nothing is written anywhere.
std::string without_the_capability_the_line_is_counted_missing(const ScratchDir& dir) {
    const auto path = dir / "data.bin";
    const auto moved = dir / "moved.bin";
    if (std::string wrong = leave_a_dirty_line(dir, path, pattern(line, 2)); !wrong.empty())
        return wrong;
    std::filesystem::rename(path, moved);
    try {
        auto tier = TierCache::open(config_for(dir, nullptr));
        if (tier->recovery().missing_files != 1 || tier->recovery().files_found_moved != 0)
            return "recovery: missing files " + std::to_string(tier->recovery().missing_files) +
                   ", found moved " + std::to_string(tier->recovery().files_found_moved);
    } catch (const TierError& e) {
        return std::string("the engine did not open: ") + e.what();
    }
    if (read_file(moved) != pattern(4 * line, 1)) return "the moved file changed";
    if (std::filesystem::exists(path)) return "a file was made at the old path";
    return "";
}

TEST(RecoveryOfAMovedFileAnywhere, WithoutTheCapabilityItsLineIsCountedMissing) {
    ScratchDir dir;
    IOSIG_EXPECT_PASSES_AS_NOBODY(
        dir, [&] { return without_the_capability_the_line_is_counted_missing(dir); },
        "so this process keeps the capability");
}

} // namespace
} // namespace iosig::tier
