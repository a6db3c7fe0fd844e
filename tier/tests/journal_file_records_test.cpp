// How the journal names home files: FILE records (path alone, before session 32), FILE_AT_INODE
// (path and inode, sessions 32-34) and FILE_BORN (path, inode, birth time and file system, since
// session 35), each FILE_BORN followed by a FILE_HANDLE record where the file system gives the
// file a handle (since session 36). Replay reads them all; a rewrite keeps what the last records
// of each file said. A FILE_FORGOTTEN record (since session 41) ends what the records before it
// said of an id, which a new file has from then on. What recovery does with them:
// file_identity_test.cpp, recovery_access_test.cpp and recovery_moved_file_test.cpp.
#include "engine/journal.hpp"
#include "engine/journal_format.hpp"
#include "engine_fixture.hpp"

#include <cstring>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace iosig::tier {
namespace {

using test_support::ScratchDir;
using test_support::write_file;

// A rewrite keeps each file's inode, birth time, file system and handle, and the path it was
// named by last.
TEST(FileIdentity, ARewriteKeepsEachFilesIdentity) {
    ScratchDir dir;
    detail::Journal journal(dir / "cache.journal", nullptr);
    ASSERT_EQ(journal.reset(4096, 8), 0);
    const FileHandle handle{1, std::string("\x4d\x00\x00\x00\x2a\x8f\x11\x05", 8)};
    const detail::JournaledIdentity first{77, 1'700'000'000'000'000'001, {0xef53, 42}, handle};
    const detail::JournaledIdentity second{78, 0, {}, {}};
    ASSERT_GT(journal.append_file(1, "/data/first.bin", first), 0);
    ASSERT_GT(journal.append_file(2, "/data/second.bin", second), 0);
    ASSERT_GT(journal.append_file(1, "/data/first-renamed.bin", first), 0);
    ASSERT_GT(journal.append_dirty(0, 1, 3, 4 * 4096), 0);
    journal.begin_rewrite();
    double held = 0;
    ASSERT_EQ(
        journal.finish_rewrite({{0, detail::DirtyRecord{1, 3, 0, {}}}}, [] { return 0; }, held), 0);
    const detail::JournalState state = journal.replay();
    ASSERT_TRUE(state.valid);
    EXPECT_EQ(state.files.at(1), "/data/first-renamed.bin");
    EXPECT_EQ(state.identities.at(1).inode, 77u);
    EXPECT_EQ(state.identities.at(1).born_ns, 1'700'000'000'000'000'001);
    EXPECT_EQ(state.identities.at(1).file_system, (FileSystemIdentity{0xef53, 42}));
    EXPECT_EQ(state.identities.at(1).handle, handle);
    EXPECT_EQ(state.files.at(2), "/data/second.bin");
    EXPECT_EQ(state.identities.at(2).inode, 78u);
    EXPECT_EQ(state.identities.at(2).born_ns, 0);
    EXPECT_FALSE(state.identities.at(2).file_system.known());
    EXPECT_FALSE(state.identities.at(2).handle.known());
}

// A file named while a rewrite is under way (between begin_rewrite, which notes the files named so
// far, and finish_rewrite) is in the rewritten journal too, with its handle: its records are in
// the tail the rewrite appends.
TEST(FileIdentity, AFileNamedDuringARewriteIsInTheRewrittenJournal) {
    ScratchDir dir;
    detail::Journal journal(dir / "cache.journal", nullptr);
    ASSERT_EQ(journal.reset(4096, 8), 0);
    ASSERT_GT(journal.append_file(1, "/data/before.bin", {70, 0, {}, {}}), 0);
    journal.begin_rewrite();
    const FileHandle handle{1, "during"};
    ASSERT_GT(journal.append_file(2, "/data/during.bin", {71, 5, {0xef53, 9}, handle}), 0);
    ASSERT_GT(journal.append_dirty(0, 2, 0, 4096), 0);
    double held = 0;
    ASSERT_EQ(journal.finish_rewrite({}, [] { return 0; }, held), 0);
    const detail::JournalState state = journal.replay();
    ASSERT_TRUE(state.valid);
    EXPECT_EQ(state.files.at(1), "/data/before.bin");
    EXPECT_EQ(state.files.at(2), "/data/during.bin");
    EXPECT_EQ(state.identities.at(2).handle, handle);
    EXPECT_EQ(state.dirty.at(0).file, 2u);
}

// A dirty line's DIRTY_PART records name the bytes its writes changed: replay merges them, a new
// DIRTY record of the slot starts afresh and a CLEAN one drops them; a rewrite keeps them.
TEST(DirtyParts, TheJournalKeepsTheBytesADirtyLineChanged) {
    ScratchDir dir;
    detail::Journal journal(dir / "cache.journal", nullptr);
    ASSERT_EQ(journal.reset(4096, 8), 0);
    ASSERT_GT(journal.append_file(1, "/data/f.bin", {70, 0, {}, {}}), 0);
    ASSERT_GT(journal.append_dirty(0, 1, 3, 4 * 4096), 0);
    ASSERT_GT(journal.append_dirty_part(0, {0, 100}), 0);
    ASSERT_GT(journal.append_dirty_part(0, {200, 300}), 0);
    ASSERT_GT(journal.append_dirty_part(0, {100, 150}), 0);
    ASSERT_GT(journal.append_dirty(1, 1, 0, 4 * 4096), 0);
    ASSERT_GT(journal.append_dirty_part(1, {5, 6}), 0);
    ASSERT_GT(journal.append_dirty(1, 1, 1, 4 * 4096), 0); // the slot holds another line now
    ASSERT_GT(journal.append_dirty(2, 1, 2, 4 * 4096), 0);
    ASSERT_GT(journal.append_dirty_part(2, {0, 10}), 0);
    ASSERT_GT(journal.append_clean(2), 0);
    const std::vector<detail::ByteRange> parts{{0, 150}, {200, 300}};
    detail::JournalState state = journal.replay();
    EXPECT_EQ(state.dirty.at(0).parts, parts);
    EXPECT_TRUE(state.dirty.at(1).parts.empty());
    EXPECT_EQ(state.dirty.count(2), 0u);
    journal.begin_rewrite();
    double held = 0;
    ASSERT_EQ(journal.finish_rewrite(
                  {{0, detail::DirtyRecord{1, 3, 0, parts}}, {1, detail::DirtyRecord{1, 1, 0, {}}}},
                  [] { return 0; }, held),
              0);
    state = journal.replay();
    EXPECT_EQ(state.dirty.at(0).parts, parts);
    EXPECT_TRUE(state.dirty.at(1).parts.empty());
}

// A journal written before session 32 names its files by path alone (FILE records), one written
// before session 35 by path and inode (FILE_AT_INODE): replay still reads both, with no inode or
// birth time to check where the record has none; a FILE_BORN record gives them, and the file
// system.
TEST(FileIdentity, JournalsOfEarlierFileRecordsAreStillRead) {
    ScratchDir dir;
    using namespace detail::journal_format;
    std::vector<char> bytes;
    const HeaderPayload h{magic, 4096, 8, 2, 0}; // version 2, as sessions 30-34 wrote
    encode_record(bytes, header, &h, sizeof h);
    const auto record = [&](Type type, std::uint32_t id, const std::vector<char>& between,
                            const std::string& path) {
        std::vector<char> payload(4);
        std::memcpy(payload.data(), &id, 4);
        payload.insert(payload.end(), between.begin(), between.end());
        payload.insert(payload.end(), path.begin(), path.end());
        encode_record(bytes, type, payload.data(), static_cast<std::uint16_t>(payload.size()));
    };
    record(file, 1, {}, "/data/paths-alone.bin");
    const std::uint64_t inode = 77;
    std::vector<char> inode_bytes(8);
    std::memcpy(inode_bytes.data(), &inode, 8);
    record(file_at_inode, 2, inode_bytes, "/data/at-inode.bin");
    const std::vector<char> born =
        file_payload(3, 78, 1'700'000'000'123'456'789, 0x6969, 7, "/data/born.bin");
    encode_record(bytes, file_born, born.data(), static_cast<std::uint16_t>(born.size()));
    write_file(dir / "cache.journal", bytes);
    const detail::JournalState state = detail::Journal(dir / "cache.journal", nullptr).replay();
    ASSERT_TRUE(state.valid);
    EXPECT_EQ(state.files.at(1), "/data/paths-alone.bin");
    EXPECT_EQ(state.identities.count(1), 0u);
    EXPECT_EQ(state.files.at(2), "/data/at-inode.bin");
    EXPECT_EQ(state.identities.at(2).inode, 77u);
    EXPECT_EQ(state.identities.at(2).born_ns, 0);
    EXPECT_EQ(state.files.at(3), "/data/born.bin");
    EXPECT_EQ(state.identities.at(3).inode, 78u);
    EXPECT_EQ(state.identities.at(3).born_ns, 1'700'000'000'123'456'789);
    EXPECT_EQ(state.identities.at(3).file_system, (FileSystemIdentity{0x6969, 7}));
}

// A FILE_HANDLE record gives the handle to the file its FILE_BORN record named; a later FILE_BORN
// record of that file without one (another file in its inode number) leaves it none; one whose
// file no record named (its FILE_BORN record torn) names nothing. A handle longer than any
// file system gives (128 bytes) is a record this iosig does not know: the journal is refused.
TEST(FileIdentity, AFileHandleRecordGoesToTheFileNamedBeforeIt) {
    ScratchDir dir;
    using namespace detail::journal_format;
    const auto journal_with = [&](const std::string& last_handle) {
        std::vector<char> bytes;
        const HeaderPayload h{magic, 4096, 8, version, 0};
        encode_record(bytes, header, &h, sizeof h);
        const auto named = [&](std::uint32_t id, std::uint64_t inode) {
            const std::vector<char> born = file_payload(id, inode, 5, 0xef53, 9, "/data/f.bin");
            encode_record(bytes, file_born, born.data(), static_cast<std::uint16_t>(born.size()));
        };
        const auto handle = [&](std::uint32_t id, const std::string& of) {
            const std::vector<char> payload = handle_payload(id, 1, of);
            encode_record(bytes, file_handle, payload.data(),
                          static_cast<std::uint16_t>(payload.size()));
        };
        named(1, 70);
        handle(1, "first");
        named(2, 71);
        handle(2, "second");
        named(2, 72); // reborn: no handle known
        handle(3, "nobody's");
        handle(1, last_handle);
        write_file(dir / "cache.journal", bytes);
        return detail::Journal(dir / "cache.journal", nullptr).replay();
    };
    const detail::JournalState state = journal_with("first again");
    ASSERT_TRUE(state.valid);
    EXPECT_EQ(state.identities.at(1).handle, (FileHandle{1, "first again"}));
    EXPECT_EQ(state.identities.at(2).inode, 72u);
    EXPECT_FALSE(state.identities.at(2).handle.known());
    EXPECT_EQ(state.identities.count(3), 0u);
    EXPECT_THROW(journal_with(std::string(129, 'h')), std::runtime_error);
}

// The id of a forgotten file, handed to a new file (Journal::reuse_file_id): its first record
// after that, whatever it is, goes out behind a FILE_FORGOTTEN record, and replay keeps nothing
// the old file's records said: path, identity, size, an unfinished cut, a DIRTY record whose CLEAN
// the journal refused.
TEST(FileIdentity, ReplayKeepsNothingTheRecordsOfAReusedIdsOldFileSaid) {
    ScratchDir dir;
    detail::Journal journal(dir / "cache.journal", nullptr);
    ASSERT_EQ(journal.reset(4096, 8), 0);
    ASSERT_GT(journal.append_file(1, "/data/old.bin", {10, 1, {}, {}}), 0);
    ASSERT_GT(journal.append_dirty(0, 1, 5, 64 << 10), 0); // its CLEAN never appended
    ASSERT_GT(journal.append_truncate(1, 32 << 10), 0);    // nor its TRUNCATE_DONE
    ASSERT_GT(journal.append_size(1, 48 << 10), 0);
    ASSERT_GT(journal.append_file(3, "/data/other-old.bin", {30, 3, {}, {}}), 0);
    ASSERT_GT(journal.append_size(3, 96 << 10), 0);
    journal.forget_file(1);
    journal.forget_file(3);
    journal.reuse_file_id(1);
    journal.reuse_file_id(3);
    ASSERT_GT(journal.append_file(1, "/data/new.bin", {11, 2, {}, {}}), 0);
    ASSERT_GT(journal.append_dirty(2, 1, 0, 100), 0);
    ASSERT_GT(journal.append_size(3, 10), 0); // the first record naming 3 again is a SIZE
    const detail::JournalState state = journal.replay();
    ASSERT_TRUE(state.valid);
    EXPECT_EQ(state.files.at(1), "/data/new.bin");
    EXPECT_EQ(state.identities.at(1).inode, 11u);
    EXPECT_EQ(state.sizes.at(1), 100);
    EXPECT_FALSE(state.truncated.contains(1));
    EXPECT_FALSE(state.dirty.contains(0)) << "the old file's line";
    ASSERT_TRUE(state.dirty.contains(2));
    EXPECT_EQ(state.dirty.at(2).file, 1u);
    EXPECT_FALSE(state.files.contains(3));
    EXPECT_EQ(state.sizes.at(3), 10);
}

// A rewrite begun before the id's old file was forgotten copies its records into the new journal:
// the new file's first record still goes out behind a FILE_FORGOTTEN record. One begun after the
// reuse writes none of them, and none is owed after it.
TEST(FileIdentity, ARewriteKeepsAForgetOwedOnlyWhileItCopiedTheOldFilesRecords) {
    ScratchDir dir;
    detail::Journal journal(dir / "cache.journal", nullptr);
    ASSERT_EQ(journal.reset(4096, 8), 0);
    ASSERT_GT(journal.append_file(4, "/data/old.bin", {40, 1, {}, {}}), 0);
    ASSERT_GT(journal.append_truncate(4, 50 << 10), 0); // a cut not known to be made
    journal.begin_rewrite();                            // notes file 4 and its cut
    journal.forget_file(4);
    journal.reuse_file_id(4);
    double held = 0;
    ASSERT_EQ(journal.finish_rewrite({}, [] { return 0; }, held), 0);
    ASSERT_EQ(journal.replay().truncated.at(4), 50 << 10) << "the rewrite copied the old cut";
    ASSERT_GT(journal.append_file(4, "/data/new.bin", {41, 2, {}, {}}), 0);
    detail::JournalState state = journal.replay();
    EXPECT_EQ(state.files.at(4), "/data/new.bin");
    EXPECT_FALSE(state.truncated.contains(4)) << "the old file's cut would be made in the new one";

    // Reused before the rewrite began: the rewrite leaves the old file out.
    journal.forget_file(4);
    journal.reuse_file_id(4);
    journal.begin_rewrite();
    ASSERT_EQ(journal.finish_rewrite({}, [] { return 0; }, held), 0);
    const std::int64_t before = journal.appended();
    ASSERT_GT(journal.append_file(4, "/data/newer.bin", {42, 3, {}, {}}), 0);
    EXPECT_EQ(journal.appended(), before + 1) << "a FILE_FORGOTTEN record no longer owed";
    state = journal.replay();
    EXPECT_EQ(state.files.at(4), "/data/newer.bin");
}

} // namespace
} // namespace iosig::tier
