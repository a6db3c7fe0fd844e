// When lines go home: the flusher thread, fsync/close, flush_all and commit (engine_impl.hpp; the
// write-back itself: engine_writeback.cpp).
#include "engine_impl.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <limits>

namespace iosig::tier::detail {

// Every line of `file_id` that was dirty when this was called is written home (its content as of
// now or later) before it returns; then the home file is synced when asked.
int Engine::flush_file(std::uint32_t file_id, bool sync_home) {
    std::shared_ptr<HomeFile> held; // flush_all's file may be forgotten meanwhile
    {
        std::shared_lock files(files_mutex_);
        const auto it = files_.find(file_id);
        if (it == files_.end()) return 0; // forgotten: it had no line in the cache, nor a handle
        held = it->second;
    }
    HomeFile* const file = held.get();
    // The home file may still hold bytes a failed truncate cut from the file.
    if (file->reaches_beyond_unfinished_cut(std::numeric_limits<std::int64_t>::max()))
        if (const int e = finish_cut(*file); e < 0) return e;
    struct Target {
        Slot slot;
        Key key;
        std::uint64_t generation;
    };
    std::vector<Target> targets;
    {
        std::lock_guard lock(mutex_);
        for_each_dirty_locked([&](Slot s, const LineMeta& m) {
            if (m.file != file_id) return;
            // Home already, its CLEAN record missing: one more try, and nothing to wait for.
            if (m.flushed_generation >= m.generation && !m.flushing)
                (void)record_clean_locked(s);
            else
                targets.push_back({s, m.key, m.generation});
        });
    }
    while (!targets.empty()) {
        std::vector<Slot> mine;
        bool others = false;
        {
            std::lock_guard lock(mutex_);
            std::erase_if(targets, [&](const Target& t) {
                const LineMeta& m = meta_[t.slot];
                return !m.valid || m.key != t.key || m.flushed_generation >= t.generation ||
                       !m.dirty;
            });
            // A truncate drops the lines beyond its end; the others are claimed once it is done.
            const bool truncating = truncating_locked(file_id);
            for (const Target& t : targets) {
                if (meta_[t.slot].flushing || truncating)
                    others = true;
                else
                    mine.push_back(t.slot);
            }
        }
        if (targets.empty()) break;
        if (!mine.empty()) {
            if (const int e = flush_slots(mine); e < 0) return e;
        } else if (others) {
            std::unique_lock lock(mutex_);
            changed_.wait_for(lock, std::chrono::milliseconds(10));
        }
    }
    if (!sync_home) return 0;
    {
        // flush_all reaches files no handle has open: one released since holds no descriptor,
        // and was synced before its release (release_idle_files).
        HomeIo::Use io(file->io);
        const bool unsynced = file->home_unsynced.exchange(false);
        if (io) {
            if (const int e = io->fdatasync(); e < 0) {
                if (unsynced) file->home_unsynced = true;
                return e;
            }
        }
    }
    // A truncate whose TRUNCATE_DONE record the journal refused: until it takes the record,
    // recovery would cut the home file back to the truncate's length, and no byte beyond it is
    // durable.
    if (file->truncate_done_unrecorded) {
        std::lock_guard serial(file->append_mutex); // no truncate of the file meanwhile
        if (file->truncate_done_unrecorded) {
            if (journal_->append_truncate_done(file->id) < 0) return -EIO;
            file->truncate_done_unrecorded = false;
        }
    }
    return sync_journal_for(*file);
}

void Engine::record_lines_home(std::uint32_t file_id) {
    std::lock_guard lock(mutex_);
    for_each_dirty_locked([&](Slot s, const LineMeta& m) {
        if (m.file == file_id && home_unrecorded(m)) (void)record_clean_locked(s);
    });
}

// Bytes written home past the cache are durable once the home file is synced, but a slot the line
// left may still hold its older bytes under a DIRTY record whose CLEAN record is not yet durable
// (appended when it was written back, synced by the commit after that write-back unless it
// failed, and else when the slot is reused): recovery would write those over the new bytes. So
// the CLEAN records appended so far are made durable too, and with them a truncate's TRUNCATE_DONE
// record. While the journal cannot be synced, the file keeps the duty (its next fsync fails).
int Engine::sync_journal_for(HomeFile& file) {
    if (!file.journal_sync_at_fsync.exchange(false)) return 0;
    const int e = journal_->sync_to(journal_->appended(), [this] { return sync_cache(); });
    if (e < 0) file.journal_sync_at_fsync = true;
    return e;
}

int Engine::fsync(int handle) {
    HomeFile* file = file_of(handle);
    if (file == nullptr) return -EBADF;
    if (abandoned_) return -EIO;
    return flush_file(file->id, true);
}

int Engine::commit() {
    return abandoned_ ? -EIO : commit_journal();
}

int Engine::flush_all() {
    std::vector<std::uint32_t> ids;
    {
        std::shared_lock files(files_mutex_);
        for (const auto& [id, f] : files_)
            ids.push_back(id);
    }
    int first = 0;
    for (const std::uint32_t id : ids)
        if (const int e = flush_file(id, true); e < 0 && first == 0) first = e;
    if (first == 0) settle_failed_closes();
    return first;
}

void Engine::flusher_loop() {
    const auto interval =
        std::chrono::duration<double>(std::clamp(config_.writeback_delay / 2, 0.005, 1.0));
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        flusher_wake_.wait_for(lock, interval);
        while (!stopping_) {
            const bool pressure = dirty_count_ * 2 > max_dirty_ || slot_waiters_ > 0;
            const double ripe = now() - config_.writeback_delay;
            std::vector<Slot> batch;
            std::size_t skipped = 0;
            while (!dirty_fifo_.empty() && batch.size() < std::max(1u, config_.queue_depth) &&
                   skipped < dirty_fifo_.size()) {
                const auto [slot, token] = dirty_fifo_.front();
                const LineMeta& m = meta_[slot];
                if (!current_dirty_entry_locked(slot, token)) { // cleaned since: stale entry
                    dirty_fifo_.pop_front();
                    continue;
                }
                if (!pressure && m.dirty_since > ripe) break; // the FIFO is oldest first
                dirty_fifo_.pop_front();
                // Someone else is writing it back, or its file is being truncated: look again
                // later.
                if (m.flushing || truncating_locked(m.file)) {
                    dirty_fifo_.emplace_back(slot, token);
                    ++skipped;
                    continue;
                }
                batch.push_back(slot);
                dirty_fifo_.emplace_back(slot, token); // dropped as stale once it is clean
            }
            if (batch.empty()) break;
            lock.unlock();
            int unrecorded = 0;
            const int e = flush_slots(batch, &unrecorded);
            // A journal that takes no CLEAN records keeps lines dirty as surely as a failing
            // home device: writers must not wait for the room either would make.
            flush_error_ = e < 0 ? e : unrecorded;
            lock.lock();
            if (flush_error_ < 0) break; // retry at the next interval; writers see flush_error_
        }
        if (!stopping_ && journal_->bytes() > std::max(config_.journal_compaction_bytes,
                                                       2 * journal_rewritten_bytes_))
            compact_journal(lock);
    }
}

} // namespace iosig::tier::detail
