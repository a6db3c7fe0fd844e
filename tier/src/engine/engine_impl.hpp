// The engine behind TierCache (engine.hpp). Split over engine_open.cpp (open, shutdown; recovery
// is recovery.cpp),
// engine_files.cpp (home files and handles: open_file, close, close-to-open consistency),
// engine_lines.cpp (line allocation, fills, leases), engine_dirty.cpp (marking lines dirty, the
// bytes a dirty line holds, the journal's commit),
// engine_idle.cpp (releasing and forgetting files no handle has open, the releaser thread),
// engine_data.cpp (the read/write paths), engine_truncate.cpp (ftruncate), engine_writeback.cpp
// (the write-back of a set of lines), engine_flush.cpp (fsync, flush_all, commit, the flusher
// thread), engine_compaction.cpp (the journal's rewrite) and engine_prefetch.cpp (the prefetch
// buffer and its worker).
//
// Locking, outermost first: HomeFile::append_mutex (appends and truncates) -> HomeFile::ranges
// (the bytes of a read, write or truncate, for the whole call) -> files_mutex_ (home files and
// handles) -> release_mutex_ (the releaser's requests; never with mutex_) or mutex_ (line table,
// policy, index, dirty accounting, journal appends) -> the per-line LineLock (line data in the
// cache file: shared for readers and write-back snapshots, exclusive for writers and fills). A line
// is pinned (pins > 0) by every thread that holds or waits for its data lock; pinned lines are
// never evicted, and a slot changes owner only while unpinned and clean.
#pragma once

#include "../flat_map.hpp"
#include "dirty_parts.hpp"
#include "home_file.hpp"
#include "iosig/tier/engine.hpp"
#include "journal.hpp"
#include "line_lock.hpp"
#include "line_meta.hpp"
#include "range_lock.hpp"
#include "staging.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <liburing.h>
#include <list>
#include <map>
#include <optional>
#include <shared_mutex>
#include <sys/uio.h>
#include <thread>
#include <unordered_map>
#include <vector>

namespace iosig::tier::detail {

// A read's demand fills (Engine::fill): the lines after a missing one that the same read covers
// and the cache does not hold either are read from the home file in the same IO, up to
// TierConfig::io_run_bytes, and their fills take them from here. A read over k missing lines
// costs the home device one IO instead of k (a 64 KiB read with 4 KiB lines: 1 instead of 16).
struct FillRun {
    std::uint64_t last_line = 0;        // the read's last line
    std::uint64_t first = 0, count = 0; // the lines held in data
    std::uint64_t generation = 0;       // the file's write_generation before they were read
    RunBuffer buffer;                   // the lines, on the staging memory's NUMA node
    bool holds(std::uint64_t line) const {
        return count > 0 && line >= first && line < first + count;
    }
};

struct Handle {
    std::uint32_t file = 0;
    bool readable = false, writable = false;
    // Opened with O_DIRECT: the handle's IO past the cache stays direct, as the program asked;
    // otherwise it goes through the page cache, as the program's own IO would.
    File::Path past_cache = File::Path::page_cache;
    // Sequential-stream detection for the bypass.
    std::int64_t stream_end = -1;
    std::uint64_t stream_bytes = 0;
    std::unique_ptr<Prefetcher> prefetcher;
    std::mutex mutex;
};

class Engine final : public TierCache {
public:
    explicit Engine(const TierConfig& config);
    ~Engine() override;

    int open_file(const std::filesystem::path& home, int flags, mode_t mode) override;
    ssize_t pread(int handle, void* buffer, std::size_t count, off_t offset) override;
    ssize_t pwrite(int handle, const void* buffer, std::size_t count, off_t offset) override;
    ssize_t append(int handle, const void* buffer, std::size_t count) override;
    int fsync(int handle) override;
    int fdatasync(int handle) override { return fsync(handle); }
    int ftruncate(int handle, off_t length) override;
    // ftruncate once the handle is checked, and O_TRUNC at open (also of a read-only handle).
    int truncate_file(HomeFile& file, off_t length);
    off_t file_size(int handle) override;
    int close(int handle) override;
    int flush_all() override;
    int commit() override;
    TierStats stats() const override;
    RecoveryReport recovery() const override { return recovery_; }
    void abandon() override;

private:
    // --- engine_open.cpp
    void recover(const JournalState& state);
    void start();
    void stop_threads();

