// Several writers of one file, each through an engine of its own (the processes of a parallel job
// on one node, each with libiosig loaded, writing their parts of one output file): a line holds
// bytes of several writers, and each engine writes home only the bytes its writes changed, never
// the rest of the line as its fill read it, so that no writer's bytes are overwritten by another's
// stale copy. This is what NFS gives writers of disjoint byte ranges; readers still see another
// writer's bytes only as close-to-open consistency allows. Before session 36 the engines wrote
// whole lines home, and the last write-back of a line undid the other writers' parts of it.
#include "engine_fixture.hpp"

#include <fcntl.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <memory>
#include <vector>

namespace iosig::tier {
namespace {

using test_support::pattern;
using test_support::read_file;
using test_support::ScratchDir;
using test_support::small_config;
using test_support::write_file;

constexpr std::size_t line = 4096;

// An engine with a cache of its own in `dir`/`name`.
std::unique_ptr<TierCache> engine_in(const ScratchDir& dir, const std::string& name) {
    std::filesystem::create_directories(dir / name);
    TierConfig config = small_config(dir);
    config.cache_file = dir / name / "cache.tier";
    config.dirty_bytes_only = true;
    return TierCache::open(config);
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

} // namespace
} // namespace iosig::tier
