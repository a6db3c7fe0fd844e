// Per-file statistics of tracked files (matched by a rule or opened through the runtime ABI).
//
// One iosig_file exists per open of a tracked file (dup'ed descriptors share it); it lives until
// the process exits, in an mmap'ed arena that is only ever appended to, so pointers stay valid
// without reference counting and the report at exit can read every file.
//
// Write path (docs/preload.md, "Statistics"): the first thread that writes a file owns its `owner`
// counters and updates them with plain loads and stores; every other thread uses the `shared` set
// with atomic adds. The report sums both. No locks, no allocation, no system call except the
// sampled clock (vDSO).
#pragma once

#include "shim.h"

#include <atomic>
#include <cstdint>

namespace iosig::shim {

inline constexpr int family_count = IOSIG_FAMILY_COUNT;
inline constexpr int histogram_buckets =
    41; // [2^(i-1), 2^i) bytes; bucket 0 = 0 bytes; last = >= 512 GiB
inline constexpr unsigned time_sample_period = 64;

struct CounterSet {
    std::atomic<std::uint64_t> ops[family_count];
    std::atomic<std::uint64_t> bytes[family_count];
    std::atomic<std::uint64_t> sequential;    // non-stdio calls only: see totals()
    std::atomic<std::uint64_t> nonsequential; // all families
    std::atomic<std::uint64_t> stdio_nonsequential;
    std::atomic<std::uint64_t> errors;
    std::atomic<std::uint64_t> timed_calls; // sampled write calls ...
    std::atomic<std::uint64_t> timed_ns;    // ... and their time
    std::atomic<std::uint64_t> fsyncs;
    std::atomic<std::uint64_t> fsync_ns;
    std::atomic<std::uint64_t> flushes;
    std::atomic<std::uint64_t> flush_ns;
    std::atomic<std::uint64_t> histogram[histogram_buckets];
};

// How the file came to be tracked and where it went. Strings live in the arena; immutable once the
// file is published in a slot.
struct FileIdentity {
    const char* path = nullptr;       // absolute path the program used (staged path if inherited)
    const char* staged = nullptr;     // the staged file, if redirected
    const char* mount = nullptr;      // mount the data is on when redirected
    const char* rule = nullptr;       // matching rule's pattern
    const char* rule_where = nullptr; // file:line:col of that rule
    const char* signature = nullptr;  // canonical signature that applied
    const char* source = nullptr;     // "rule", "pragma", "inherited"
    const char* placement = nullptr;  // what happened at open, in words
    const char* api = nullptr;        // open, fopen, openat64, ...
    int open_flags = 0;
    bool redirected = false;
    bool created = false; // the open created the file
};

} // namespace iosig::shim

struct iosig_file {
    iosig_file* next = nullptr; // registry of every file, newest first
    iosig::shim::FileIdentity id;
    std::int64_t open_ns = 0; // CLOCK_REALTIME
    std::atomic<std::int64_t> close_ns{0};
    std::atomic<int> open_descriptors{0};
    std::atomic<bool> deleted{false};
    std::atomic<const char*> renamed_to{nullptr};
    std::atomic<bool> append{false};
    std::atomic<bool> stream_moved{false};
    std::atomic<bool> shared_with_child{false}; // open when the process forked
    std::atomic<bool> inherited_from_parent{false};
    std::atomic<bool> staging_synced{false}; // staging directory fsync'd after the first fsync
    std::atomic<bool> relocated{false};
    std::atomic<std::uint64_t> cursor{0};     // file position as write() sees it
    std::atomic<std::uint64_t> last_end{0};   // end of the previous write
    std::atomic<std::uint64_t> max_extent{0}; // highest byte written + 1
    std::atomic<std::uint64_t> final_size{0}; // size seen at the last close
    std::atomic<int> owner_tid{0};
    std::atomic<bool> several_writers{false};
    alignas(64) iosig::shim::CounterSet owner;
    alignas(64) iosig::shim::CounterSet shared;
};

namespace iosig::shim {

// Arena memory: zeroed, never freed; nullptr when mmap fails.
void* arena_allocate(std::size_t bytes);
const char* arena_string(const char* text); // nullptr stays nullptr

// A new file record (registered, not yet in a slot); nullptr when the tracking cap is reached.
iosig_file* new_file(const FileIdentity& identity);
// Puts `file` in fd's slot (fd must be < IOSIG_MAX_FD, else the file stays unpublished).
void publish(iosig_file* file, int fd);

template <class F>
void for_each_file(F&& f) {
    extern std::atomic<iosig_file*> file_registry;
    for (iosig_file* file = file_registry.load(std::memory_order_acquire); file; file = file->next)
        f(*file);
}

// Sums of both counter sets.
struct FileTotals {
    std::uint64_t ops[family_count] = {};
    std::uint64_t bytes[family_count] = {};
    std::uint64_t sequential = 0, nonsequential = 0, errors = 0;
    std::uint64_t timed_calls = 0, timed_ns = 0;
    std::uint64_t fsyncs = 0, fsync_ns = 0, flushes = 0, flush_ns = 0;
    std::uint64_t histogram[histogram_buckets] = {};
    std::uint64_t total_ops() const;
    std::uint64_t total_bytes() const;
};
FileTotals totals(const iosig_file& file);

// After fork, in the child: its own counts start at zero; files open at fork are marked.
void stats_fork_prepare();
void stats_fork_child();
// After a report was written before exec and the exec failed: start counting again from zero.
void stats_reset_counts();

std::int64_t realtime_ns();
std::uint64_t monotonic_ns();
int current_tid();

// The stdio hot path (wrap_fwrite.cpp). A buffered stdio call from the thread that owns the file,
// on a stream that was not repositioned, is counted inline with plain stores; every other call
// (another thread, a moved stream, a timed call) goes through iosig_count_stdio.
[[gnu::always_inline]] inline bool stdio_counts_inline(const iosig_file* file) {
    const int tid = iosig_thread.tid;
    return tid != 0 && file->owner_tid.load(std::memory_order_relaxed) == tid &&
           !file->stream_moved.load(std::memory_order_relaxed);
}

[[gnu::always_inline]] inline void count_stdio_inline(iosig_file* file, std::uint64_t bytes) {
    auto bump = [](std::atomic<std::uint64_t>& counter, std::uint64_t value) {
        counter.store(counter.load(std::memory_order_relaxed) + value, std::memory_order_relaxed);
    };
    CounterSet& set = file->owner;
    bump(set.ops[IOSIG_FAMILY_STDIO], 1);
    bump(set.bytes[IOSIG_FAMILY_STDIO], bytes);
    const int bits = bytes == 0 ? 0 : 64 - __builtin_clzll(bytes);
    bump(set.histogram[bits < histogram_buckets ? bits : histogram_buckets - 1], 1);
    // No `sequential` increment: totals() counts every stdio call not counted as non-sequential.
}

} // namespace iosig::shim