    // --- engine_files.cpp (also open_file, close)
    HomeFile* file_of(int handle, Handle** out = nullptr);
    // With files_mutex_ held exclusively, when a file's last handle is gone (`lines_home`: its
    // close got every line home): its closed version and idle listing, once every line is home.
    // Whether it was listed idle.
    bool settle_closed_locked(HomeFile& file, bool lines_home);
    // The files whose last close failed (HomeFile::close_unsettled), settled once their lines
    // are home: at flush_all and at the releaser's rounds. No lock held.
    void settle_failed_closes();
    // --- engine_idle.cpp
    // With files_mutex_ held exclusively, at the last close of a file with every line home.
    void list_idle_locked(HomeFile& file, bool unlinked);
    // With files_mutex_ held exclusively, when a handle opens the file again.
    void unlist_idle_locked(HomeFile& file);
    // Closes the descriptors of the longest-idle files beyond TierConfig::idle_files, and of a
    // deleted one, and forgets released files with no line left in the cache; no lock held.
    // Without `may_sync` (a close), a file that needs a sync before its release is left to the
    // releaser thread, unless the idle files are past twice their bound.
    void release_idle_files(bool may_sync);
    // The releaser thread: the releases a close left to it, and once a second the deleted idle
    // files and a retry of releases that found a descriptor in use.
    void releaser_loop();
    // With files_mutex_ held: the idle file to release next, passing over `busy`: a deleted one,
    // or the longest idle beyond the bound; null when none is due.
    std::shared_ptr<HomeFile> next_to_release_locked(const std::vector<std::uint32_t>& busy);
    // Marks the idle files whose last name has gone since their last close deleted; no lock
    // held. The releaser calls it once a second, then release_idle_files.
    void mark_deleted_idle_files();
    // With files_mutex_ held exclusively: forgets the file if it is released and has no line in
    // the cache (its id is not used again). Whether it did.
    bool forget_unused_locked(HomeFile& file);
    // With mutex_ held: a line of `file` left the index.
    void note_line_left_locked(std::uint32_t file);

    // --- engine_data.cpp
    enum class Mode : std::uint8_t { read, write };
    struct Lease {
        Slot slot = 0;
        Mode mode = Mode::read;
        bool hit = false;
    };
    // `run`: a read's fill run (FillRun), or none (writes, which fill at most their edge lines).
    int acquire(HomeFile& file, std::uint64_t line, Mode mode, bool need_fill, Lease& lease,
                FillRun* run = nullptr);
    void release(const Lease& lease);
    void unpin_locked(Slot slot); // with mutex_ held
    void drop_line_locked(Slot slot);
    bool refuse_clean_line(Slot slot);
    bool drop_clean_line_locked(Slot slot);
    bool line_clean(Slot slot);
    void unlist_home_write_locked(Key key);
    static constexpr int refused_by_cache = 1;
    static constexpr int unrecorded_dirty = 2; // mark_dirty: the journal refused the DIRTY record
    static constexpr int unrecorded_size = 3;  // mark_dirty: the journal refused the SIZE record
    int write_leased_line(HomeFile& file, const Lease& lease, const char* data, std::size_t chunk,
                          off_t pos);
    int take_slot(std::unique_lock<std::mutex>& lock, Slot& slot);
    void return_slots_set_aside_locked();
    int fill(HomeFile& file, std::uint64_t line, Slot slot, FillRun* run);
    std::uint64_t fill_run_length(const HomeFile& file, std::uint64_t line, std::int64_t home_size,
                                  FillRun& run);
    // `written`: the bytes of the line the write changed (only dirty bytes go home).
    int mark_dirty(HomeFile& file, Slot slot, std::int64_t new_size, ByteRange written);
    void add_dirty_bytes_locked(Slot slot, ByteRange written);
    bool dirty_bytes_cover_locked(Slot slot, ByteRange written) const;
    // The dirty parts of a slot's line (one, or those in dirty_parts_).
    std::vector<ByteRange> dirty_parts_locked(Slot slot) const;
    int commit_journal();
    int sync_cache();
    bool bypass(Handle& handle, off_t offset, std::size_t count);
    ssize_t write_range(Handle& handle, HomeFile& file, const char* buffer, std::size_t count,
                        off_t offset);
    void wait_for_dirty_room();

