// Recovery after a crash writes the dirty lines the journal lists into their home files. A home
// file that is gone (deleted, or its path now a directory) has nowhere to take them: recovery
// counts them and goes on. A home file that is there but cannot be opened now (no permission for
// the user the engine runs as, a file system mounted read-only, a device error) still needs them:
// recovery fails naming the file and the error, keeps the journal, and a later open, once the
// cause is fixed, writes them home.
#include "crash_config.hpp"
#include "engine_fixture.hpp"

#include <fcntl.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <sys/stat.h>

namespace iosig::tier {
namespace {

using test_support::config_for;
using test_support::four_line_config;
using test_support::pattern;
using test_support::read_file;
using test_support::ScratchDir;
using test_support::write_file;

constexpr std::size_t line = 4096;

// Writes `dirty` over the second line of `path` (4 lines of pattern 1) through an engine that
// writes nothing home, and crashes it (abandon): the journal lists the line dirty. "" on success.
std::string leave_a_dirty_line(const ScratchDir& dir, const std::filesystem::path& path,
                               const std::vector<char>& dirty) {
    write_file(path, pattern(4 * line, 1));
    auto tier = TierCache::open(four_line_config(dir, nullptr));
    const int h = tier->open_file(path, O_RDWR);
    if (h < 0 || tier->pwrite(h, dirty.data(), line, line) != static_cast<ssize_t>(line) ||
        tier->commit() != 0)
        return "could not leave a dirty line";
    tier->abandon();
    return "";
}

std::vector<char> with_the_dirty_line(const std::vector<char>& dirty) {
    std::vector<char> expected = pattern(4 * line, 1);
    std::copy(dirty.begin(), dirty.end(), expected.begin() + line);
    return expected;
}

// The engine restarted by a user who may not write the home file (or the file made read-only
// after the crash): recovery fails with the file's path and "Permission denied" and leaves the
// line in the journal; once the file is writable again the next open writes it home. Before
// session 35 recovery counted the file as missing, reset the journal, and the line was lost.
std::string a_home_file_it_may_not_write_keeps_its_line(const ScratchDir& dir) {
    const auto path = dir / "data.bin";
    const std::vector<char> dirty = pattern(line, 2);
    if (std::string wrong = leave_a_dirty_line(dir, path, dirty); !wrong.empty()) return wrong;
    if (::chmod(path.c_str(), 0400) != 0) return "chmod failed";
    try {
        auto tier = TierCache::open(config_for(dir, nullptr));
        return "the engine opened without the line: recovery written home " +
               std::to_string(tier->recovery().lines_written_home) + ", missing files " +
               std::to_string(tier->recovery().missing_files);
    } catch (const TierError& e) {
        const std::string message = e.what();
        if (message.find(path.string()) == std::string::npos ||
            message.find("Permission denied") == std::string::npos)
            return "the error names neither the file nor the cause: " + message;
    }
    if (read_file(path) != pattern(4 * line, 1)) return "the home file changed";
    if (::chmod(path.c_str(), 0600) != 0) return "chmod failed";
    auto tier = TierCache::open(config_for(dir, nullptr));
    if (tier->recovery().lines_written_home != 1) return "the line was not written home";
    if (read_file(path) != with_the_dirty_line(dirty)) return "the home file lacks the line";
    return "";
}

TEST(Recovery, AHomeFileItMayNotWriteFailsTheOpenAndKeepsItsLineForTheNext) {
    ScratchDir dir;
    const int status = test_support::exit_status_as_nobody(
        dir, [&] { return a_home_file_it_may_not_write_keeps_its_line(dir); });
    if (status == test_support::could_not_become_nobody)
        GTEST_SKIP() << "root here cannot become another user (no CAP_SETUID?), and root passes "
                        "every mode check";
    EXPECT_EQ(status, 0) << "see the child's message above";
}

// A home file deleted after the crash: its line has nowhere to go; recovery counts it and the
// engine opens.
TEST(Recovery, AHomeFileThatIsGoneIsCountedAndSkipped) {
    ScratchDir dir;
    const auto path = dir / "data.bin";
    ASSERT_EQ(leave_a_dirty_line(dir, path, pattern(line, 2)), "");
    std::filesystem::remove(path);
    auto tier = TierCache::open(config_for(dir, nullptr));
    EXPECT_EQ(tier->recovery().missing_files, 1u);
    EXPECT_EQ(tier->recovery().lines_written_home, 0u);
    EXPECT_FALSE(std::filesystem::exists(path));
}

// A directory made at the home file's path after the crash: another file is there, as after a
// rename over it, and the line is not written anywhere.
TEST(Recovery, AHomePathThatNamesADirectoryNowCountsAsReplaced) {
    ScratchDir dir;
    const auto path = dir / "data.bin";
    ASSERT_EQ(leave_a_dirty_line(dir, path, pattern(line, 2)), "");
    std::filesystem::remove(path);
    std::filesystem::create_directory(path);
    auto tier = TierCache::open(config_for(dir, nullptr));
    EXPECT_EQ(tier->recovery().lines_of_replaced_files, 1u);
    EXPECT_EQ(tier->recovery().lines_written_home, 0u);
    EXPECT_TRUE(std::filesystem::is_directory(path));
}

} // namespace
} // namespace iosig::tier
