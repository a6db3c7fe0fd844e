// What the engine knows of one home file (Engine::files_ in engine_impl.hpp): its identity, its
// descriptors, its sizes, and the state its calls share.
#pragma once

#include "home_io.hpp"
#include "journal.hpp"
#include "range_lock.hpp"

#include <atomic>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>

namespace iosig::tier::detail {

struct HomeFile {
    // Its lines' keys carry it (Engine::key_of). Once every id has been handed out, a forgotten
    // file's is handed out again (Engine::take_file_id_locked).
    std::uint32_t id = 0;
    // Never handed out again (Engine::files_made_): tells a line the prefetch buffer kept of a
    // forgotten file from the same line of the file that has its id now.
    std::uint64_t incarnation = 0;
    std::string path;               // the path it was last opened by
    std::string opened_as;          // ... as the caller gave it, made absolute (files_mutex_)
    std::uint64_t inode = 0;        // journaled with the path: recovery writes into no other file
    std::int64_t born_ns = 0;       // ... with its birth time (FileStatus::born_ns)
    FileSystemIdentity file_system; // ... and its file system
    FileHandle handle;              // ... and its handle, which finds it after a rename
    std::uint64_t device = 0;
    HomeIo io;
    bool writable = false;
    std::int64_t size = 0;      // logical size, cached writes included
    std::int64_t home_size = 0; // size of the home file itself (lines beyond it need no fill)
    std::uint32_t handles = 0;
    std::uint64_t lines_in_writeback = 0; // (mutex_) claimed by flush_slots and not yet finished
    std::uint64_t line_end = 0; // (mutex_) every line of the file in the index lies below it
    std::atomic<std::uint64_t> write_generation{0}; // invalidates prefetches that raced a write
    // Since the last fsync a write went home past the cache (the journal's CLEAN records must be
    // durable with it), or a truncate appended its TRUNCATE_DONE record (it must be durable before
    // recovery could cut the bytes fsync made durable): the next fsync syncs the journal, and so
    // does a release of the file, which may be forgotten after it (Engine::sync_journal_for).
    std::atomic<bool> journal_sync_at_fsync{false};
    // Bytes went home since the last sync of the home file other than by a write-back (which syncs
    // what it writes): the sequential bypass, a write whose size the journal refused, a truncate.
    // A release syncs such a file first, as flush_all would have.
    std::atomic<bool> home_unsynced{false};
    // The home file was cut but the journal did not take its TRUNCATE_DONE record: fsync appends
    // it, and fails while it cannot.
    std::atomic<bool> truncate_done_unrecorded{false};
    // The length of a truncate that failed after it had cut the file in the engine (its lines
    // beyond the end dropped, its size set) but before it had cut the home file, or -1. The home
    // file may still hold the cut bytes: a write beyond this length and an fsync first finish the
    // cut (Engine::finish_cut) and fail while they cannot, as no byte may go home beyond it before
    // it is cut.
    std::atomic<std::int64_t> unfinished_cut{-1};
    // Whether bytes up to `end` reach beyond an unfinished cut.
    bool reaches_beyond_unfinished_cut(std::int64_t end) const {
        const std::int64_t cut = unfinished_cut.load();
        return cut >= 0 && end > cut;
    }
    // (mutex_) Its FILE record was appended: only then may a DIRTY record name the file, as
    // recovery finds the home file by it.
    bool journaled = false;
    // (mutex_) Another program made the file smaller while no handle was open, and the journal
    // refused the record that brings its size there down to the new one (recovery takes the
    // largest size since the last TRUNCATE record): no line of it may be recorded dirty until
    // that record is in (Engine::record_size_from_home_locked).
    bool size_record_owed = false;
    // (files_mutex_) The file as its last handle left it, every line home: an open that finds
    // another version drops its cached lines (Engine::forget_lines; close-to-open consistency).
    std::optional<FileVersion> closed_version;
    // (files_mutex_) Its last close could not get every line home: the version and the idle
    // listing wait for a flush that does (Engine::settle_failed_closes).
    bool close_unsettled = false;
    // (files_mutex_) Its place in Engine::idle_files_ while it is idle: no handle open, every line
    // home, its descriptors still open. `idle_stamp` counts its listings, so that a release that
    // synced it outside the lock sees whether it was opened meanwhile.
    std::optional<std::list<std::uint32_t>::iterator> idle_entry;
    std::uint64_t idle_stamp = 0;
    bool unlinked = false; // (files_mutex_) its last name was gone at its last close
    // (mutex_) An open is dropping the lines of the file as another program changed it: every
    // other open of it waits until they are gone before it returns a handle.
    bool forgetting = false;
    std::mutex append_mutex; // appends and truncates of the file, one at a time
    RangeLock ranges;        // each read, write and truncate is one step for the others

    // How the journal names it (with `path`).
    JournaledIdentity journaled_identity() const { return {inode, born_ns, file_system, handle}; }
};

} // namespace iosig::tier::detail