    // --- engine_truncate.cpp
    std::vector<Slot> pin_lines_from_locked(const HomeFile& file, std::uint64_t first_line);
    // A truncate's hold on the file's lines from `first_line` on (forget_lines takes it too): no
    // line of the file enters the cache or starts a write-back until let_lines_go, those in
    // flight are done, and the cached ones are pinned and their data locked. let_lines_go ends
    // it; `changed`: what was read of the file before is stale (fills, prefetches).
    std::vector<Slot> hold_lines_from(HomeFile& file, std::uint64_t first_line);
    void let_lines_go(HomeFile& file, const std::vector<Slot>& slots, bool changed);
    void record_truncate_done(HomeFile& file);
    // With the file's append_mutex held: the truncate itself (ftruncate's work after its checks).
    int truncate_locked(HomeFile& file, off_t length);
    // Its two halves, once the TRUNCATE record is appended (engine_truncate.cpp says what each
    // does): with mutex_ held, and then with the lines' data locks alone.
    bool cut_lines_locked(HomeFile& file, off_t length, const std::vector<Slot>& slots,
                          std::vector<std::pair<Slot, std::size_t>>& partial);
    int finish_recorded_cut(HomeFile& file, off_t length, std::int64_t record,
                            const std::vector<std::pair<Slot, std::size_t>>& partial, int e);
    // Makes the file's unfinished cut (the caller found one: reaches_beyond_unfinished_cut); 0
    // when it is made or another thread made it, or -errno.
    int finish_cut(HomeFile& file);
    int finish_cut_locked(HomeFile& file); // with the file's append_mutex held

    // --- engine_files.cpp (also open_file, close)
    // A dirty line whose bytes are home: only its CLEAN record is missing (the journal refused
    // it), and no write-back of it is under way.
    static bool home_unrecorded(const LineMeta& m) {
        return m.flushed_generation >= m.generation && !m.flushing;
    }
    // Whether a dirty line of the file is not home_unrecorded (mutex_ held).
    bool has_lines_not_home_locked(std::uint32_t file_id);
    // Drops the file's clean lines, and its dirty ones whose bytes are home (home_unrecorded).
    // With `size` (another program changed the file while no handle was open), takes it as the
    // file's size (in the journal too when it is smaller than the journal's) and ends its
    // `forgetting`, which the caller set; without (a deleted file's release), changes nothing
    // else.
    void forget_lines(HomeFile& file, std::optional<std::int64_t> size);
    // The canonical path of the held file `status` names when `absolute` is the path it was last
    // opened by and it is the same incarnation; else empty (open_file works it out). The caller
    // checks that the path still leads to the file.
    std::filesystem::path held_path_of(const std::filesystem::path& absolute,
                                       const FileStatus& status) const;
    // With mutex_ held: the journal's size of the file comes down to file.size, which another
    // program made smaller (a TRUNCATE record, and a TRUNCATE_DONE as the home file is cut
    // already). False, and size_record_owed set, when the journal refuses the first.
    bool record_size_from_home_locked(HomeFile& file);

    // --- engine_writeback.cpp
    // `unrecorded` (when given) receives the error of a line written home whose CLEAN record the
    // journal did not take: the line stays dirty, but the call does not fail for it.
    int flush_slots(const std::vector<Slot>& slots, int* unrecorded = nullptr);
    int record_clean_locked(Slot slot);

