#include "stats.hpp"

#include "log.hpp"
#include "real.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <new>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

extern "C" {
IOSIG_HIDDEN iosig_file* iosig_slots[IOSIG_MAX_FD];
}

namespace iosig::shim {

std::atomic<iosig_file*> file_registry{nullptr};

namespace {

constexpr std::size_t chunk_bytes = std::size_t{1} << 20;
constexpr std::size_t max_tracked_files = 65536;

struct Chunk {
    std::atomic<std::size_t> used;
    std::size_t capacity;
    // data follows
};

constinit std::atomic<Chunk*> current_chunk{nullptr};
constinit std::atomic<std::size_t> tracked_files{0};
constinit thread_local unsigned sample_counter IOSIG_INITIAL_EXEC = 0;

inline void add(std::atomic<std::uint64_t>& counter, std::uint64_t value, bool mine) {
    if (mine)
        counter.store(counter.load(std::memory_order_relaxed) + value, std::memory_order_relaxed);
    else
        counter.fetch_add(value, std::memory_order_relaxed);
}

inline int bucket_of(std::uint64_t bytes) {
    if (bytes == 0) return 0;
    const int bits = 64 - __builtin_clzll(bytes);
    return bits < histogram_buckets ? bits : histogram_buckets - 1;
}

// The counter set this thread may update, and whether it owns it (plain stores).
inline CounterSet& counters_for(iosig_file& file, bool& mine) {
    const int tid = current_tid();
    int owner = file.owner_tid.load(std::memory_order_relaxed);
    if (owner == 0 && file.owner_tid.compare_exchange_strong(owner, tid, std::memory_order_relaxed))
        owner = tid;
    mine = owner == tid;
    if (!mine && !file.several_writers.load(std::memory_order_relaxed))
        file.several_writers.store(true, std::memory_order_relaxed);
    return mine ? file.owner : file.shared;
}

void zero_counts(iosig_file& file) {
    std::memset(static_cast<void*>(&file.owner), 0, sizeof file.owner);
    std::memset(static_cast<void*>(&file.shared), 0, sizeof file.shared);
    file.owner_tid.store(0, std::memory_order_relaxed);
    file.several_writers.store(false, std::memory_order_relaxed);
}

} // namespace

std::int64_t realtime_ns() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return std::int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

std::uint64_t monotonic_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000U +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

int current_tid() {
    if (iosig_thread.tid == 0) iosig_thread.tid = static_cast<int>(syscall(SYS_gettid));
    return iosig_thread.tid;
}

void* arena_allocate(std::size_t bytes) {
    bytes = (bytes + 63) & ~std::size_t{63};
    const std::size_t header = (sizeof(Chunk) + 63) & ~std::size_t{63};
    while (true) {
        Chunk* chunk = current_chunk.load(std::memory_order_acquire);
        if (chunk != nullptr) {
            const std::size_t offset = chunk->used.fetch_add(bytes, std::memory_order_relaxed);
            if (offset + bytes <= chunk->capacity)
                return reinterpret_cast<char*>(chunk) + header + offset;
        }
        const std::size_t size = std::max(chunk_bytes, header + bytes);
        void* memory =
            mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (memory == MAP_FAILED) return nullptr;
        auto* fresh = new (memory) Chunk{};
        fresh->used.store(0, std::memory_order_relaxed);
        fresh->capacity = size - header;
        if (!current_chunk.compare_exchange_strong(chunk, fresh, std::memory_order_acq_rel))
            munmap(memory, size);
    }
}

const char* arena_string(const char* text) {
    if (text == nullptr) return nullptr;
    const std::size_t length = std::strlen(text);
    auto* copy = static_cast<char*>(arena_allocate(length + 1));
    if (copy != nullptr) std::memcpy(copy, text, length + 1);
    return copy;
}

iosig_file* new_file(const FileIdentity& identity) {
    if (tracked_files.fetch_add(1, std::memory_order_relaxed) >= max_tracked_files) {
        warn(
            Cause::too_many_files,
            "more than %zu tracked files in this process: statistics of further files are not kept "
            "(redirection still works)",
            max_tracked_files);
        return nullptr;
    }
    void* memory = arena_allocate(sizeof(iosig_file));
    if (memory == nullptr) return nullptr;
    auto* file = new (memory) iosig_file{};
    file->id = identity;
    file->id.path = arena_string(identity.path);
    file->id.staged = arena_string(identity.staged);
    file->id.mount = arena_string(identity.mount);
    file->id.rule = arena_string(identity.rule);
    file->id.rule_where = arena_string(identity.rule_where);
    file->id.signature = arena_string(identity.signature);
    file->id.placement = arena_string(identity.placement);
    file->open_ns = realtime_ns();
    file->append.store((identity.open_flags & O_APPEND) != 0, std::memory_order_relaxed);
    iosig_file* head = file_registry.load(std::memory_order_relaxed);
    do {
        file->next = head;
    } while (!file_registry.compare_exchange_weak(head, file, std::memory_order_release,
                                                  std::memory_order_relaxed));
    return file;
}

void publish(iosig_file* file, int fd) {
    if (file == nullptr || fd < 0) return;
    if (fd >= IOSIG_MAX_FD) {
        warn(Cause::fd_limit, "descriptor %d is above %d: its statistics are not kept", fd,
             IOSIG_MAX_FD);
        return;
    }
    file->open_descriptors.fetch_add(1, std::memory_order_relaxed);
    __atomic_store_n(&iosig_slots[fd], file, __ATOMIC_RELEASE);
}

std::uint64_t FileTotals::total_ops() const {
    std::uint64_t sum = 0;
    for (auto v : ops)
        sum += v;
    return sum;
}

std::uint64_t FileTotals::total_bytes() const {
    std::uint64_t sum = 0;
    for (auto v : bytes)
        sum += v;
    return sum;
}

FileTotals totals(const iosig_file& file) {
    FileTotals t;
    std::uint64_t stdio_nonsequential = 0;
    for (const CounterSet* set : {&file.owner, &file.shared}) {
        auto get = [](const std::atomic<std::uint64_t>& v) {
            return v.load(std::memory_order_relaxed);
        };
        for (int f = 0; f < family_count; ++f) {
            t.ops[f] += get(set->ops[f]);
            t.bytes[f] += get(set->bytes[f]);
        }
        t.sequential += get(set->sequential);
        t.nonsequential += get(set->nonsequential);
        stdio_nonsequential += get(set->stdio_nonsequential);
        t.errors += get(set->errors);
        t.timed_calls += get(set->timed_calls);
        t.timed_ns += get(set->timed_ns);
        t.fsyncs += get(set->fsyncs);
        t.fsync_ns += get(set->fsync_ns);
        t.flushes += get(set->flushes);
        t.flush_ns += get(set->flush_ns);
        for (int b = 0; b < histogram_buckets; ++b)
            t.histogram[b] += get(set->histogram[b]);
    }
    // Stdio calls are sequential unless counted as not (count_stdio_inline saves the increment).
    // (Read while other threads write, the two counts may be from different moments.)
    const std::uint64_t stdio_ops = t.ops[IOSIG_FAMILY_STDIO];
    t.sequential += stdio_ops > stdio_nonsequential ? stdio_ops - stdio_nonsequential : 0;
    return t;
}

void stats_fork_prepare() {
    for_each_file([](iosig_file& file) {
        if (file.open_descriptors.load(std::memory_order_relaxed) > 0)
            file.shared_with_child.store(true, std::memory_order_relaxed);
    });
}

void stats_fork_child() {
    iosig_thread.tid = 0;
    for_each_file([](iosig_file& file) {
        zero_counts(file);
        file.inherited_from_parent.store(true, std::memory_order_relaxed);
    });
}

void stats_reset_counts() {
    for_each_file([](iosig_file& file) { zero_counts(file); });
}

} // namespace iosig::shim

