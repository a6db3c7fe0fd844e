// The metadata journal beside the cache file (<cache file>.journal): an append-only log of which
// slot holds which dirty line of which home file, so that recovery after a crash finds every dirty
// line still in the cache file and writes it home (docs/tier.md, "The journal and crash recovery").
//
// Records: {u32 crc32(type..payload), u16 type, u16 length, payload}. Replay stops at the first
// record whose length or checksum is wrong (a torn append at the moment of the crash).
#pragma once

#include "dirty_parts.hpp"
#include "iosig/tier/io.hpp"

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace iosig::tier::detail {

struct DirtyRecord {
    std::uint32_t file = 0;
    std::uint64_t line = 0;
    std::uint64_t end = 0; // replay: the byte offset where the record ends in the journal
    // The bytes of the line its writes changed, from DIRTY_PART records (an engine with
    // TierConfig::dirty_bytes_only): recovery writes only these. Empty: the whole line.
    std::vector<ByteRange> parts;
};

// Which file a home path named when it was journaled: recovery writes its lines into no other.
struct JournaledIdentity {
    std::uint64_t inode = 0;
    std::int64_t born_ns = 0;       // 0: not known (a FILE_AT_INODE record, or no birth time)
    FileSystemIdentity file_system; // where it was: a path that leads elsewhere now is unmounted
    FileHandle handle; // finds it renamed or moved (a FILE_HANDLE record; empty: not known)
};

// What a replay found.
struct JournalState {
    bool valid = false; // a header was found
    std::uint64_t line_size = 0;
    std::uint64_t slots = 0;
    std::map<std::uint32_t, std::string> files; // id -> home path
    // id -> the home file's inode number (and birth time), for files journaled with it
    // (FILE_AT_INODE and FILE_BORN records)
    std::map<std::uint32_t, JournaledIdentity> identities;
    std::map<std::uint32_t, DirtyRecord>
        dirty; // slot -> line, for slots whose last record is DIRTY
    std::map<std::uint32_t, std::int64_t>
        sizes; // file -> logical size (largest after the last truncate)
    // file -> length of its last truncate, while no TRUNCATE_DONE record says that the home file
    // was cut: recovery cuts it then, and only then (cutting it again would undo what the file
    // grew by since).
    std::map<std::uint32_t, std::int64_t> truncated;
    std::uint64_t records = 0;
    bool torn_tail = false;
    // The page cache the journal was written under (page_cache_instance; 0: unknown), and the
    // end of its last COMMIT: a DIRTY record ending there or before is backed by durable data.
    std::uint64_t page_cache = 0;
    std::uint64_t committed_end = 0;

    // After a power cut only committed DIRTY records can be trusted: an uncommitted one may
    // name a slot whose durable bytes are still the previous line's. Drops the others from
    // `dirty`; returns how many.
    std::uint64_t drop_uncommitted();
};

// Where a commit stands (Journal::commit_point): the journal's file and the end of its records.
struct CommitPoint {
    std::uint64_t file_generation = 0;
    std::uint64_t end = 0;
    bool nothing_new = true; // the last COMMIT already covers every record
};

class Journal {
public:
    // Opens (creating if needed) and locks the journal; throws std::runtime_error naming the file
    // when it cannot be opened or another process holds it.
    Journal(const std::filesystem::path& path, std::shared_ptr<IoFaults> faults);
    ~Journal();

    JournalState replay();
    // Starts an empty journal for a cache of this geometry (durable when it returns 0).
    int reset(std::uint64_t line_size, std::uint64_t slots);
    // page_cache_instance() of the journal when it was opened.
    std::uint64_t page_cache() const { return page_cache_; }

    // Appends; returns the record's sequence number, or -errno. Not durable until sync_to().
    // Names file `id`: its path, inode and birth time (recovery writes its lines only into that
    // file), and its handle when known (recovery finds it by that where the path no longer leads
    // to it). A later record for the same id names the path it was last opened by.
    std::int64_t append_file(std::uint32_t id, const std::string& path, JournaledIdentity identity);
    // The engine forgot file `id` (no line of it is cached or dirty, no cut unfinished): a
    // rewrite leaves its FILE record out, so that the journal does not grow with every file an
    // engine ever opened. Appends nothing.
    void forget_file(std::uint32_t id);
    // The id of a forgotten file now names another (Engine::take_file_id_locked). The journal may
    // still hold the old file's records under it: the next record that names the id goes out
    // behind a FILE_FORGOTTEN record, in the same write, so that replay drops what the old
    // file's records said before it reads the new file's. Appends nothing itself.
    void reuse_file_id(std::uint32_t id);
    std::int64_t append_dirty(std::uint32_t slot, std::uint32_t file, std::uint64_t line,
                              std::int64_t size);
    std::int64_t append_clean(std::uint32_t slot);
    std::int64_t append_size(std::uint32_t file, std::int64_t size);
    // The size the journal's records give the file, as recovery would read it (a DIRTY, SIZE or
    // TRUNCATE record it took; a refused one changes nothing); -1 when none names it.
    std::int64_t journaled_size(std::uint32_t file) const;
    // Bytes of the line in `slot` that a write changed (after the slot's DIRTY record).
    std::int64_t append_dirty_part(std::uint32_t slot, ByteRange part);
    std::int64_t append_truncate(std::uint32_t file, std::int64_t size);
    std::int64_t append_truncate_done(std::uint32_t file);

    // The commit, in two steps around a sync of the cache file (Engine::commit_journal): the
    // point is noted first; every DIRTY record before it was appended after its line's data was
    // written, so once the cache file is synced, append_commit(point) may say so. Returns the
    // COMMIT record's sequence number, 0 when there is nothing to commit (nothing new, or the
    // journal was rewritten since: a rewrite commits all it holds), or -errno.
    CommitPoint commit_point() const;
    std::int64_t append_commit(const CommitPoint& point);

    // A record that could not be appended, where its sequence number is awaited: sync_to() of it
    // always fails.
    static constexpr std::int64_t never_appended = std::numeric_limits<std::int64_t>::max();

    // Makes every record up to `sequence` durable (group commit: one fdatasync covers all appends
    // made before it). `before` runs first, under the commit lock (the engine syncs the cache file
    // there when a DIRTY record must not reach the disk before the line's data).
    template <class Before>
    int sync_to(std::int64_t sequence, Before&& before);
    int sync_to(std::int64_t sequence) {
        return sync_to(sequence, [] { return 0; });
    }
    // The rewrite (journal_rewrite.cpp): the journal is replaced, atomically (written beside,
    // synced, renamed), by one that holds only the header, the files, their sizes, the lines still
    // dirty and what was appended meanwhile. In two steps, so that the caller's lock is held only
    // for the first:
    // begin_rewrite() notes the files and sizes journaled so far and from then on keeps a copy of
    // every record appended (the tail); the caller lists its dirty lines in the same step, with
    // no append in between.
    void begin_rewrite();
    // Writes the new journal: the header, the noted files and sizes, `dirty` (slot -> line, each
    // slot once, in any order), then, with appends held, the tail; runs `before` (the engine syncs
    // the cache file there: no DIRTY record may be durable before its line's data), syncs it and
    // renames it over the journal. Every record appended so far is durable when it returns 0; on
    // failure the old journal, which every append still reached, stays. `held_seconds`: how long
    // appends were held.
    int finish_rewrite(const std::vector<std::pair<std::uint32_t, DirtyRecord>>& dirty,
                       const std::function<int()>& before, double& held_seconds);
    std::int64_t appended() const;
    std::uint64_t bytes() const;

private:
    std::int64_t append(std::uint16_t type, const void* payload, std::uint16_t length);
    std::int64_t append_locked(std::uint16_t type, const void* payload, std::uint16_t length);
    int write_locked(const std::vector<char>& records); // at the end; 0 or -errno
    // Records naming file `id` (reuse_file_id): the FILE_FORGOTTEN record first if it is owed
    // (returns how many records it added), then the written records, kept for a rewrite's tail.
    std::int64_t put_owed_forget_locked(std::vector<char>& records, std::uint32_t id);
    std::int64_t write_records_locked(const std::vector<char>& records, std::uint32_t id,
                                      std::int64_t count);
    std::int64_t append_naming_file_locked(std::uint32_t id, std::uint16_t type,
                                           const void* payload, std::uint16_t length);
    int sync_locked();

    std::filesystem::path path_;
    std::unique_ptr<File> file_;
    int lock_fd_ = -1; // flock: one engine per cache file
    mutable std::mutex append_mutex_;
    std::mutex sync_mutex_;
    std::uint64_t end_ = 0;
    std::shared_ptr<IoFaults> faults_;
    std::uint64_t line_size_ = 0, slots_ = 0;
    struct NamedFile {
        std::string path;
        JournaledIdentity identity;
    };
    std::map<std::uint32_t, NamedFile> files_;    // every FILE record appended
    std::map<std::uint32_t, std::int64_t> sizes_; // the latest size a record of each file took
    // Each file's last TRUNCATE record while its home file is not known to be cut (no
    // append_truncate_done since): a rewrite keeps it, so that recovery still makes the cut.
    std::map<std::uint32_t, std::int64_t> cuts_;
    // Reused ids whose FILE_FORGOTTEN record has not been written yet (reuse_file_id).
    std::set<std::uint32_t> forget_owed_;
    std::int64_t appended_ = 0;
    std::int64_t synced_ = 0;
    std::uint64_t page_cache_ = 0;
    std::uint64_t file_generation_ = 0; // (append_mutex_) one more at every rewrite
    std::uint64_t committed_end_ = 0;   // (append_mutex_) the end the last COMMIT covers
    // (append_mutex_) where nothing needs a commit: the end after the header, a rewrite, or a
    // COMMIT that covered every record before it
    std::uint64_t settled_end_ = 0;
    // Between begin_rewrite and finish_rewrite (append_mutex_): the records appended since, and
    // the files, sizes, cuts and owed FILE_FORGOTTEN records as they were.
    bool rewriting_ = false;
    std::vector<char> tail_;
    std::map<std::uint32_t, NamedFile> rewrite_files_;
    std::map<std::uint32_t, std::int64_t> rewrite_sizes_;
    std::map<std::uint32_t, std::int64_t> rewrite_cuts_;
    std::set<std::uint32_t> rewrite_forget_owed_;
    void end_rewrite_locked();
};

template <class Before>
int Journal::sync_to(std::int64_t sequence, Before&& before) {
    std::lock_guard lock(sync_mutex_);
    if (synced_ >= sequence) return 0;
    if (sequence > appended()) return -EIO; // never_appended: no sync can make it durable
    if (const int e = before(); e < 0) return e;
    return sync_locked();
}

} // namespace iosig::tier::detail
