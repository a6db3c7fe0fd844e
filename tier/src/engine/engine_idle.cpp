// Idle home files (engine_impl.hpp): a file whose last handle closed with every line home keeps its
// descriptors for a while, so that opening it again costs no open(2); beyond TierConfig::idle_files
// idle files, the longest idle are released (their descriptors closed), and a deleted file at once:
// at its last close, or within a second of its deletion (mark_deleted_idle_files), with its
// cached lines, as nobody can ask for them again. Before session 33 the engine kept a descriptor of
// every file it had ever opened: a program that opened and closed files one at a time ran out of
// descriptors after about as many files as its limit (1,024 by default), and a deleted file's
// blocks stayed allocated until the engine closed. Any other released file keeps its id, identity
// and its cached lines: the next open finds it by device and inode and brings a descriptor, and
// close-to-open consistency (its closed version) drops the lines if the inode now belongs to
// another file or another program changed it.
#include "engine_impl.hpp"

#include <chrono>

namespace iosig::tier::detail {

void Engine::list_idle_locked(HomeFile& file, bool unlinked) {
    if (file.idle_entry) unlist_idle_locked(file);
    ++file.idle_stamp;
    file.unlinked = unlinked;
    // A deleted file goes first: nobody can open it by its name again, and its blocks stay
    // allocated while the engine holds it.
    file.idle_entry = unlinked ? idle_files_.insert(idle_files_.begin(), file.id)
                               : idle_files_.insert(idle_files_.end(), file.id);
}

void Engine::unlist_idle_locked(HomeFile& file) {
    idle_files_.erase(*file.idle_entry);
    file.idle_entry.reset();
}

void Engine::note_line_left_locked(std::uint32_t file) {
    const auto it = resident_lines_.find(file);
    if (it == resident_lines_.end() || --it->second > 0) return;
    resident_lines_.erase(it);
    files_without_lines_.push_back(file);
}

bool Engine::forget_unused_locked(HomeFile& file) {
    {
        std::lock_guard table(mutex_);
        if (file.handles > 0 || file.io.get() != nullptr || file.idle_entry || file.forgetting ||
            file.lines_in_writeback > 0 || resident_lines_.contains(file.id))
            return false;
    }
    // No line of it in the cache, so none dirty and none in the prefetch worker's hands but a
    // read that finds no descriptor; no handle, so nobody can reach it but by its identity, which
    // goes with it. The next open of the file makes a new one, with a new id.
    journal_->forget_file(file.id);
    file_ids_.erase(FileIdentity{file.device, file.inode});
    files_.erase(file.id); // flush_all and the prefetch worker may still hold it (shared)
    return true;
}

std::shared_ptr<HomeFile> Engine::next_to_release_locked(const std::vector<std::uint32_t>& busy) {
    for (const std::uint32_t id : idle_files_) {
        if (std::find(busy.begin(), busy.end(), id) != busy.end()) continue;
        const auto& file = files_.at(id);
        // Deleted files come first in the list: past them, only the bound releases a file.
        return file->unlinked || idle_files_.size() > config_.idle_files ? file : nullptr;
    }
    return nullptr;
}

void Engine::release_idle_files(bool may_sync) {
    // Files released earlier whose last line has been evicted since.
    std::vector<std::uint32_t> without_lines;
    {
        std::lock_guard table(mutex_);
        without_lines.swap(files_without_lines_);
    }
    if (!without_lines.empty()) {
        std::unique_lock files(files_mutex_);
        for (const std::uint32_t id : without_lines)
            if (const auto it = files_.find(id); it != files_.end())
                (void)forget_unused_locked(*it->second);
    }
    // Files whose descriptor the prefetch worker, flush_all, the write-back or another release's
    // sync is using: the next in line goes instead, and the releaser's next round (within a
    // second) retries them.
    std::vector<std::uint32_t> busy;
    for (;;) {
        std::shared_ptr<HomeFile> victim;
        std::uint64_t stamp = 0;
        bool unlinked = false;
        {
            std::shared_lock files(files_mutex_);
            victim = next_to_release_locked(busy);
            if (!victim) return;
            stamp = victim->idle_stamp;
            unlinked = victim->unlinked;
            // The sync may take seconds on a slow home device, and this close's caller never
            // wrote that file: the releaser thread makes it. Past twice the bound, so that a
            // program closing files faster than their syncs end does not run out of
            // descriptors, the close makes it.
            if (!may_sync && !unlinked &&
                (victim->home_unsynced || victim->journal_sync_at_fsync) &&
                idle_files_.size() <= 2 * config_.idle_files) {
                {
                    std::lock_guard release(release_mutex_);
                    release_wanted_ = true;
                }
                release_wake_.notify_one();
                return;
            }
        }
        // Bytes that went home past the write-back are synced first, as flush_all would have
        // synced them had the engine kept the descriptor; outside the lock, as the home device
        // may be slow. So are the journal's records the file's next fsync would sync
        // (sync_journal_for): the duty is the file's, and a released file whose lines have left
        // the cache is forgotten, its next open a new file that owes nothing. A deleted file's
        // bytes go with its last descriptor: no sync, and its lines leave now, not when the
        // policy evicts them (a reopen in between only misses).
        int synced = 0;
        if (unlinked) {
            forget_lines(*victim, std::nullopt);
        } else {
            if (victim->home_unsynced.exchange(false)) {
                HomeIo::Use io(victim->io);
                if (io) synced = io->fdatasync();
                if (synced < 0) victim->home_unsynced = true;
            }
            if (synced == 0) synced = sync_journal_for(*victim);
        }
        std::unique_lock files(files_mutex_);
        // Opened again meanwhile (and maybe idle again, with bytes this sync did not cover):
        // the next round looks at it afresh.
        if (!victim->idle_entry || victim->idle_stamp != stamp) continue;
        if (synced < 0) {
            // The home device or the journal failed: the file keeps its descriptor, so that
            // flush_all and the next fsync report the failure instead of a release hiding it.
            unlist_idle_locked(*victim);
            continue;
        }
        if (!victim->io.try_close()) {
            busy.push_back(victim->id);
            continue;
        }
        unlist_idle_locked(*victim);
        victim->writable = false;
        (void)forget_unused_locked(*victim);
    }
}

void Engine::releaser_loop() {
    // A deleted idle file's blocks stay allocated while the engine holds its descriptor: a second
    // is about as long as a program that deletes and recreates files may wait for the space.
    constexpr auto round = std::chrono::seconds(1);
    auto next_round = std::chrono::steady_clock::now() + round;
    std::unique_lock lock(release_mutex_);
    while (!releaser_stopping_) {
        // A close's request may have come before this thread first waited.
        release_wake_.wait_until(lock, next_round,
                                 [&] { return release_wanted_ || releaser_stopping_; });
        if (releaser_stopping_) break;
        const bool round_due = std::chrono::steady_clock::now() >= next_round;
        release_wanted_ = false;
        lock.unlock();
        if (round_due) {
            mark_deleted_idle_files();
            settle_failed_closes(); // their lines went home since, by the flusher
        }
        // Also retries a release that found a descriptor in use: no close of a deleted file may
        // ever come to retry it.
        release_idle_files(true);
        lock.lock();
        if (round_due) next_round = std::chrono::steady_clock::now() + round;
    }
}

void Engine::mark_deleted_idle_files() {
    std::vector<std::shared_ptr<HomeFile>> named;
    {
        std::shared_lock files(files_mutex_);
        for (const std::uint32_t id : idle_files_)
            if (const auto& file = files_.at(id); !file->unlinked) named.push_back(file);
    }
    for (const auto& file : named) {
        FileStatus status;
        {
            HomeIo::Use io(file->io);
            if (!io || io->status(status) < 0 || status.links > 0) continue;
        }
        std::unique_lock files(files_mutex_);
        if (file->idle_entry && !file->unlinked) list_idle_locked(*file, true);
    }
}

} // namespace iosig::tier::detail
