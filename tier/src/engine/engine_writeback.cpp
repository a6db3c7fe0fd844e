// The write-back of a set of dirty lines (flush_slots): snapshots under their locks, home writes in
// runs through io_uring, the home and cache files synced, the lines recorded clean, and a commit
// of the journal (engine_impl.hpp).
#include "engine_impl.hpp"

#include <algorithm>
#include <cerrno>
#include <set>

namespace iosig::tier::detail {
namespace {

struct Snapshot {
    Slot slot = 0;
    Key key = 0;
    std::uint64_t generation = 0;
    HomeFile* file = nullptr;
    std::int64_t start = 0; // of the line in the file
    // The dirty parts of the line that lie inside the file (the bytes that go home), in order.
    std::vector<ByteRange> parts;
    char* data = nullptr; // the whole line
    std::int64_t written_end() const { return parts.empty() ? start : start + parts.back().end; }
};

// The dirty bytes of lines of a batch that go home in one write: bytes of adjacent lines of one
// file that follow each other without a gap, up to TierConfig::io_run_bytes (the same bound as
// reads); each part of a line dirty in parts starts a write of its own, unless it continues the
// previous line's.
struct WriteRun {
    HomeFile* file = nullptr;
    std::int64_t start = 0;
    std::size_t bytes = 0;
    std::vector<std::size_t> members; // indices into the batch's snapshots, in file order
    std::vector<iovec> pieces;        // in the snapshots' buffers
};

// The batch [begin, end) of `snaps` (in key order) as write runs; lines that failed their snapshot
// or have no dirty byte inside the file are left out.
std::vector<WriteRun> write_runs(const std::vector<Snapshot>& snaps, std::size_t begin,
                                 std::size_t end, const std::vector<int>& result,
                                 std::uint64_t line_size, std::uint64_t run_bytes) {
    std::vector<WriteRun> runs;
    for (std::size_t i = begin; i < end; ++i) {
        const Snapshot& snap = snaps[i];
        if (result[i - begin] != 0) continue;
        for (const ByteRange& part : snap.parts) {
            const std::int64_t at = snap.start + part.begin;
            const std::size_t bytes = part.end - part.begin;
            const iovec piece{snap.data + part.begin, bytes};
            WriteRun* last = runs.empty() ? nullptr : &runs.back();
            // Whole lines from a line's start stay a run of their own on a direct descriptor,
            // so that they go home with O_DIRECT; dirty bytes that continue across a line's end
            // join whatever run they continue.
            const auto ls = static_cast<std::int64_t>(line_size);
            const bool whole_run = last != nullptr && last->start % ls == 0 &&
                                   static_cast<std::int64_t>(last->bytes) % ls == 0;
            const bool joins = last != nullptr && last->file == snap.file &&
                               last->start + static_cast<std::int64_t>(last->bytes) == at &&
                               last->members.size() < io_run_lines(run_bytes, line_size) &&
                               (!snap.file->io->direct() || !whole_run || bytes == line_size);
            if (joins) {
                last->bytes += bytes;
                last->members.push_back(i);
                last->pieces.push_back(piece);
            } else {
                runs.push_back(WriteRun{snap.file, at, bytes, {i}, {piece}});
            }
        }
    }
    return runs;
}

// `parts` without what lies at or beyond `inside` bytes of the line (the end of the file).
std::vector<ByteRange> inside_the_file(std::vector<ByteRange> parts, std::size_t inside) {
    const auto limit = static_cast<std::uint32_t>(inside);
    std::erase_if(parts, [&](const ByteRange& p) { return p.begin >= limit; });
    if (!parts.empty()) parts.back().end = std::min(parts.back().end, limit);
    return parts;
}

} // namespace

// With mutex_ held: records a dirty line clean whose bytes are home and synced, the home file
// and then the cache file (rule 3 of docs/tier.md); -errno, the line still dirty, when the journal
// does not take the CLEAN record. Such a line stays in its slot (dirty lines are not evicted), so
// the DIRTY record the journal keeps for it can only make recovery write the bytes that are home
// already, or a later write's.
int Engine::record_clean_locked(Slot slot) {
    LineMeta& m = meta_[slot];
    const std::int64_t record = journal_->append_clean(slot);
    if (record < 0) return static_cast<int>(record);
    m.dirty = false;
    dirty_parts_.erase(slot);
    --dirty_count_;
    m.clean_record = record;
    return 0;
}

int Engine::flush_slots(const std::vector<Slot>& slots, int* unrecorded) {
    const auto note_unrecorded = [&](int e) {
        if (e < 0 && unrecorded != nullptr) *unrecorded = e;
    };
    // Claim: a line is written back by one thread at a time.
    std::vector<Snapshot> claimed;
    {
        std::lock_guard lock(mutex_);
        for (const Slot s : slots) {
            LineMeta& m = meta_[s];
            // A truncate of the file waits for the write-backs in flight and lets none start.
            if (!m.valid || !m.dirty || m.flushing || truncating_locked(m.file)) continue;
            // Home already, by a write-back whose CLEAN record the journal did not take: only
            // the record is missing.
            if (m.flushed_generation >= m.generation) {
                note_unrecorded(record_clean_locked(s));
                continue;
            }
            HomeFile* file;
            {
                std::shared_lock files(files_mutex_, std::try_to_lock);
                const auto f = files.owns_lock() ? files_.find(m.file) : files_.end();
                if (f == files_.end()) continue; // next round
                file = f->second.get();
            }
            m.flushing = true;
            ++m.pins;
            ++file->lines_in_writeback;
            claimed.push_back(Snapshot{s, m.key, 0, file, 0, {}, nullptr});
        }
    }
    if (claimed.empty()) return 0;
    // In key order (file, then line): adjacent lines land in one batch and go home in one write.
    std::sort(claimed.begin(), claimed.end(),
              [](const Snapshot& a, const Snapshot& b) { return a.key < b.key; });
    int first_error = 0;
    const std::size_t batch_size =
        std::min<std::size_t>(std::max(1u, config_.queue_depth), staging_->count() / 4);
    for (std::size_t begin = 0; begin < claimed.size(); begin += batch_size) {
        const std::size_t end = std::min(claimed.size(), begin + batch_size);
        std::vector<int> result(end - begin, 0);
        // All buffers of a batch at once: concurrent write-backs never hold some and wait for more.
        const std::vector<char*> buffers = staging_->acquire_many(end - begin);
        // Snapshot each line's data under its shared lock: writers wait, readers do not.
        for (std::size_t i = begin; i < end; ++i) {
            Snapshot& snap = claimed[i];
            snap.data = buffers[i - begin];
            data_locks_[snap.slot].lock_shared();
            {
                std::lock_guard lock(mutex_);
                const LineMeta& m = meta_[snap.slot];
                // Claimed lines stay (they are pinned, and a truncate waits for them); this
                // only guards the write-back against writing home a line it does not hold.
                if (!m.valid || !m.dirty || m.key != snap.key) {
                    result[i - begin] = 1;
                    data_locks_[snap.slot].unlock_shared();
                    continue;
                }
                snap.generation = m.generation;
                snap.start = static_cast<std::int64_t>(line_of(m.key) * line_size_);
                // With dirty_bytes_only, only the bytes writes changed go home: the rest is what
                // the fill read, and another writer of the file may have changed it there since.
                const auto inside = static_cast<std::uint32_t>(std::clamp<std::int64_t>(
                    snap.file->size - snap.start, 0, static_cast<std::int64_t>(line_size_)));
                snap.parts =
                    inside_the_file(config_.dirty_bytes_only ? dirty_parts_locked(snap.slot)
                                                             : std::vector<ByteRange>{{0, inside}},
                                    inside);
            }
            const ssize_t n =
                cache_->pread(snap.data, line_size_, static_cast<off_t>(snap.slot * line_size_));
            data_locks_[snap.slot].unlock_shared();
            if (n < 0) result[i - begin] = static_cast<int>(n);
        }
        // Home writes: adjacent lines of one file in one write (write_runs), and one io_uring
        // submission for the batch where possible.
        const std::vector<WriteRun> runs =
            write_runs(claimed, begin, end, result, line_size_, config_.io_run_bytes);
        writeback_writes_ += runs.size();
        const auto fail_run = [&](std::size_t r, int e) {
            for (const std::size_t i : runs[r].members)
                result[i - begin] = e;
        };
        std::vector<std::size_t> sync_writes;
        {
            std::unique_lock ring(ring_mutex_, std::defer_lock);
            unsigned submitted = 0;
            if (uring_) ring.lock();
            for (std::size_t r = 0; r < runs.size(); ++r) {
                const WriteRun& run = runs[r];
                const int fd = run.file->io->uring_fd();
                const bool whole = run.bytes % line_size_ == 0 && run.file->io->direct();
                if (uring_ && fd >= 0 && (whole || !run.file->io->direct())) {
                    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
                    if (sqe != nullptr) {
                        io_uring_prep_writev(sqe, fd, runs[r].pieces.data(),
                                             static_cast<unsigned>(runs[r].pieces.size()),
                                             static_cast<std::uint64_t>(run.start));
                        io_uring_sqe_set_data(sqe, reinterpret_cast<void*>(r));
                        ++submitted;
                        continue;
                    }
                }
                sync_writes.push_back(r);
            }
            if (submitted > 0) {
                const int s = io_uring_submit_and_wait(&ring_, submitted);
                for (unsigned done = 0; done < submitted; ++done) {
                    io_uring_cqe* cqe = nullptr;
                    if (io_uring_wait_cqe(&ring_, &cqe) < 0 || cqe == nullptr) {
                        first_error = first_error ? first_error : -EIO;
                        break;
                    }
                    const auto r = reinterpret_cast<std::size_t>(io_uring_cqe_get_data(cqe));
                    const int res = cqe->res;
                    io_uring_cqe_seen(&ring_, cqe);
                    if (res < 0)
                        fail_run(r, res);
                    else if (static_cast<std::size_t>(res) < runs[r].bytes)
                        sync_writes.push_back(r); // short: redo
                }
                if (s < 0 && first_error == 0) first_error = s;
            }
        }
        for (const std::size_t r : sync_writes) {
            const ssize_t n = runs[r].file->io->pwritev(runs[r].pieces, runs[r].start);
            if (n < 0) fail_run(r, static_cast<int>(n));
        }
        // Durable on the home files, and the cache file at least as new as what went home, before
        // the lines may be recorded clean.
        std::set<HomeFile*> touched;
        for (std::size_t i = begin; i < end; ++i)
            if (result[i - begin] == 0 && !claimed[i].parts.empty())
                touched.insert(claimed[i].file);
        for (HomeFile* f : touched) {
            ++home_syncs_;
            if (const int e = f->io->fdatasync(); e < 0)
                for (std::size_t i = begin; i < end; ++i)
                    if (claimed[i].file == f && result[i - begin] == 0) result[i - begin] = e;
        }
        {
            std::lock_guard sync(cache_sync_mutex_);
            const std::uint64_t epoch = cache_epoch_.load();
            if (const int e = cache_->fdatasync(); e < 0) {
                for (int& r : result)
                    if (r == 0) r = e;
            } else {
                cache_synced_epoch_ = std::max(cache_synced_epoch_.load(), epoch);
            }
        }
        {
            std::lock_guard lock(mutex_);
            for (std::size_t i = begin; i < end; ++i) {
                const Snapshot& snap = claimed[i];
                LineMeta& m = meta_[snap.slot];
                if (result[i - begin] > 0) { // skipped: nothing to record
                } else if (result[i - begin] == 0) {
                    m.flushed_generation = std::max(m.flushed_generation, snap.generation);
                    snap.file->home_size =
                        std::max<std::int64_t>(snap.file->home_size, snap.written_end());
                    ++writebacks_;
                    if (m.generation == snap.generation) { // no write since the snapshot
                        // A line the journal cannot record clean stays dirty: the journal still
                        // lists it in this slot, so the slot must not take other data (recovery
                        // would write that over the line), and a write to it must not go home
                        // past the cache (recovery would write the old bytes over it). Its bytes
                        // are home and synced, so an fsync waiting for them succeeds.
                        note_unrecorded(record_clean_locked(snap.slot));
                    } else {
                        // Written again during its write-back: what is dirty now is new data, so
                        // a new dirty period starts (as Linux's redirty_tail does). Keeping the
                        // old start made the line ripe at once and the flusher wrote a hot line
                        // home back to back, one batch after another, at the device's full rate.
                        m.dirty_token = ++dirty_tokens_;
                        m.dirty_since = now();
                        dirty_fifo_.emplace_back(snap.slot, m.dirty_token);
                    }
                } else if (first_error == 0) {
                    first_error = result[i - begin];
                }
                m.flushing = false;
                --snap.file->lines_in_writeback;
                unpin_locked(snap.slot);
                staging_->release(snap.data);
            }
            changed_.notify_all();
        }
    }
    (void)commit_journal(); // the DIRTY records so far, and the CLEAN records of this write-back
    return first_error;
}

} // namespace iosig::tier::detail
