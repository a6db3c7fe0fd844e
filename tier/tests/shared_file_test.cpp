// Several writers of one file, each through an engine of its own (the processes of a parallel job
// on one node, each with libiosig loaded, writing their parts of one output file): a line holds
// bytes of several writers, and each engine writes home only the bytes its writes changed, never
// the rest of the line as its fill read it, so that no writer's bytes are overwritten by another's
// stale copy. This is what NFS gives writers of disjoint byte ranges; readers still see another
// writer's bytes only as close-to-open consistency allows. Before session 36 the engines wrote
// whole lines home, and the last write-back of a line undid the other writers' parts of it.
#include "engine_fixture.hpp"

#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <memory>
#include <thread>
#include <unistd.h>
#include <vector>

namespace iosig::tier {
namespace {

using test_support::pattern;
using test_support::read_file;
using test_support::ScratchDir;
using test_support::small_config;
using test_support::write_file;
using test_support::write_outside;

constexpr std::size_t line = 4096;

// A writer's engine, writing home only its dirty bytes, with a cache of its own in `dir`/`name`;
// nothing goes home until the test asks.
TierConfig writer_config(const ScratchDir& dir, std::shared_ptr<IoFaults> faults = nullptr,
                         const std::string& name = "a") {
    std::filesystem::create_directories(dir / name);
    TierConfig config = small_config(dir);
    config.cache_file = dir / name / "cache.tier";
    config.dirty_bytes_only = true;
    config.faults = std::move(faults);
    return config;
}

std::unique_ptr<TierCache> engine_in(const ScratchDir& dir, const std::string& name) {
    return TierCache::open(writer_config(dir, nullptr, name));
}

// Two writers, each a contiguous half of every line (a block distribution): both halves are home
// after both fsyncs, whichever fsync comes last.
TEST(SharedFile, TwoEnginesWritingHalvesOfALineKeepEachOthersBytes) {
    for (const bool first_syncs_last : {false, true}) {
        SCOPED_TRACE(first_syncs_last ? "the first writer syncs last" : "the second syncs last");
        ScratchDir dir;
        const auto path = dir / "shared.bin";
        std::vector<char> expected = pattern(2 * line, 1);
        write_file(path, expected);
        auto first = engine_in(dir, "a");
        auto second = engine_in(dir, "b");
        const int a = first->open_file(path, O_RDWR);
        const int b = second->open_file(path, O_RDWR);
        ASSERT_GE(a, 0);
        ASSERT_GE(b, 0);
        const std::vector<char> mine = pattern(line / 2, 2), theirs = pattern(line / 2, 3);
        for (std::size_t l = 0; l < 2; ++l) {
            const auto at = static_cast<off_t>(l * line);
            ASSERT_EQ(first->pwrite(a, mine.data(), mine.size(), at),
                      static_cast<ssize_t>(line / 2));
            ASSERT_EQ(second->pwrite(b, theirs.data(), theirs.size(), at + line / 2),
                      static_cast<ssize_t>(line / 2));
            std::copy(mine.begin(), mine.end(), expected.begin() + at);
            std::copy(theirs.begin(), theirs.end(), expected.begin() + at + line / 2);
        }
        if (first_syncs_last) {
            ASSERT_EQ(second->fsync(b), 0);
            ASSERT_EQ(first->fsync(a), 0);
        } else {
            ASSERT_EQ(first->fsync(a), 0);
            ASSERT_EQ(second->fsync(b), 0);
        }
        EXPECT_EQ(read_file(path), expected);
    }
}

// Two writers taking turns with 100-byte records (a cyclic distribution: writer r writes every
// record i with i % 2 == r), so that each line holds many separate parts of each writer; both close
// without an fsync, and the engines' write-back at close puts every record home.
TEST(SharedFile, TwoEnginesWritingAlternateRecordsKeepEachOthersRecords) {
    ScratchDir dir;
    const auto path = dir / "records.bin";
    constexpr std::size_t record = 100, records = 3 * line / record;
    write_file(path, std::vector<char>(records * record, 0));
    std::vector<std::unique_ptr<TierCache>> engines;
    engines.push_back(engine_in(dir, "a"));
    engines.push_back(engine_in(dir, "b"));
    std::vector<int> handles;
    for (auto& e : engines) {
        handles.push_back(e->open_file(path, O_RDWR));
        ASSERT_GE(handles.back(), 0);
    }
    std::vector<char> expected(records * record);
    for (std::size_t i = 0; i < records; ++i) {
        const std::vector<char> bytes = pattern(record, static_cast<unsigned>(i + 10));
        const std::size_t writer = i % 2;
        ASSERT_EQ(engines[writer]->pwrite(handles[writer], bytes.data(), record,
                                          static_cast<off_t>(i * record)),
                  static_cast<ssize_t>(record));
        std::copy(bytes.begin(), bytes.end(), expected.begin() + static_cast<long>(i * record));
    }
    for (std::size_t w = 0; w < 2; ++w)
        ASSERT_EQ(engines[w]->close(handles[w]), 0);
    for (auto& e : engines)
        ASSERT_EQ(e->flush_all(), 0);
    EXPECT_EQ(read_file(path), expected);
}

// Dirty bytes that run on across a line's end go home in one write, as whole lines do: a write of
// two lines' worth starting 512 bytes into a line makes three lines dirty in part, and one write
// home (three before the parts that continue the previous line's joined its run).
TEST(SharedFile, DirtyBytesAcrossLinesGoHomeInOneWrite) {
    ScratchDir dir;
    const auto path = dir / "data.bin";
    std::vector<char> expected = pattern(4 * line, 1);
    write_file(path, expected);
    auto tier = engine_in(dir, "a");
    const int h = tier->open_file(path, O_RDWR);
    ASSERT_GE(h, 0);
    const std::vector<char> bytes = pattern(2 * line, 2);
    ASSERT_EQ(tier->pwrite(h, bytes.data(), bytes.size(), 512), static_cast<ssize_t>(2 * line));
    std::copy(bytes.begin(), bytes.end(), expected.begin() + 512);
    ASSERT_EQ(tier->fsync(h), 0);
    EXPECT_EQ(tier->stats().writebacks, 3u);
    EXPECT_EQ(tier->stats().writeback_writes, 1u);
    EXPECT_EQ(read_file(path), expected);
}

// A writer crashes with two parts of a line dirty while another writes the rest of the line at
// home: recovery writes only the crashed writer's parts (the journal's DIRTY_PART records), and
// the other's bytes stay (before them recovery wrote the whole line, as its fill had read it).
TEST(SharedFile, RecoveryWritesOnlyTheCrashedWritersBytes) {
    ScratchDir dir;
    const auto path = dir / "shared.bin";
    std::vector<char> expected = pattern(line, 1);
    write_file(path, expected);
    const std::vector<char> mine = pattern(line, 2), theirs = pattern(line, 3);
    {
        auto tier = TierCache::open(writer_config(dir));
        const int h = tier->open_file(path, O_RDWR);
        ASSERT_GE(h, 0);
        ASSERT_EQ(tier->pwrite(h, mine.data(), 2048, 0), 2048);
        ASSERT_EQ(tier->pwrite(h, mine.data() + 3000, 100, 3000), 100);
        ASSERT_EQ(tier->commit(), 0);
        tier->abandon();
    }
    write_outside(path, std::vector<char>(theirs.begin() + 2048, theirs.begin() + 3000), 2048);
    write_outside(path, std::vector<char>(theirs.begin() + 3100, theirs.end()), 3100);
    std::copy(mine.begin(), mine.begin() + 2048, expected.begin());
    std::copy(theirs.begin() + 2048, theirs.begin() + 3000, expected.begin() + 2048);
    std::copy(mine.begin() + 3000, mine.begin() + 3100, expected.begin() + 3000);
    std::copy(theirs.begin() + 3100, theirs.end(), expected.begin() + 3100);
    auto tier = TierCache::open(writer_config(dir));
    EXPECT_EQ(tier->recovery().lines_written_home, 1u);
    EXPECT_EQ(read_file(path), expected);
}

// The same after the journal was rewritten (twice, past 1 KiB, while the line stayed dirty): the
// rewritten journal keeps the line's parts.
TEST(SharedFile, ARewrittenJournalKeepsTheDirtyParts) {
    ScratchDir dir;
    const auto path = dir / "shared.bin";
    const auto other = dir / "other.bin";
    std::vector<char> expected = pattern(line, 1);
    write_file(path, expected);
    write_file(other, pattern(2 * line, 8));
    const std::vector<char> mine = pattern(line, 2), theirs = pattern(line, 3);
    {
        TierConfig config = writer_config(dir);
        config.journal_compaction_bytes = 1024;
        // Three dirty lines (this one and the other file's two, between their write and their
        // fsync) are pressure on the default bound of 16 / 4, and the flusher would write this
        // line home before the crash (1 run in 15 under ASan, session 37).
        config.max_dirty_lines = 16;
        auto tier = TierCache::open(config);
        const int h = tier->open_file(path, O_RDWR);
        const int o = tier->open_file(other, O_RDWR);
        ASSERT_GE(h, 0);
        ASSERT_GE(o, 0);
        ASSERT_EQ(tier->pwrite(h, mine.data(), 100, 0), 100);
        ASSERT_EQ(tier->pwrite(h, mine.data() + 3000, 100, 3000), 100);
        // The other file's lines written and synced home until the journal was rewritten twice.
        const std::vector<char> two = pattern(2 * line, 9);
        // The flusher looks at the journal's size once a second (writeback_delay / 2, at most 1 s).
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (tier->stats().journal_rewrites < 2 && std::chrono::steady_clock::now() < deadline) {
            ASSERT_EQ(tier->pwrite(o, two.data(), two.size(), 0), static_cast<ssize_t>(two.size()));
            ASSERT_EQ(tier->fsync(o), 0);
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        ASSERT_GE(tier->stats().journal_rewrites, 2u);
        ASSERT_EQ(tier->commit(), 0);
        tier->abandon();
    }
    write_outside(path, std::vector<char>(theirs.begin() + 100, theirs.begin() + 3000), 100);
    std::copy(mine.begin(), mine.begin() + 100, expected.begin());
    std::copy(theirs.begin() + 100, theirs.begin() + 3000, expected.begin() + 100);
    std::copy(mine.begin() + 3000, mine.begin() + 3100, expected.begin() + 3000);
    auto tier = TierCache::open(writer_config(dir));
    EXPECT_EQ(tier->recovery().lines_written_home, 1u);
    EXPECT_EQ(read_file(path), expected);
}

// One line of a file, written at two places by one writer whose journal the test fails
// (`faults`), then crashed; `expected`: what the file is to hold.
struct OneLineWriter {
    ScratchDir dir;
    std::filesystem::path path = dir / "shared.bin";
    std::vector<char> expected = pattern(line, 1);
    std::vector<char> bytes = pattern(line, 2); // what the writer writes, at the same offsets
    std::shared_ptr<IoFaults> faults = std::make_shared<IoFaults>();
    OneLineWriter() { write_file(path, expected); }
    // The writer's 100 bytes at `at` are to be in the file.
    void expect_bytes_at(std::size_t at) {
        std::copy(bytes.begin() + at, bytes.begin() + at + 100, expected.begin() + at);
    }
};

// A part the journal cannot record (its device failing) would not be written home by recovery:
// the write's bytes go home at once, and survive a crash of the process with the line's recorded
// part written home by recovery.
TEST(SharedFile, APartTheJournalRefusesGoesHomeAtOnce) {
    OneLineWriter file;
    {
        auto tier = TierCache::open(writer_config(file.dir, file.faults));
        const int h = tier->open_file(file.path, O_RDWR);
        ASSERT_GE(h, 0);
        ASSERT_EQ(tier->pwrite(h, file.bytes.data(), 100, 0), 100);
        ASSERT_EQ(tier->commit(), 0);
        file.faults->fail_now({FileRole::journal});
        ASSERT_EQ(tier->pwrite(h, file.bytes.data() + 2000, 100, 2000), 100);
        file.expect_bytes_at(2000);
        EXPECT_EQ(read_file(file.path), file.expected) << "the refused part is not home";
        file.faults->clear_failures();
        tier->abandon();
    }
    file.expect_bytes_at(0);
    auto tier = TierCache::open(writer_config(file.dir));
    EXPECT_EQ(tier->recovery().lines_written_home, 1u);
    EXPECT_EQ(read_file(file.path), file.expected);
}

// The first write of a clean line whose part the journal refuses: the line's DIRTY record is
// there, and recovery writes the whole line for a DIRTY record without parts. The engine takes the
// whole line as dirty too, so a later write to the same line records no part of its own; a part
// recorded then would have recovery write that part alone and lose the first write's bytes.
TEST(SharedFile, ALineWhoseFirstPartTheJournalRefusedIsRecoveredWhole) {
    OneLineWriter file;
    {
        auto tier = TierCache::open(writer_config(file.dir, file.faults));
        const int h = tier->open_file(file.path, O_RDWR);
        ASSERT_GE(h, 0);
        file.faults->fail_one_write(2, {FileRole::journal}); // the DIRTY record, then its part
        ASSERT_EQ(tier->pwrite(h, file.bytes.data(), 100, 0), 100);
        ASSERT_EQ(file.faults->injected_failures(), 1u);
        ASSERT_EQ(tier->pwrite(h, file.bytes.data() + 2000, 100, 2000), 100);
        ASSERT_EQ(tier->commit(), 0);
        tier->abandon();
    }
    EXPECT_EQ(read_file(file.path), file.expected) << "no byte went home before the crash";
    file.expect_bytes_at(0);
    file.expect_bytes_at(2000);
    auto tier = TierCache::open(writer_config(file.dir));
    EXPECT_EQ(tier->recovery().lines_written_home, 1u);
    EXPECT_EQ(read_file(file.path), file.expected);
}

} // namespace
} // namespace iosig::tier
