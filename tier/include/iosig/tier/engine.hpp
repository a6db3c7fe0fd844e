// The two-tier cache engine: fixed-size lines of home files (on a slow mount) cached in one cache
// file on a fast mount, written back asynchronously (io_uring), evicted by a policy from
// policy.hpp, with prefetching and crash recovery from a metadata journal. docs/tier.md describes
// the design and the durability contract.
//
// The API mirrors what a caller intercepting open/pread/pwrite/fsync/close sees: file handles, byte
// ranges and POSIX error numbers (functions return -errno, never throw, once the engine is open).
// A call fails as its system call would on the home file, with the same errno, checked in the
// same order (tier/tests/kernel_reference_test.cpp holds the engine to the kernel call by call);
// the exceptions are named below (ENFILE, EOPNOTSUPP, EFBIG).
//
// Durability contract:
//  - pwrite() returns when the data is in the cache file and the journal records the line as
//    dirty, neither synced: a crash of the process loses nothing (recovery writes home what the
//    cache file holds for the line). After a power cut, recovery writes home the lines whose
//    records a commit covered (one follows every write-back, and commit()); like any write
//    without fsync, the others can be lost.
//  - fsync()/fdatasync() return 0 only when every byte written to the file before the call is on
//    the home file and the home file is synced; a crash afterwards loses none of it, and recovery
//    never writes an older version of a line over it.
//  - close() writes the file's dirty lines home (other processes see the data) before it returns.
//  - On any IO error the failing call returns it; nothing acknowledged is lost.
#pragma once

#include "iosig/tier/io.hpp"
#include "iosig/tier/policy.hpp"
#include "iosig/tier/prefetch.hpp"
#include "iosig/tier/trace.hpp"

#include <bit>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <sys/types.h>

