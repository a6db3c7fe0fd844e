// Recovery without opening a cache (TierCache::recover, and the iosig-tier-recover command a node
// runs at boot): the dirty lines a crash left go home, the journal is emptied, and a cache file
// with no journal needs nothing and gets nothing made beside it. A live engine's cache is refused,
// and so is a journal this iosig cannot read, which is kept as it was.
#include "crash_config.hpp"
#include "engine/journal_format.hpp"
#include "engine_fixture.hpp"
#include "tool_run.hpp"

#include <fcntl.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>

namespace iosig::tier {
namespace {

using test_support::config_for;
using test_support::leave_a_dirty_line;
using test_support::pattern;
using test_support::read_file;
using test_support::run_tool;
using test_support::ScratchDir;
using test_support::with_the_dirty_line;
using test_support::write_file;

constexpr std::size_t line = 4096;

std::string recover_command(const std::string& arguments) {
    return std::string(IOSIG_BINARY_DIR) + "/bin/iosig-tier-recover " + arguments;
}

TEST(RecoverAlone, WritesTheDirtyLinesHomeAndEmptiesTheJournal) {
    ScratchDir dir;
    const auto path = dir / "data.bin";
    const std::vector<char> dirty = pattern(line, 2);
    ASSERT_EQ(leave_a_dirty_line(dir, path, dirty), "");
    const RecoveryReport report = TierCache::recover(dir / "cache.tier");
    EXPECT_TRUE(report.journal_found);
    EXPECT_EQ(report.dirty_lines, 1u);
    EXPECT_EQ(report.lines_written_home, 1u);
    EXPECT_EQ(read_file(path), with_the_dirty_line(dirty));
    // The next open finds an empty journal: nothing written twice.
    auto tier = TierCache::open(config_for(dir, nullptr));
    EXPECT_TRUE(tier->recovery().journal_found);
    EXPECT_EQ(tier->recovery().dirty_lines, 0u);
}

TEST(RecoverAlone, WithNoJournalThereIsNothingToDoAndNothingIsMade) {
    ScratchDir dir;
    const RecoveryReport report = TierCache::recover(dir / "cache.tier");
    EXPECT_FALSE(report.journal_found);
    EXPECT_EQ(report.dirty_lines, 0u);
    EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

// A live engine holds its journal's lock: recovery would race its appends.
TEST(RecoverAlone, ACacheALiveEngineHoldsIsRefused) {
    ScratchDir dir;
    const auto path = dir / "data.bin";
    write_file(path, pattern(2 * line, 1));
    auto tier = TierCache::open(config_for(dir, nullptr));
    const int h = tier->open_file(path, O_RDWR);
    ASSERT_GE(h, 0);
    try {
        TierCache::recover(dir / "cache.tier");
        ADD_FAILURE() << "recovery ran on a live engine's cache";
    } catch (const TierError& e) {
        EXPECT_NE(std::string(e.what()).find("in use by another process"), std::string::npos)
            << e.what();
    }
    const std::vector<char> bytes = pattern(line, 3);
    EXPECT_EQ(tier->pwrite(h, bytes.data(), line, 0), static_cast<ssize_t>(line));
    EXPECT_EQ(tier->fsync(h), 0);
}

TEST(RecoverAlone, TheCommandSaysWhatItWroteHome) {
    ScratchDir dir;
    const auto path = dir / "data.bin";
    const std::vector<char> dirty = pattern(line, 2);
    ASSERT_EQ(leave_a_dirty_line(dir, path, dirty), "");
    const auto cache = (dir / "cache.tier").string();
    const auto run = run_tool(recover_command(cache + " 2>&1"));
    EXPECT_EQ(run.status, 0) << run.output;
    // (A power cut may be reported too: the journal was written under this process's simulated
    // power cuts, which the command's page cache does not count.)
    EXPECT_EQ(run.output.rfind(cache + ": 1 dirty lines in the journal, 1 written home", 0), 0u)
        << run.output;
    EXPECT_EQ(read_file(path), with_the_dirty_line(dirty));
    const auto again = run_tool(recover_command(cache + " 2>&1"));
    EXPECT_EQ(again.status, 0) << again.output;
    EXPECT_EQ(again.output, cache + ": 0 dirty lines in the journal, 0 written home\n");
}

// --json, over two cache files: one with a dirty line whose file is gone, one with no journal.
TEST(RecoverAlone, TheCommandReportsEachCacheFileInJson) {
    ScratchDir dir;
    const auto path = dir / "data.bin";
    ASSERT_EQ(leave_a_dirty_line(dir, path, pattern(line, 2)), "");
    std::filesystem::remove(path);
    const auto cache = (dir / "cache.tier").string();
    const auto none = (dir / "none.tier").string();
    const auto run = run_tool(recover_command("--json " + cache + " " + none));
    ASSERT_EQ(run.status, 0) << run.output;
    const auto reports = nlohmann::json::parse(run.output);
    EXPECT_EQ(reports.at(cache).at("dirty_lines"), 1);
    EXPECT_EQ(reports.at(cache).at("missing_files"), 1);
    EXPECT_EQ(reports.at(cache).at("lines_written_home"), 0);
    EXPECT_EQ(reports.at(none).at("journal_found"), false);
}

// A journal of a newer iosig: exit status 1, the journal named on standard error, and kept byte
// for byte; the other cache files are still recovered.
TEST(RecoverAlone, TheCommandFailsOnAJournalItCannotReadAndKeepsIt) {
    ScratchDir dir;
    const auto journal = dir / "newer.tier.journal";
    std::vector<char> bytes;
    {
        using namespace detail::journal_format;
        const HeaderPayload h{magic, 4096, 4, version + 1, 0};
        encode_record(bytes, header, &h, sizeof h);
    }
    write_file(journal, bytes);
    const auto path = dir / "data.bin";
    const std::vector<char> dirty = pattern(line, 2);
    ASSERT_EQ(leave_a_dirty_line(dir, path, dirty), "");
    const auto run = run_tool(recover_command((dir / "newer.tier").string() + " " +
                                              (dir / "cache.tier").string() + " 2>&1"));
    EXPECT_EQ(run.status, 1) << run.output;
    EXPECT_NE(run.output.find("iosig-tier-recover: " + journal.string()), std::string::npos)
        << run.output;
    EXPECT_NE(
        run.output.find("journal version " + std::to_string(detail::journal_format::version + 1)),
        std::string::npos)
        << run.output;
    EXPECT_EQ(read_file(journal), bytes);
    EXPECT_EQ(read_file(path), with_the_dirty_line(dirty));
}

TEST(RecoverAlone, TheCommandWithoutACacheFileExits2) {
    const auto run = run_tool(recover_command("2>&1"));
    EXPECT_EQ(run.status, 2) << run.output;
    EXPECT_NE(run.output.find("cache_files is required"), std::string::npos) << run.output;
}

} // namespace
} // namespace iosig::tier