    // --- engine_flush.cpp
    int flush_file(std::uint32_t file, bool sync_home);
    // The CLEAN records of the file's lines that are home but still dirty for want of one (the
    // journal refused it at their write-back), tried once more.
    void record_lines_home(std::uint32_t file);
    // The journal synced where the file's writes past the cache or a truncate need it
    // (HomeFile::journal_sync_at_fsync): by its fsync, and before its release.
    int sync_journal_for(HomeFile& file);
    void flusher_loop();
    // --- engine_compaction.cpp
    int compact_journal(std::unique_lock<std::mutex>& lock);

    // --- engine_prefetch.cpp
    void request_prefetch(Handle& handle, HomeFile& file, std::uint64_t line);
    // The line's bytes from the prefetch buffer, read from this incarnation of the file.
    bool take_prefetched(Key key, char* destination, std::uint64_t incarnation);
    static constexpr ssize_t not_queued = -1000000;
    ssize_t read_queued_batch(HomeFile& file, std::uint64_t line, char* destination);
    void invalidate_prefetched(Key key);
    void drop_prefetched(std::uint32_t file);
    void prefetch_loop();
    bool worth_prefetching(const HomeFile& file, std::uint64_t line, std::uint64_t pending);
    bool needs_reading(const HomeFile& file, std::uint64_t line);

    static Key key_of(std::uint32_t file, std::uint64_t line) {
        return (Key(file) << line_bits) | line;
    }
    // The bytes of a file a key can name: lines below 2^line_bits (4 PiB at 4 KiB lines). A call
    // past it fails with EFBIG, as the kernel's do past a file system's largest offset: a line
    // beyond would carry into the key's file id and name a line of another file.
    off_t cacheable_end() const { return static_cast<off_t>(line_size_ << line_bits); }
    double now() const;

    TierConfig config_;
    std::uint64_t line_size_ = 0;
    std::uint64_t lines_ = 0;
    std::uint64_t max_dirty_ = 0;
    std::unique_ptr<File> cache_;
    std::unique_ptr<Journal> journal_;
    std::unique_ptr<StagingPool> staging_;
    RecoveryReport recovery_;
    bool abandoned_ = false;

    // Home files and handles.
    mutable std::shared_mutex files_mutex_;
    // Shared: work that holds no handle of a file (flush_all, the prefetch worker) keeps it alive
    // while it uses it, as a file no handle has open may be forgotten meanwhile (engine_idle.cpp).
    std::map<std::uint32_t, std::shared_ptr<HomeFile>> files_;
    // By device and inode: the engine holds each home file open, so neither is reused for another
    // file while it runs.
    using FileIdentity = std::pair<std::uint64_t, std::uint64_t>;
    std::map<FileIdentity, std::uint32_t> file_ids_;
    std::map<int, std::unique_ptr<Handle>> handles_;
    // Idle files (HomeFile::idle_entry), the longest idle first: beyond TierConfig::idle_files
    // they are released, and a deleted one at once (release_idle_files).
    std::list<std::uint32_t> idle_files_;
    std::uint32_t next_file_ = 1;
    // The ids a key can carry (64 - line_bits bits, fewer in tests: TierConfig::file_ids); once
    // all are handed out, the search for one no file holds goes on from reuse_cursor_.
    std::uint32_t most_file_ids_ = 0;
    std::uint32_t reuse_cursor_ = 0;
    std::atomic<std::uint32_t> unsettled_closes_{0}; // (files_mutex_) HomeFile::close_unsettled
    std::uint64_t files_made_ = 0;      // (files_mutex_) the last HomeFile::incarnation
    std::uint64_t file_ids_reused_ = 0; // (files_mutex_) TierStats::file_ids_reused
    // (files_mutex_) Ids promised to opens that make or open a file the engine does not hold yet,
    // between their look for a free id and the take (open_file): no other open takes the last id
    // meanwhile, so that none fails with ENFILE after it made its file.
    std::uint32_t file_ids_promised_ = 0;
    std::uint32_t take_file_id_locked(); // with files_mutex_ held; 0: every id names a file
    // Ids are 1 .. most_file_ids_, and each file the engine holds has one.
    bool file_id_available_locked() const {
        return files_.size() + file_ids_promised_ < most_file_ids_;
    }
    int next_handle_ = 0;