namespace iosig::tier {

// The engine's line sizes: a power of two in this range.
inline constexpr std::uint64_t min_line_size = 4 << 10, max_line_size = 1 << 20;
inline bool engine_line_size(std::uint64_t bytes) {
    return std::has_single_bit(bytes) && bytes >= min_line_size && bytes <= max_line_size;
}

struct TierConfig {
    std::filesystem::path cache_file; // on the fast mount; the journal is <cache_file>.journal
    std::uint64_t cache_size = 256ull << 20; // bytes, rounded down to whole lines
    std::uint64_t line_size = 64 << 10;      // power of two, 4 KiB .. 1 MiB
    std::string policy = "ws";
    PolicyConfig policy_config; // capacity is set from cache_size / line_size
    std::string prefetch;       // "", "stream" or "markov"
    PrefetchConfig prefetch_config;
    std::uint64_t prefetch_lines = 0;  // prefetch buffer (memory); 0 = prefetch_buffer_lines()
    std::uint64_t max_dirty_lines = 0; // writers wait above this; 0 = lines / 4
    double writeback_delay = 0.5;      // seconds a dirty line may wait before the flusher writes it
    std::uint64_t sequential_cutoff = 4ull << 20; // a stream that read/wrote this many bytes in
                                                  // sequence bypasses the cache (bcache); 0 = never
    // Adjacent lines move to and from the home file in one IO of up to this many bytes (0 or
    // one line: one IO per line): the missing lines of one read (fill runs) and the dirty lines of
    // one write-back batch (write runs).
    std::uint64_t io_run_bytes = default_io_run_bytes;
    // The journal is rewritten with only the lines still dirty once it has grown past this size and
    // past twice its size after the last rewrite (so that a large dirty set is not rewritten again
    // at every flusher pass).
    std::uint64_t journal_compaction_bytes = 64ull << 20;
    // Home files no handle has open whose descriptors the engine keeps, so that opening one again
    // costs no open(2); beyond this the longest idle are closed (and a deleted file's at its last
    // close), and an engine that serves many files one after another holds this many descriptors
    // more than the program has open, not one per file it ever opened. The cached lines stay.
    std::size_t idle_files = 64;
    // For files that other processes write at the same time (the ranks of a parallel job writing
    // their parts of one file, each with an engine of its own): a write-back puts home only the
    // bytes this engine's writes changed, not the rest of the line as its fill read it, which
    // another writer may have changed at home since. Off, a write-back writes whole lines (the
    // engine is then the file's only writer while it has a handle open, as an NFS client assumes
    // between open and close): a part smaller than a page costs the home file system a read of
    // that page first (docs/tier.md, "Several writers of one file").
    bool dirty_bytes_only = false;
    unsigned queue_depth = 32; // io_uring entries of the write-back
    bool direct_io = true;     // O_DIRECT for line IO when the file systems allow it
    int numa_node = -1;        // staging memory node; -1 = the creating CPU's node
    // Tests: how many file ids the engine hands out before it hands out forgotten files' again
    // (0: all a line's key holds, 2^24 - 1). Opening a file fails with ENFILE while every id
    // names a file the engine holds (open, idle, or with cached lines).
    std::uint32_t file_ids = 0;
    std::shared_ptr<IoFaults> faults; // tests: fault injection (disables io_uring)
};

// The prefetch buffer's lines: config.prefetch_lines, or by default a 32nd of the cache's lines,
// at least 4 and at least the largest window an adjacent stream grows to (fit_prefetch_window with
// io_run_bytes), so that the window fits.
std::uint64_t prefetch_buffer_lines(const TierConfig& config);

struct TierStats {
    std::uint64_t lines = 0, line_size = 0;
    std::uint64_t read_hits = 0, read_misses = 0;   // line references by pread
    std::uint64_t write_hits = 0, write_misses = 0; // line references by pwrite
    std::uint64_t fills = 0;                        // lines read from home files
    std::uint64_t fill_reads = 0; // home reads for them (a read's adjacent missing lines share one)
    std::uint64_t writebacks = 0; // lines written home
    std::uint64_t writeback_writes =
        0; // home writes for them (adjacent lines of a batch share one)
    std::uint64_t evictions = 0;
    std::uint64_t bypassed_bytes = 0; // sequential-stream bytes that skipped the cache
    // Lines of writes that went to the home file because the cache could not take them: its
    // file failed, or every line was dirty while write-back was failing.
    std::uint64_t cache_refusals = 0;
    // Slots out of use now: their last line left the cache while the journal could not record it
    // clean, so no other line may land there until it can (docs/tier.md, the journal failing).
    std::uint64_t slots_out_of_use = 0;
    std::uint64_t prefetches_issued = 0, prefetch_hits = 0;
    std::uint64_t prefetch_reads = 0; // home reads for the prefetches (adjacent lines share one)
    std::uint64_t dirty_lines = 0;    // now
    // Home files the engine knows now: with a handle open, idle, or with lines in the cache (one
    // it released with none left is forgotten: docs/tier.md, "Idle files").
    std::uint64_t home_files = 0;
    // Ids of forgotten files handed out again to files the engine met since (a line's key holds
    // 2^24 - 1: docs/tier.md, "What a key can name").
    std::uint64_t file_ids_reused = 0;
    // Journal commits (Engine::commit_journal): the cache file synced, then a COMMIT record
    // appended and synced, after which recovery from a power cut trusts the DIRTY records before
    // it.
    std::uint64_t journal_commits = 0;
    std::uint64_t journal_rewrites = 0; // compactions to the lines still dirty
    // The longest a journal rewrite kept the engine's other work out at a stretch: the engine's
    // lock while it lists a batch of dirty lines, or the journal's appends held at its end.
    double longest_journal_rewrite_seconds = 0;
    std::uint64_t home_syncs = 0;   // fdatasync of a home file after a batch of write-backs
    double writer_wait_seconds = 0; // writers' time waiting for room under max_dirty_lines
    int numa_node = -1;             // where the staging memory is (-1: not placed)
    bool io_uring = false;          // write-back through io_uring
};

struct RecoveryReport {
    bool journal_found = false;
    bool torn_tail = false;        // the last journal record was cut by the crash
    std::uint64_t dirty_lines = 0; // lines the journal listed as dirty
    std::uint64_t lines_written_home = 0;
    std::uint64_t missing_files = 0; // dirty lines whose home file no longer exists (skipped)
    // Dirty lines whose home path now names another file (a rename over it, or a delete and a
    // create): skipped, as their file is not there to write to.
    std::uint64_t lines_of_replaced_files = 0;
    // Home files found by the handle the journal keeps for them (open_by_handle_at) where their
    // journaled path no longer leads to them: renamed or moved since. Their lines were written
    // there, and are among lines_written_home.
    std::uint64_t files_found_moved = 0;
    // After a power cut (the journal was written under another page cache): dirty lines whose
    // DIRTY record no COMMIT covered, left out (their slots may hold another line's bytes).
    std::uint64_t uncommitted_lines = 0;
    bool power_cut = false; // the journal was written under another boot or mount
};

// Thrown only by TierCache::open and TierCache::recover (bad configuration, unusable cache file or
// journal, recovery that could not write a dirty line home: then the journal is kept for the next
// attempt).
class TierError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class TierCache {
public:
    // Creates or reopens the cache; after a crash, first writes home every dirty line the journal
    // lists. Opening an engine on a cache file another live engine holds fails. Throws TierError,
    // keeping the journal as it is, when a dirty line cannot be written home (its home file there
    // but not writable or failing, the cache file gone) or the journal is of a newer iosig; a line
    // whose home file is gone, or replaced by another file, is counted in recovery() instead.
    static std::unique_ptr<TierCache> open(const TierConfig& config);
    // Recovery alone, without opening a cache (iosig-tier-recover): writes home every dirty line
    // the journal beside `cache_file` lists, as open would, and leaves the journal empty, so that a
    // node can put its files right at boot, before any program reads or writes them. No journal
    // there: nothing to do (journal_found false, and nothing is made). Throws TierError as open
    // does, keeping the journal, and when a live engine holds the cache file.
    static RecoveryReport recover(const std::filesystem::path& cache_file);
    virtual ~TierCache() = default; // writes every dirty line home and leaves an empty journal

