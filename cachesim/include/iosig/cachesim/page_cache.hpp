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
#include <limits>
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
    PageCacheModel() = default;
    // Blocks refer to their index nodes by iterator: a copy points its blocks at its own nodes.
    PageCacheModel(const PageCacheModel& other);
    PageCacheModel& operator=(const PageCacheModel& other);
    PageCacheModel(PageCacheModel&& other) noexcept;
    PageCacheModel& operator=(PageCacheModel&& other) noexcept;
    ~PageCacheModel() = default;

    // Called by insert for each run of bytes it rewrites, with the time they were last written.
    using RewriteObserver = std::function<void(std::uint64_t bytes, double written_at)>;

    // Inserts a write of [offset, offset + size) of `file` dirtied at `time`. Returns the number of
    // bytes that were not dirty before (the bytes that count against the kernel's limits).
    std::uint64_t insert(FileId file, std::uint64_t offset, std::uint64_t size, double time,
                         const RewriteObserver* rewritten = nullptr);

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
    std::size_t block_count() const { return positions_.size(); }
    bool empty() const { return positions_.empty(); }
    // Time of the oldest dirty data, or +inf when clean.
    double oldest_time() const;
    bool has_expired(double now, double expire) const { return oldest_time() + expire <= now; }

    // All blocks in (file, offset) order, for tests and reports.
    std::vector<DirtyBlock> blocks() const;

private:
    // Blocks live in a pool and are addressed by index; the LRU lists link them in place.
    using BlockIndex = std::uint32_t;
    static constexpr BlockIndex no_block = std::numeric_limits<BlockIndex>::max();

    // A block's entry in the (file, offset) index. Writing back the front of a block moves its
    // offset forward, which never passes a neighbour, so the offset may change in place.
    struct Position {
        FileId file;
        mutable std::uint64_t offset;
        BlockIndex block;
        bool operator<(const Position& other) const {
            return file != other.file ? file < other.file : offset < other.offset;
        }
    };
    using PositionIndex = std::set<Position>;

    struct Links {
        BlockIndex older = no_block;
        BlockIndex newer = no_block;
    };
    struct List {
        BlockIndex oldest = no_block;
        BlockIndex newest = no_block;
    };

    struct Block {
        FileId file;
        std::uint64_t offset;
        std::uint64_t size;
        double time;
        std::uint64_t order; // tie-break among equal times in the LRU lists
        bool active;
        Links by_age;  // all blocks by (time, order, file, offset)
        Links in_list; // the same order within the block's active or inactive list
        PositionIndex::iterator position;
    };
    using LinksIn = Links Block::*;

    void swap(PageCacheModel& other) noexcept;
    BlockIndex add_block(FileId file, std::uint64_t offset, std::uint64_t size, double time,
                         bool active, std::uint64_t order, PositionIndex::const_iterator hint);
    void remove_block(BlockIndex b);
    void rewrite_whole_block(BlockIndex b, double time, std::uint64_t order);
    void shrink_front(BlockIndex b, std::uint64_t bytes);
    void balance_lists();
    PositionIndex::const_iterator first_reaching(FileId file, std::uint64_t offset) const;
    BlockIndex oldest_victim() const;
    static bool older(const Block& a, const Block& b);
    List& list_of(bool active) { return active ? active_ : inactive_; }
    void link_by_age(BlockIndex b);
    void link_after_elder(BlockIndex elder, BlockIndex b);
    void link_after(List& list, LinksIn links, BlockIndex after, BlockIndex b);
    void unlink(List& list, LinksIn links, BlockIndex b);
    void unlink_everywhere(BlockIndex b);

    std::vector<Block> pool_;             // indexed by BlockIndex; free slots are reused
    std::vector<BlockIndex> free_blocks_; // pool slots not in use
    PositionIndex positions_;             // every block by (file, offset)
    std::vector<PositionIndex::node_type> spare_positions_; // recycled index nodes: no malloc
    List by_age_;                                           // every block, oldest first
    List active_;                                           // oldest first
    List inactive_;                                         // oldest first
    std::uint64_t dirty_ = 0;
    std::uint64_t active_bytes_ = 0;
    std::uint64_t next_order_ = 0;
};

} // namespace iosig::cachesim