using namespace iosig::shim;

extern "C" {

IOSIG_HIDDEN uint64_t iosig_clock_sample(iosig_file* file) {
    if (sample_counter++ % time_sample_period == 0 ||
        (file->owner.timed_calls.load(std::memory_order_relaxed) == 0 &&
         file->shared.timed_calls.load(std::memory_order_relaxed) == 0))
        return monotonic_ns() | 1U;
    return 0;
}

IOSIG_HIDDEN __thread iosig_thread_state iosig_thread IOSIG_INITIAL_EXEC = {0, 0};

IOSIG_HIDDEN uint64_t iosig_clock_now(void) {
    return monotonic_ns() | 1U;
}

IOSIG_HIDDEN void iosig_count_write(iosig_file* file, iosig_family family, long long offset,
                                    long long result, uint64_t started) {
    bool mine = false;
    CounterSet& set = counters_for(*file, mine);
    if (result < 0) {
        // copy_file_range/sendfile/splice failing is how programs probe for them: not an error.
        if (family != IOSIG_FAMILY_COPY) add(set.errors, 1, mine);
        return;
    }
    const auto bytes = static_cast<std::uint64_t>(result);
    add(set.ops[family], 1, mine);
    add(set.bytes[family], bytes, mine);
    add(set.histogram[bucket_of(bytes)], 1, mine);

    bool sequential = true;
    if (offset == IOSIG_AT_STREAM) {
        if (file->stream_moved.load(std::memory_order_relaxed)) {
            file->stream_moved.store(false, std::memory_order_relaxed);
            sequential = false;
        }
    } else if (offset == IOSIG_AT_CURSOR && file->append.load(std::memory_order_relaxed)) {
        sequential = true; // appends always continue the file
    } else {
        std::uint64_t start;
        if (offset == IOSIG_AT_CURSOR) {
            start = file->cursor.load(std::memory_order_relaxed);
            file->cursor.store(start + bytes, std::memory_order_relaxed);
        } else {
            start = static_cast<std::uint64_t>(offset);
        }
        sequential = start == file->last_end.load(std::memory_order_relaxed);
        file->last_end.store(start + bytes, std::memory_order_relaxed);
        if (start + bytes > file->max_extent.load(std::memory_order_relaxed))
            file->max_extent.store(start + bytes, std::memory_order_relaxed);
    }
    if (!sequential) {
        add(set.nonsequential, 1, mine);
        if (family == IOSIG_FAMILY_STDIO) add(set.stdio_nonsequential, 1, mine);
    } else if (family != IOSIG_FAMILY_STDIO) {
        add(set.sequential, 1, mine);
    }

    if (started != 0) {
        add(set.timed_calls, 1, mine);
        add(set.timed_ns, monotonic_ns() - started, mine);
    }
}

IOSIG_HIDDEN void iosig_count_stdio(iosig_file* file, uint64_t bytes, uint64_t started) {
    // The common case of small buffered stdio calls from the thread that owns the file: plain
    // stores, no offset arithmetic (a stream is sequential unless it was repositioned).
    const int tid = iosig_thread.tid;
    if (IOSIG_LIKELY(tid != 0 && file->owner_tid.load(std::memory_order_relaxed) == tid)) {
        CounterSet& set = file->owner;
        add(set.ops[IOSIG_FAMILY_STDIO], 1, true);
        add(set.bytes[IOSIG_FAMILY_STDIO], bytes, true);
        add(set.histogram[bucket_of(bytes)], 1, true);
        const bool moved = file->stream_moved.load(std::memory_order_relaxed);
        if (IOSIG_UNLIKELY(moved)) file->stream_moved.store(false, std::memory_order_relaxed);
        if (IOSIG_UNLIKELY(moved)) {
            add(set.nonsequential, 1, true);
            add(set.stdio_nonsequential, 1, true);
        }
        if (started != 0) {
            add(set.timed_calls, 1, true);
            add(set.timed_ns, monotonic_ns() - started, true);
        }
        return;
    }
    iosig_count_write(file, IOSIG_FAMILY_STDIO, IOSIG_AT_STREAM, static_cast<long long>(bytes),
                      started);
}

IOSIG_HIDDEN void iosig_count_time(iosig_file* file, uint64_t started) {
    bool mine = false;
    CounterSet& set = counters_for(*file, mine);
    add(set.flushes, 1, mine);
    if (started != 0) add(set.flush_ns, monotonic_ns() - started, mine);
}

IOSIG_HIDDEN void iosig_note_seek(iosig_file* file, long long position) {
    file->cursor.store(static_cast<std::uint64_t>(position), std::memory_order_relaxed);
}

IOSIG_HIDDEN void iosig_note_stream_seek(iosig_file* file) {
    file->stream_moved.store(true, std::memory_order_relaxed);
}

} // extern "C"