    // Returns a handle >= 0 or -errno. Flags as open(2): O_RDONLY/O_WRONLY/O_RDWR, O_CREAT, O_EXCL,
    // O_TRUNC (with O_RDONLY too: it empties the file, as Linux's open(2) does, and needs write
    // access), and O_DIRECT, which keeps the handle's IO past the cache (the sequential bypass)
    // direct where it is aligned, as the program asked, instead of going through the page cache
    // (others are ignored). Several handles may refer to one home file. -EOPNOTSUPP: the engine
    // cannot serve a file open(2) would open (write-only, to a caller who may not read it, as the
    // engine reads lines to fill them); the caller opens it itself. -ENFILE: the engine holds
    // 2^24 - 1 files (open, idle, or with lines cached), each with an id a line's key carries; the
    // file is not made (also when opens race for the last id), and the caller opens it itself.
    // A path open(2) would refuse (missing without O_CREAT, a loop of links, no search permission)
    // gets open(2)'s error first.
    virtual int open_file(const std::filesystem::path& home, int flags, mode_t mode = 0644) = 0;
    // A file's bytes from line_size x 2^40 on (4 PiB at 4 KiB lines, beyond ext4's largest
    // file; xfs, btrfs and tmpfs hold sparse files that large) are out of the engine's reach: a
    // read, write or append starting there fails with EFBIG, one reaching there is short, as the
    // kernel's are at a file system's largest offset, and so is a truncate to beyond it.
    // A read or write that fails after some of its lines returns the bytes it transferred, as
    // read(2) and write(2) do; one that fails may still have changed bytes of its range, or grown
    // the file as far as it reached, which a crash before the file's next sync may lose.
    virtual ssize_t pread(int handle, void* buffer, std::size_t count, off_t offset) = 0;
    virtual ssize_t pwrite(int handle, const void* buffer, std::size_t count, off_t offset) = 0;
    // Writes at the current end of the file (O_APPEND semantics), atomically with other appends.
    virtual ssize_t append(int handle, const void* buffer, std::size_t count) = 0;
    virtual int fsync(int handle) = 0;
    virtual int fdatasync(int handle) = 0;
    virtual int ftruncate(int handle, off_t length) = 0;
    virtual off_t file_size(int handle) = 0; // logical size, including cached writes
    // The handle is gone even when it fails (-errno: a line could not go home); the lines stay
    // dirty in the engine until the flusher or flush_all gets them home.
    virtual int close(int handle) = 0;
    // Writes every dirty line home and syncs the home files.
    virtual int flush_all() = 0;
    // Makes every write so far survive a power cut in the cache: its lines stay dirty, and the
    // next open after the cut writes them home (docs/tier.md, "The journal and crash recovery").
    // A sync of the cache file and one of the journal, however slow the home device; the engine
    // does the same after each write-back. 0 or -errno. fsync is what makes data durable at home.
    virtual int commit() = 0;

    virtual TierStats stats() const = 0;
    virtual RecoveryReport recovery() const = 0;

    // Tests: stop at once as a crashed process would (no write-back, journal left as it is).
    virtual void abandon() = 0;
};

} // namespace iosig::tier
