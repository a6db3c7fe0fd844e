// Dirty lines: marking a line dirty with its journal records, the byte ranges a dirty line holds
// (TierConfig::dirty_bytes_only), and the journal's group commit (engine_impl.hpp).
#include "engine_impl.hpp"

#include <algorithm>

namespace iosig::tier::detail {

// With the line's data lock held exclusively, after its data was written into the cache file.
// Returns unrecorded_dirty, with nothing changed, when a clean line's DIRTY record cannot be
// appended (the journal's device is full or gone): the caller drops the line and writes home.
// Returns unrecorded_size when the write grew the file and the journal cannot take the SIZE
// record: the line is dirty as asked, and the caller writes the bytes home too.
//
// Neither record is synced here (before session 30 each DIRTY and SIZE record was, with the cache
// file before it: two device flushes per newly dirty line). After a crash of the process they are
// in the journal's pages, as the line's bytes are in the cache file's, and recovery trusts them
// all. After a power cut recovery trusts only the DIRTY records a COMMIT covers (commit_journal):
// an uncommitted one may name a slot whose durable bytes are still the previous line's. Only what
// an fsync made durable is promised then, and fsync writes the line home itself.
int Engine::mark_dirty(HomeFile& file, Slot slot, std::int64_t new_size, ByteRange written) {
    std::lock_guard lock(mutex_);
    LineMeta& m = meta_[slot];
    const std::int64_t size = std::max(file.size, new_size);
    bool size_unrecorded = false;
    if (!m.dirty) {
        if (!file.journaled) { // opened while the journal failed: named first
            if (journal_->append_file(file.id, file.path, file.journaled_identity()) < 0)
                return unrecorded_dirty;
            file.journaled = true;
        }
        if (file.size_record_owed && !record_size_from_home_locked(file)) return unrecorded_dirty;
        // A failed append leaves no whole record (a torn one is overwritten by the next): the
        // journal still says what it said of the slot before this write.
        if (journal_->append_dirty(slot, file.id, line_of(m.key), size) < 0)
            return unrecorded_dirty;
        m.dirty = true;
        m.dirty_begin = written.begin;
        m.dirty_end = written.end;
        dirty_parts_.erase(slot);
        // Without its first DIRTY_PART record recovery writes the whole line (more than the
        // writes changed, never less), and so does the write-back, which then records no part.
        // A later part taken alone would make recovery write only that part: the next part is
        // the whole line.
        m.parts_unrecorded =
            config_.dirty_bytes_only && journal_->append_dirty_part(slot, written) < 0;
        if (m.parts_unrecorded) {
            m.dirty_begin = 0;
            m.dirty_end = static_cast<std::uint32_t>(line_size_);
        }
        ++dirty_count_;
        m.dirty_token = ++dirty_tokens_;
        m.dirty_since = now();
        dirty_fifo_.emplace_back(slot, m.dirty_token);
    } else {
        // A part the journal does not name would not be written home by recovery: the caller
        // writes the bytes home too when it cannot take the record (unrecorded_size). After a
        // refused part, the line's parts in memory cover bytes the journal does not name: the
        // whole line is recorded, even for a write those parts cover (before session 43 such a
        // write appended nothing, and recovery after a crash of the process lost it).
        if (config_.dirty_bytes_only &&
            (m.parts_unrecorded || !dirty_bytes_cover_locked(slot, written))) {
            add_dirty_bytes_locked(slot, written);
            const ByteRange part =
                m.parts_unrecorded ? ByteRange{0, static_cast<std::uint32_t>(line_size_)} : written;
            m.parts_unrecorded = journal_->append_dirty_part(slot, part) < 0;
            size_unrecorded = m.parts_unrecorded;
        }
        // Recovery writes a dirty line home up to its file's journaled size. Durable before the
        // bytes it covers, this record has recovery write the slot's older content of this same
        // line there (a committed DIRTY record's slot holds the line's bytes durably), never
        // another line's. Compared with the size the journal took, not the engine's: a write
        // below a size whose record was refused still needs one.
        if (size > journal_->journaled_size(file.id) && journal_->append_size(file.id, size) < 0)
            size_unrecorded = true;
    }
    ++m.generation;
    file.size = size;
    return size_unrecorded ? unrecorded_size : 0;
}

// A dirty line's span grows to cover `written`; where the two leave a gap, the line keeps its
// parts in dirty_parts_, so that a write-back does not put the bytes between home (another writer
// of the file may have changed them there).
void Engine::add_dirty_bytes_locked(Slot slot, ByteRange written) {
    LineMeta& m = meta_[slot];
    auto parts = dirty_parts_.find(slot);
    if (parts == dirty_parts_.end()) {
        if (written.begin <= m.dirty_end && written.end >= m.dirty_begin) { // one part still
            m.dirty_begin = std::min(m.dirty_begin, written.begin);
            m.dirty_end = std::max(m.dirty_end, written.end);
            return;
        }
        parts =
            dirty_parts_.emplace(slot, std::vector<ByteRange>{{m.dirty_begin, m.dirty_end}}).first;
    }
    add_dirty_part(parts->second, written);
    m.dirty_begin = parts->second.front().begin;
    m.dirty_end = parts->second.back().end;
    if (parts->second.size() == 1) dirty_parts_.erase(parts);
}

bool Engine::dirty_bytes_cover_locked(Slot slot, ByteRange written) const {
    const auto covers = [&](const ByteRange& part) {
        return part.begin <= written.begin && written.end <= part.end;
    };
    if (const auto parts = dirty_parts_.find(slot); parts != dirty_parts_.end())
        return std::any_of(parts->second.begin(), parts->second.end(), covers);
    return covers(ByteRange{meta_[slot].dirty_begin, meta_[slot].dirty_end});
}

std::vector<ByteRange> Engine::dirty_parts_locked(Slot slot) const {
    if (const auto parts = dirty_parts_.find(slot); parts != dirty_parts_.end())
        return parts->second;
    return {ByteRange{meta_[slot].dirty_begin, meta_[slot].dirty_end}};
}

// Makes the DIRTY records appended so far trustworthy after a power cut: the point is noted, the
// cache file synced (each record was appended after its line's first data landed in the slot, so
// that data is now durable), then a COMMIT record appended and the journal synced, which also
// makes the CLEAN records before it durable (rule 2 of docs/tier.md then rarely waits). After a
// write-back its failure is ignored: it leaves those records uncommitted, which costs only what
// recovery after a power cut could have brought home beyond what fsync made durable.
int Engine::commit_journal() {
    const CommitPoint point = journal_->commit_point();
    if (point.nothing_new) return 0;
    if (const int e = sync_cache(); e < 0) return e;
    const std::int64_t record = journal_->append_commit(point);
    if (record <= 0) return static_cast<int>(record);
    if (const int e = journal_->sync_to(record); e < 0) return e;
    ++journal_commits_;
    return 0;
}

} // namespace iosig::tier::detail