    // The line table.
    mutable std::mutex mutex_;
    std::condition_variable changed_; // a line was unpinned, cleaned or filled
    std::vector<LineMeta> meta_;
    std::unique_ptr<LineLock[]> data_locks_; // line_lock.hpp: 4 bytes a line
    FlatMap index_;
    std::vector<Slot> free_;
    // Slots the policy holds (on_insert, less on_evict and on_erase). take_slot asks it for a
    // victim only when there is one: every slot can be between lines at once (dropped by a
    // truncate that keeps it pinned until its journal sync is done, or by a failed fill while
    // another reader still pins it), and a policy holding none has no victim to offer (ARC and
    // LRU answer nil, LFU reads past its buckets, Random divides by zero).
    std::size_t policy_lines_ = 0;
    // Slots whose last line left the cache without its CLEAN record (a truncate while the journal
    // failed): the journal may still list them as holding that line, so no line may land in them
    // until the record is appended (take_slot retries: return_slots_set_aside_locked).
    // A write of the line itself waits for nothing here: the truncate that set the slot aside is
    // unfinished until the record is appended, and no write reaches beyond an unfinished cut.
    std::vector<Slot> set_aside_;
    std::unique_ptr<EvictionPolicy> policy_;
    // Every dirty line has exactly one entry here with its current dirty_token (mark_dirty and a
    // write-back that found new data push one; the flusher re-queues what it takes); entries
    // with an older token are stale and dropped when they reach the front.
    std::deque<std::pair<Slot, std::uint64_t>> dirty_fifo_;
    // With mutex_ held: whether a FIFO entry is its line's current one (the others are stale).
    bool current_dirty_entry_locked(Slot slot, std::uint64_t token) const {
        const LineMeta& m = meta_[slot];
        return m.valid && m.dirty && m.dirty_token == token;
    }
    // With mutex_ held: visit(slot, meta) for every dirty line, once each, from the FIFO. fsync
    // and close so cost the dirty lines, not a scan of every line of the cache (the journal's
    // rewrite resolves the entries in batches instead, engine_compaction.cpp).
    template <class Visit>
    void for_each_dirty_locked(Visit&& visit) const {
        for (const auto& [slot, token] : dirty_fifo_)
            if (current_dirty_entry_locked(slot, token)) visit(slot, meta_[slot]);
    }
    // Files being truncated (Engine::ftruncate, one truncate per file at a time): none of their
    // lines enters the cache or starts a write-back until it is done (the calls on the bytes it
    // cuts wait for its range hold, HomeFile::ranges). Usually empty.
    std::vector<std::uint32_t> truncating_;
    bool truncating_locked(std::uint32_t file) const {
        return std::find(truncating_.begin(), truncating_.end(), file) != truncating_.end();
    }
    // Lines being written home past the cache (the sequential bypass, or lines the cache refused)
    // right now, one entry per write: none of them enters the cache until its write is home.
    // Usually a few.
    std::vector<Key> home_writes_;
    bool writing_home_locked(Key key) const {
        return std::find(home_writes_.begin(), home_writes_.end(), key) != home_writes_.end();
    }
    std::uint64_t dirty_count_ = 0;
    std::uint64_t dirty_tokens_ = 0;
    // The parts of dirty lines written in more than one place (LineMeta::dirty_begin, _end hold
    // their span); an entry goes when its line is clean. Usually empty or small.
    std::unordered_map<Slot, std::vector<ByteRange>> dirty_parts_;
    // Lines in the index per file, and the files whose last line has left it since the last
    // release_idle_files (which forgets those released meanwhile).
    std::unordered_map<std::uint32_t, std::uint64_t> resident_lines_;
    std::vector<std::uint32_t> files_without_lines_;
    std::size_t slot_waiters_ = 0; // threads waiting in take_slot() for an evictable line
    std::size_t scan_cursor_ = 0;  // where take_slot() looks for a victim the policy did not offer
    std::atomic<int> flush_error_{0}; // last write-back failure (0: the last one succeeded)
    std::uint64_t journal_rewritten_bytes_ = 0; // the journal's size after its last rewrite

