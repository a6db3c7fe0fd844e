// ftruncate: the file's lines beyond the new end leave the cache, the partial line keeps its part,
// and the journal records the truncate and then that the home file was cut (engine_impl.hpp).
#include "engine_impl.hpp"

#include <algorithm>
#include <cerrno>
#include <limits>

namespace iosig::tier::detail {

// With mutex_ held: pins every line of `file` from `first_line` on that is in the index (filled
// or being filled), in slot order (the order in which ftruncate takes their data locks). It costs
// the file's lines beyond first_line or, when those are more, one pass over the cache's lines.
std::vector<Slot> Engine::pin_lines_from_locked(const HomeFile& file, std::uint64_t first_line) {
    std::vector<Slot> slots;
    if (file.line_end <= first_line) return slots;
    if (file.line_end - first_line <= lines_) {
        for (std::uint64_t line = first_line; line < file.line_end; ++line)
            if (const Slot* s = index_.find(key_of(file.id, line))) slots.push_back(*s);
        std::sort(slots.begin(), slots.end());
    } else {
        for (Slot s = 0; s < lines_; ++s) {
            const LineMeta& m = meta_[s];
            if (m.file != file.id || line_of(m.key) < first_line) continue;
            if (const Slot* owner = index_.find(m.key); owner != nullptr && *owner == s)
                slots.push_back(s);
        }
    }
    for (const Slot s : slots)
        ++meta_[s].pins;
    return slots;
}

// With the file's append_mutex held, once its home file is cut: recovery must not cut it again,
// as that would undo whatever the file grew by since (before session 30 a crash any time after an
// O_TRUNC open emptied the file, fsynced bytes and all). The record need not be durable before
// the call returns, only before an fsync does.
void Engine::record_truncate_done(HomeFile& file) {
    file.truncate_done_unrecorded = journal_->append_truncate_done(file.id) < 0;
    file.journal_sync_at_fsync = true;
}

int Engine::ftruncate(int handle, off_t length) {
    // In ftruncate(2)'s order: a negative length, no such handle, one that may not write.
    if (length < 0) return -EINVAL;
    Handle* h = nullptr;
    HomeFile* file = file_of(handle, &h);
    if (file == nullptr) return -EBADF;
    if (!h->writable) return -EINVAL;
    return truncate_file(*file, length);
}

int Engine::truncate_file(HomeFile& file, off_t length) {
    if (length > cacheable_end()) return -EFBIG;
    if (abandoned_) return -EIO;
    // Appends and other truncates of the file take this lock for their whole course: an append
    // (its offset and its write) is wholly before or after, and truncates come one at a time.
    std::lock_guard serial(file.append_mutex);
    // Growing a file whose last cut is unfinished would leave the home file's old bytes between
    // the two lengths where the file reads zeros.
    if (file.reaches_beyond_unfinished_cut(length))
        if (const int e = finish_cut_locked(file); e < 0) return e;
    return truncate_locked(file, length);
}

int Engine::finish_cut(HomeFile& file) {
    std::lock_guard serial(file.append_mutex);
    return finish_cut_locked(file);
}

// The truncate is made again: nothing grew the file beyond its length since (writes beyond it
// finish the cut first), so this one drops no line and leaves the file as the first meant to.
int Engine::finish_cut_locked(HomeFile& file) {
    const std::int64_t cut = file.unfinished_cut.load();
    return cut < 0 ? 0 : truncate_locked(file, static_cast<off_t>(cut));
}

int Engine::truncate_locked(HomeFile& file, off_t length) {
    // Reads and writes of the bytes it cuts, writes home past the cache included, come wholly
    // before or after it.
    const RangeLock::Hold hold(file.ranges, length, std::numeric_limits<off_t>::max(), true);
    // Calls on the bytes below the new end go on meanwhile, and one can reach the line the new
    // end falls in (the partial line); the flusher and fsync do not take ranges at all. From here
    // on no line of the file enters the cache (acquire waits: a fill of the partial line would
    // read its old bytes beyond the end) and no write-back of one starts (flush_slots skips
    // them); those in flight finish first: a write-back that had read a line's old bytes would
    // write them home after the truncate. Then pin and lock every cached line at or beyond the
    // new end, lines still being filled included (their fill read the old bytes).
    const std::vector<Slot> slots =
        hold_lines_from(file, static_cast<std::uint64_t>(length) / line_size_);
    std::int64_t record;
    std::vector<std::pair<Slot, std::size_t>> partial;
    bool unrecorded_clean = false;
    {
        std::lock_guard lock(mutex_);
        // The record comes first, before any line is dropped: a truncate the journal refuses
        // changes nothing and fails, as a program expects of a failed call (before session 32
        // the lines were dropped first, and a crash then left a home file that matched neither
        // length, the dropped lines' last writes lost). The CLEAN records of the lines it drops
        // come after it, and so does their replay.
        record = journal_->append_truncate(file.id, length);
        if (record > 0) unrecorded_clean = cut_lines_locked(file, length, slots, partial);
    }
    int e = record < 0 ? static_cast<int>(record) : unrecorded_clean ? -EIO : 0;
    if (record > 0) e = finish_recorded_cut(file, length, record, partial, e);
    let_lines_go(file, slots, record > 0);
    return e;
}

std::vector<Slot> Engine::hold_lines_from(HomeFile& file, std::uint64_t first_line) {
    std::vector<Slot> slots;
    {
        std::unique_lock lock(mutex_);
        truncating_.push_back(file.id);
        changed_.wait(lock, [&] { return file.lines_in_writeback == 0; });
        slots = pin_lines_from_locked(file, first_line);
    }
    for (const Slot s : slots)
        data_locks_[s].lock();
    return slots;
}

void Engine::let_lines_go(HomeFile& file, const std::vector<Slot>& slots, bool changed) {
    {
        std::lock_guard lock(mutex_);
        truncating_.erase(std::find(truncating_.begin(), truncating_.end(), file.id));
        for (const Slot s : slots) {
            data_locks_[s].unlock();
            unpin_locked(s);
        }
        changed_.notify_all();
    }
    if (changed) { // what was read of the file before is stale
        ++file.write_generation;
        drop_prefetched(file.id);
    }
}

// With mutex_ held, the TRUNCATE record appended: drops the pinned lines at or beyond `length`,
// notes the partial line in `partial` (slot, bytes it keeps) and sets the file's sizes. Returns
// whether a line left without its CLEAN record: the journal still lists its old bytes dirty, and
// recovery would write them home once the file grew past them again.
bool Engine::cut_lines_locked(HomeFile& file, off_t length, const std::vector<Slot>& slots,
                              std::vector<std::pair<Slot, std::size_t>>& partial) {
    bool unrecorded_clean = false;
    for (const Slot s : slots) {
        LineMeta& m = meta_[s];
        if (!m.valid || m.file != file.id) continue;
        const auto start = static_cast<std::int64_t>(line_of(m.key) * line_size_);
        if (start < length) {
            partial.emplace_back(s, static_cast<std::size_t>(length - start));
            continue;
        }
        if (m.dirty) {
            m.dirty = false;
            dirty_parts_.erase(s);
            --dirty_count_;
            // Without its CLEAN record the journal still lists the slot as holding the line:
            // no other line may land in it (acquire's wait for the record fails, and the caller
            // goes home past the cache).
            const std::int64_t clean = journal_->append_clean(s);
            m.clean_record = clean > 0 ? clean : Journal::never_appended;
            unrecorded_clean = unrecorded_clean || clean <= 0;
        }
        drop_line_locked(s);
    }
    // The lines an earlier try at this cut could not record clean.
    return_slots_set_aside_locked();
    unrecorded_clean =
        unrecorded_clean || std::any_of(set_aside_.begin(), set_aside_.end(),
                                        [&](Slot s) { return meta_[s].file == file.id; });
    file.size = length;
    // The home file's bytes from the new end on are no longer the file's, cut yet or not:
    // a fill never reads them (nor would it if cutting the home file failed).
    file.home_size = length;
    // Every line of the file left in the index lies below the new end (no line entered since
    // the pins above, and the partial line is the only one at or beyond them that stays).
    file.line_end = std::min<std::uint64_t>(
        file.line_end, (static_cast<std::uint64_t>(length) + line_size_ - 1) / line_size_);
    return unrecorded_clean;
}

// The steps after the lines are cut (`e` is already an error when a CLEAN record was refused):
// the partial line's zeros, the sync that makes the record durable, the home file's cut and its
// record. Returns the first error; the cut is unfinished when there is one.
int Engine::finish_recorded_cut(HomeFile& file, off_t length, std::int64_t record,
                                const std::vector<std::pair<Slot, std::size_t>>& partial, int e) {
    // The bytes beyond the new end of the partial line must read as zeros if the file grows again,
    // also after a power cut: the sync before the TRUNCATE record is durable covers them (the
    // epoch), or recovery could write the line's older bytes beyond the cut, which an fsync may
    // have acknowledged (before session 31 it did). If the cache file refuses the zeros, a clean
    // partial line leaves the cache instead (a fill reads the home file only up to the new end); a
    // dirty one stays, and the cut is unfinished.
    std::vector<char> zeros(line_size_, 0);
    for (const auto& [s, keep] : partial) {
        if (e < 0) break;
        const ssize_t n = cache_->pwrite(zeros.data(), line_size_ - keep,
                                         static_cast<off_t>(s * line_size_ + keep));
        if (n >= 0) {
            ++cache_epoch_;
        } else {
            std::lock_guard lock(mutex_);
            if (!drop_clean_line_locked(s)) e = static_cast<int>(n);
        }
    }
    if (e == 0) e = journal_->sync_to(record, [this] { return sync_cache(); });
    if (e == 0) {
        e = file.io->ftruncate(length);
        file.home_unsynced = true;
    }
    if (e == 0) record_truncate_done(file);
    // A step above that failed left the file cut in the engine (its lines beyond the end dropped,
    // its size set) but perhaps not at home: finish_cut makes the cut again later.
    file.unfinished_cut = e < 0 ? length : -1;
    return e;
}

} // namespace iosig::tier::detail
