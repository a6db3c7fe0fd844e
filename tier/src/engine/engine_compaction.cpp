// The journal's rewrite on the engine's side (engine_impl.hpp): which lines are still dirty, listed
// with the engine's lock held only briefly at a time (the journal's side: journal_rewrite.cpp).
#include "engine_impl.hpp"

#include <algorithm>
#include <chrono>

namespace iosig::tier::detail {

// The flusher's, with `lock` (mutex_) held: replaces the journal by the dirty lines it must still
// remember (Journal::begin_rewrite, finish_rewrite), holding the engine's lock only briefly at a
// time. In one step under it: the length of the flusher's FIFO (one current entry per dirty line)
// and the start of the journal's tail, which keeps every record appended from then on. Those
// entries are then resolved to lines under the lock a batch at a time; only the flusher takes
// entries off the FIFO, so they stay where they are meanwhile. A slot whose state changed since
// the start has a record in the tail, and its last record there decides its state after the
// rewrite; the others resolve as they were at the start. Writing the new journal happens without
// the lock; at its end appends are held while the tail follows, it is synced and renamed. The
// lines' clean_record numbers stay: every record so far is durable once the rewrite returns, so
// waiting for one of them returns at once (Journal::sync_to).
int Engine::compact_journal(std::unique_lock<std::mutex>& lock) {
    using Clock = std::chrono::steady_clock;
    auto start = Clock::now();
    const std::size_t entries = dirty_fifo_.size();
    journal_->begin_rewrite();
    Clock::duration longest_hold = Clock::now() - start;
    lock.unlock();
    constexpr std::size_t batch = 16384;
    std::vector<std::pair<std::uint32_t, DirtyRecord>> dirty;
    dirty.reserve(entries);
    for (std::size_t from = 0; from < entries; from += batch) {
        lock.lock();
        start = Clock::now();
        for (std::size_t i = from; i < std::min(entries, from + batch); ++i) {
            const auto [slot, token] = dirty_fifo_[i];
            if (current_dirty_entry_locked(slot, token))
                dirty.emplace_back(slot, DirtyRecord{meta_[slot].file, line_of(meta_[slot].key), 0,
                                                     config_.dirty_bytes_only
                                                         ? dirty_parts_locked(slot)
                                                         : std::vector<ByteRange>{}});
        }
        longest_hold = std::max(longest_hold, Clock::now() - start);
        lock.unlock();
    }
    double held = 0;
    const int e = journal_->finish_rewrite(dirty, [this] { return sync_cache(); }, held);
    lock.lock();
    if (e == 0) {
        journal_rewritten_bytes_ = journal_->bytes();
        ++journal_rewrites_;
        const auto longest = std::max<std::uint64_t>(
            static_cast<std::uint64_t>(
                std::chrono::duration_cast<std::chrono::nanoseconds>(longest_hold).count()),
            static_cast<std::uint64_t>(held * 1e9));
        longest_rewrite_ns_ = std::max<std::uint64_t>(longest_rewrite_ns_.load(), longest);
    }
    return e;
}

} // namespace iosig::tier::detail
