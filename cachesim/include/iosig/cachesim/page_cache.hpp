// The page-cache model of CAWL's Alg. 1 (paper 001, Sect. 4.4.1): dirty data as blocks
// (file, offset, size, time, active) instead of pages.
//
// - A write's bytes that overlap dirty blocks rewrite them: that part becomes active (accessed more
//   than once) with the new time; new bytes form an inactive block; the untouched rest of an old
//   block keeps its time and list. Rewritten bytes do not add dirty bytes.
// - Write-back (flush) takes the oldest inactive data first; when the inactive list runs short the
//   oldest active blocks are demoted so that active bytes never exceed inactive ones (the kernel's
//   file LRU balance). It runs while dirty bytes exceed the background threshold or some data is
//   older than the expiry time, and never fails: an empty cache simply has nothing to write.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <vector>

namespace iosig::cachesim {

using FileId = std::uint32_t;
// Dirty data the model did not write itself (other processes' dirty pages at start).
inline constexpr FileId foreign_file = 0xffffffffu;

struct DirtyBlock {
    FileId file = 0;
    std::uint64_t offset = 0;
    std::uint64_t size = 0;
    double time = 0;     // when it was (last) dirtied
    bool active = false; // dirtied more than once
};

// What flush() did.
struct FlushResult {
    double written = 0; // bytes written back
    double busy = 0;    // seconds the flusher was writing
};

class PageCacheModel {
public:
    // Inserts a write of [offset, offset + size) of `file` dirtied at `time`. Returns the number of
    // bytes that were not dirty before (the bytes that count against the kernel's limits).
    std::uint64_t insert(FileId file, std::uint64_t offset, std::uint64_t size, double time);

    // Bytes of [offset, offset + size) that are not dirty now (without changing anything).
    std::uint64_t new_bytes(FileId file, std::uint64_t offset, std::uint64_t size) const;

    // Flushes during [now, now + duration) at `bandwidth` B/s while dirty bytes exceed
    // `background_thresh` or data older than `expire` seconds exists. Expired data is noticed at
    // the flusher's periodic wake-ups (every `wakeup_interval` s, 0 = continuously). Returns what
    // it did; `on_progress(t, dirty)` (optional) is called at every change of pace for
    // trajectories.
    FlushResult flush(double now, double duration, double bandwidth, double background_thresh,
                      double expire, double wakeup_interval = 0,
                      const std::function<void(double, double)>& on_progress = {});

    // Writes back `bytes` of the oldest inactive data immediately (used by flush and by tests).
    double write_back(double bytes);

    double dirty_bytes() const { return static_cast<double>(dirty_); }
    std::uint64_t active_bytes() const { return active_bytes_; }
    std::uint64_t inactive_bytes() const { return dirty_ - active_bytes_; }
    std::size_t block_count() const { return blocks_.size(); }
    bool empty() const { return blocks_.empty(); }
    // Time of the oldest dirty data, or +inf when clean.
    double oldest_time() const;
    bool has_expired(double now, double expire) const { return oldest_time() + expire <= now; }

    // All blocks in (file, offset) order, for tests and reports.
    std::vector<DirtyBlock> blocks() const;

private:
    struct Key {
        FileId file;
        std::uint64_t offset;
        auto operator<=>(const Key&) const = default;
    };
    struct Entry {
        std::uint64_t size;
        double time;
        bool active;
        std::uint64_t order; // tie-break among equal times in the LRU sets
    };
    struct Lru {
        double time;
        std::uint64_t order;
        Key key;
        auto operator<=>(const Lru&) const = default;
    };
    using BlockMap = std::map<Key, Entry>;

    void add_block(Key key, std::uint64_t size, double time, bool active, std::uint64_t order);
    void remove_block(BlockMap::iterator it);
    void shrink_front(BlockMap::iterator it, std::uint64_t bytes);
    void balance_lists();
    std::set<Lru>& list_of(bool active) { return active ? active_ : inactive_; }

    BlockMap blocks_;
    std::set<Lru> active_;   // oldest first
    std::set<Lru> inactive_; // oldest first
    std::uint64_t dirty_ = 0;
    std::uint64_t active_bytes_ = 0;
    std::uint64_t next_order_ = 0;
};

} // namespace iosig::cachesim