    // Cache-file durability: a line's first bytes in a slot (a fill, or a write of a line not
    // cached) and a truncate's zeros bump the write epoch; sync_cache() makes all of them durable.
    // (Later writes into a cached line need not be: the slot holds the line's bytes either way.)
    std::atomic<std::uint64_t> cache_epoch_{0};
    std::atomic<std::uint64_t> cache_synced_epoch_{0};
    std::mutex cache_sync_mutex_;

    // Write-back.
    std::mutex ring_mutex_;
    io_uring ring_{};
    bool uring_ = false;
    std::thread flusher_;
    std::condition_variable flusher_wake_;
    bool stopping_ = false;

    // Releases of idle files (engine_idle.cpp): a thread of their own, as the sync before a
    // release may take seconds on a slow home device, and the flusher must not wait for it.
    std::thread releaser_;
    std::mutex release_mutex_;
    std::condition_variable release_wake_;
    bool release_wanted_ = false;    // (release_mutex_) a close left a release to the releaser
    bool releaser_stopping_ = false; // (release_mutex_)

    // Prefetch.
    struct Prefetched {
        char* data = nullptr;
        std::uint64_t issued = 0;      // demand misses counter when it arrived
        std::uint64_t incarnation = 0; // of the file it was read from (HomeFile::incarnation)
    };
    std::uint64_t prefetch_lines_ = 0;
    PrefetchConfig prefetch_config_; // the stream window fitted to the buffer and io_run_bytes
    std::unique_ptr<StagingPool> prefetch_pool_;
    std::mutex prefetch_mutex_;
    std::condition_variable prefetch_wake_;
    // A proposed line; the adjacent lines of one proposal (`batch`) are read in one home IO.
    struct PrefetchRequest {
        std::uint32_t file = 0;
        std::uint64_t line = 0;
        std::uint64_t batch = 0;
    };
    std::deque<PrefetchRequest> prefetch_queue_;
    // (engine_prefetch.cpp) Takes the lines proposed right after `first` in its batch.
    std::uint64_t take_adjacent(std::deque<PrefetchRequest>::iterator it,
                                const PrefetchRequest& first, const HomeFile& file,
                                std::uint64_t pending);
    std::uint64_t prefetch_batches_ = 0;
    std::unordered_map<Key, Prefetched> prefetched_;
    std::size_t prefetch_in_flight_ = 0;
    // The lines the worker is reading now (keys first .. first + count - 1), and a signal when it
    // is done: a demand miss on one of them waits for the read instead of reading the line again.
    struct ReadingRun {
        Key first = 0;
        std::uint64_t count = 0;
        bool covers(Key key) const { return key >= first && key - first < count; }
    };
    std::optional<ReadingRun> prefetch_reading_;
    RunBuffer prefetch_run_buffer_; // the worker's: a run's lines in one read
    std::condition_variable prefetch_done_;
    std::uint64_t demand_misses_ = 0;
    std::atomic<int> demand_in_flight_{0};
    std::thread prefetcher_;
    bool prefetch_stopping_ = false;

    // Statistics.
    std::atomic<std::uint64_t> read_hits_{0}, read_misses_{0}, write_hits_{0}, write_misses_{0},
        fills_{0}, fill_reads_{0}, writebacks_{0}, writeback_writes_{0}, evictions_{0},
        bypassed_{0}, cache_refusals_{0}, prefetches_{0}, prefetch_reads_{0}, prefetch_hits_{0},
        journal_commits_{0}, home_syncs_{0}, journal_rewrites_{0};
    std::atomic<std::uint64_t> writer_wait_ns_{0};
    std::atomic<std::uint64_t> longest_rewrite_ns_{0};
};

} // namespace iosig::tier::detail
