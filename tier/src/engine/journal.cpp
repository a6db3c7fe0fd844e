// The metadata journal (journal.hpp).
#include "journal.hpp"

#include "journal_format.hpp"
#include "page_cache_instance.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <stdexcept>
#include <sys/file.h>
#include <unistd.h>
#include <vector>

namespace iosig::tier::detail {
using namespace journal_format;
namespace {

template <class T>
T load(const char* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// Applies one record after the header (at byte `at`, its payload `p` of `length` bytes) to
// `state`; false when this engine does not know its type, or the type with that length.
bool replay_record(JournalState& state, std::uint16_t type, const char* p, std::uint16_t length,
                   std::size_t at) {
    switch (type) {
    case file:
        if (length < 4) return false;
        state.files[load<std::uint32_t>(p)] = std::string(p + 4, length - 4u);
        return true;
    case file_at_inode: {
        if (length < 12) return false;
        const auto id = load<std::uint32_t>(p);
        state.files[id] = std::string(p + 12, length - 12u);
        state.identities[id] = JournaledIdentity{load<std::uint64_t>(p + 4), 0, {}, {}};
        return true;
    }
    case file_born: {
        if (length < file_born_head) return false;
        const auto id = load<std::uint32_t>(p);
        state.files[id] = std::string(p + file_born_head, length - file_born_head);
        state.identities[id] = JournaledIdentity{
            load<std::uint64_t>(p + 4),
            load<std::int64_t>(p + 12),
            FileSystemIdentity{load<std::uint64_t>(p + 20), load<std::uint64_t>(p + 28)},
            {}};
        return true;
    }
    case file_handle: {
        if (length <= file_handle_head || length > file_handle_head + file_handle_most)
            return false;
        // It follows its file's FILE_BORN record; alone (that record torn) it names nothing.
        if (const auto it = state.identities.find(load<std::uint32_t>(p));
            it != state.identities.end())
            it->second.handle =
                FileHandle{load<std::int32_t>(p + 4),
                           std::string(p + file_handle_head, length - file_handle_head)};
        return true;
    }
    case dirty: {
        if (length != sizeof(DirtyPayload)) return false;
        const auto d = load<DirtyPayload>(p);
        const std::uint32_t slot = d.slot, file_id = d.file;
        const std::int64_t file_size = d.size; // copies: the payload is packed
        state.dirty[slot] = DirtyRecord{file_id, d.line, at + head + length, {}};
        auto& s = state.sizes[file_id];
        s = std::max(s, file_size);
        return true;
    }
    case dirty_part: {
        if (length != sizeof(DirtyPartPayload)) return false;
        const auto d = load<DirtyPartPayload>(p);
        // A part names bytes of the line its slot's last DIRTY record named; none: nothing.
        if (const auto it = state.dirty.find(d.slot); it != state.dirty.end() && d.begin < d.end)
            add_dirty_part(it->second.parts, ByteRange{d.begin, d.end});
        return true;
    }
    case file_forgotten: {
        if (length != 4) return false;
        const auto id = load<std::uint32_t>(p);
        state.files.erase(id);
        state.identities.erase(id);
        state.sizes.erase(id);
        state.truncated.erase(id);
        // A line of the forgotten file left the cache clean, but its CLEAN record may have been
        // refused (its slot set aside): it is home already, and the id's new file must not get it.
        std::erase_if(state.dirty, [&](const auto& slot) { return slot.second.file == id; });
        return true;
    }
    case clean:
        if (length != 4) return false;
        state.dirty.erase(load<std::uint32_t>(p));
        return true;
    case size: {
        if (length != sizeof(SizePayload)) return false;
        const auto s = load<SizePayload>(p);
        const std::uint32_t file_id = s.file;
        const std::int64_t file_size = s.size;
        auto& current = state.sizes[file_id];
        current = std::max(current, file_size);
        return true;
    }
    case truncate: {
        if (length != sizeof(SizePayload)) return false;
        const auto s = load<SizePayload>(p);
        const std::uint32_t file_id = s.file;
        const std::int64_t file_size = s.size;
        state.sizes[file_id] = file_size;
        state.truncated[file_id] = file_size;
        return true;
    }
    case truncate_done:
        if (length != 4) return false;
        state.truncated.erase(load<std::uint32_t>(p));
        return true;
    case commit:
        if (length != sizeof(CommitPayload)) return false;
        // It covers only records before it, whatever it says.
        state.committed_end =
            std::max(state.committed_end, std::min<std::uint64_t>(load<CommitPayload>(p).end, at));
        return true;
    default:
        return false;
    }
}

} // namespace

Journal::Journal(const std::filesystem::path& path, std::shared_ptr<IoFaults> faults)
    : path_(path), faults_(faults) {
    int error = 0;
    file_ = File::open(path, O_RDWR | O_CREAT, 0600, FileRole::journal, false, std::move(faults),
                       error);
    if (!file_)
        throw std::runtime_error(fmt::format("{}: cannot open the tier journal: {}", path.string(),
                                             std::strerror(error)));
    // The lock is on a file of its own: the rewrite replaces the journal's inode.
    lock_fd_ = ::open((path.string() + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lock_fd_ < 0 || ::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
        if (lock_fd_ >= 0) ::close(lock_fd_);
        throw std::runtime_error(
            fmt::format("{}: the tier cache is in use by another process", path.string()));
    }
    const off_t n = file_->size();
    end_ = n > 0 ? static_cast<std::uint64_t>(n) : 0;
    page_cache_ = page_cache_instance(path);
}

std::uint64_t JournalState::drop_uncommitted() {
    return std::erase_if(dirty,
                         [&](const auto& entry) { return entry.second.end > committed_end; });
}

Journal::~Journal() {
    ::close(lock_fd_);
}

JournalState Journal::replay() {
    JournalState state;
    const off_t n = file_->size();
    if (n <= 0) return state;
    std::vector<char> bytes(static_cast<std::size_t>(n));
    const ssize_t got = file_->pread(bytes.data(), bytes.size(), 0);
    if (got < 0)
        throw std::runtime_error(fmt::format("{}: cannot read the journal: {}", path_.string(),
                                             std::strerror(static_cast<int>(-got))));
    bytes.resize(static_cast<std::size_t>(got));
    // A record this engine cannot read, whole and checksummed, comes from a newer iosig: what it
    // says about the dirty lines is unknown, so the journal is refused (and kept), never
    // skipped or reset.
    const auto unreadable = [&](const std::string& what) {
        return std::runtime_error(fmt::format(
            "{}: {} unknown to this iosig, which reads journal versions 1 to {}: the journal was "
            "written by a newer one; open the cache with that to write its dirty lines home, or "
            "remove the journal to drop them",
            path_.string(), what, version));
    };
    std::size_t at = 0;
    while (at + head <= bytes.size()) {
        const auto crc = load<std::uint32_t>(&bytes[at]);
        const auto type = load<std::uint16_t>(&bytes[at + 4]);
        const auto length = load<std::uint16_t>(&bytes[at + 6]);
        if (at + head + length > bytes.size() || checksum(&bytes[at + 4], 4u + length) != crc) {
            state.torn_tail = true;
            break;
        }
        const char* p = &bytes[at + head];
        if (type == header &&
            (length == sizeof(HeaderPayload) || length == sizeof(HeaderPayloadV1))) {
            const auto h = load<HeaderPayloadV1>(p);
            const bool v1 = length == sizeof(HeaderPayloadV1);
            if (h.magic != magic) break; // not a journal of ours
            if (v1 ? h.version != 1 : h.version < 2 || h.version > version)
                throw unreadable(fmt::format("journal version {}", h.version));
            state = JournalState{};
            state.valid = true;
            state.line_size = h.line_size;
            state.slots = h.slots;
            if (v1) // every DIRTY record was synced after its line's data
                state.committed_end = std::numeric_limits<std::uint64_t>::max();
            else
                state.page_cache = load<HeaderPayload>(p).page_cache;
        } else if (!state.valid) {
            break; // records before a header: not ours
        } else if (!replay_record(state, type, p, length, at)) {
            throw unreadable(fmt::format("record type {} ({} bytes) at byte {}", type, length, at));
        }
        ++state.records;
        at += head + length;
    }
    if (at != bytes.size()) state.torn_tail = true;
    return state;
}

int Journal::reset(std::uint64_t line_size, std::uint64_t slots) {
    {
        std::lock_guard lock(append_mutex_);
        if (const int e = file_->ftruncate(0); e < 0) return e;
        end_ = 0;
        line_size_ = line_size;
        slots_ = slots;
        files_.clear();
        sizes_.clear();
        cuts_.clear();
        forget_owed_.clear(); // a new journal holds no earlier file's records
    }
    const HeaderPayload h{magic, line_size, slots, version, page_cache_};
    const std::int64_t seq = append(header, &h, sizeof h);
    if (seq < 0) return static_cast<int>(seq);
    {
        std::lock_guard lock(append_mutex_);
        committed_end_ = settled_end_ = end_; // the header needs no commit
    }
    return sync_to(seq);
}

std::int64_t Journal::append(std::uint16_t type, const void* payload, std::uint16_t length) {
    std::lock_guard lock(append_mutex_);
    return append_locked(type, payload, length);
}

std::int64_t Journal::append_locked(std::uint16_t type, const void* payload, std::uint16_t length) {
    std::vector<char> record;
    encode_record(record, type, payload, length);
    if (const int e = write_locked(record); e < 0) return e;
    // A COMMIT's offset means nothing in the rewritten file (which ends in a COMMIT of its own).
    if (rewriting_ && type != commit) tail_.insert(tail_.end(), record.begin(), record.end());
    return ++appended_;
}

int Journal::write_locked(const std::vector<char>& records) {
    const ssize_t n = file_->pwrite(records.data(), records.size(), static_cast<off_t>(end_));
    if (n < 0) return static_cast<int>(n);
    end_ += records.size();
    return 0;
}

std::int64_t Journal::append_file(std::uint32_t id, const std::string& path,
                                  JournaledIdentity identity) {
    const std::vector<char> payload =
        file_payload(id, identity.inode, identity.born_ns, identity.file_system.type,
                     identity.file_system.id, path);
    std::vector<char> records;
    std::lock_guard lock(append_mutex_);
    std::int64_t count = put_owed_forget_locked(records, id);
    encode_record(records, file_born, payload.data(), static_cast<std::uint16_t>(payload.size()));
    ++count;
    if (identity.handle.known()) {
        // Right after the FILE_BORN record, in the same write: replay gives it to that file.
        const std::vector<char> handle =
            handle_payload(id, identity.handle.type, identity.handle.bytes);
        encode_record(records, file_handle, handle.data(),
                      static_cast<std::uint16_t>(handle.size()));
        ++count;
    }
    files_[id] = NamedFile{path, std::move(identity)};
    return write_records_locked(records, id, count);
}

void Journal::forget_file(std::uint32_t id) {
    std::lock_guard lock(append_mutex_);
    files_.erase(id);
    sizes_.erase(id);
}

void Journal::reuse_file_id(std::uint32_t id) {
    std::lock_guard lock(append_mutex_);
    files_.erase(id);
    sizes_.erase(id);
    cuts_.erase(id);
    forget_owed_.insert(id);
}

std::int64_t Journal::put_owed_forget_locked(std::vector<char>& records, std::uint32_t id) {
    if (!forget_owed_.contains(id)) return 0;
    encode_record(records, file_forgotten, &id, 4);
    return 1;
}

std::int64_t Journal::write_records_locked(const std::vector<char>& records, std::uint32_t id,
                                           std::int64_t count) {
    if (const int e = write_locked(records); e < 0) return e;
    // Written: the FILE_FORGOTTEN record, if one was owed, went out with it (a failed write
    // leaves no whole record, so it is still owed).
    forget_owed_.erase(id);
    if (rewriting_) tail_.insert(tail_.end(), records.begin(), records.end());
    return appended_ += count;
}

std::int64_t Journal::append_naming_file_locked(std::uint32_t id, std::uint16_t type,
                                                const void* payload, std::uint16_t length) {
    std::vector<char> records;
    const std::int64_t count = put_owed_forget_locked(records, id) + 1;
    encode_record(records, type, payload, length);
    return write_records_locked(records, id, count);
}

std::int64_t Journal::append_dirty(std::uint32_t slot, std::uint32_t file_id, std::uint64_t line,
                                   std::int64_t file_size) {
    const DirtyPayload d{slot, file_id, line, file_size};
    std::lock_guard lock(append_mutex_);
    const std::int64_t record = append_naming_file_locked(file_id, dirty, &d, sizeof d);
    if (record > 0) sizes_[file_id] = file_size;
    return record;
}

std::int64_t Journal::append_dirty_part(std::uint32_t slot, ByteRange part) {
    const DirtyPartPayload d{slot, part.begin, part.end};
    return append(dirty_part, &d, sizeof d);
}

std::int64_t Journal::append_clean(std::uint32_t slot) {
    return append(clean, &slot, 4);
}

std::int64_t Journal::append_size(std::uint32_t file_id, std::int64_t file_size) {
    const SizePayload s{file_id, file_size};
    std::lock_guard lock(append_mutex_);
    // Refused, it leaves the size recovery would read as it was: Engine::mark_dirty asks for it
    // again at the file's next write (before session 43 a refused size counted as journaled, and
    // a later write below it was lost by recovery after a crash of the process).
    const std::int64_t record = append_naming_file_locked(file_id, size, &s, sizeof s);
    if (record > 0) sizes_[file_id] = file_size;
    return record;
}

std::int64_t Journal::journaled_size(std::uint32_t file_id) const {
    std::lock_guard lock(append_mutex_);
    const auto it = sizes_.find(file_id);
    return it == sizes_.end() ? -1 : it->second;
}

std::int64_t Journal::append_truncate(std::uint32_t file_id, std::int64_t file_size) {
    const SizePayload s{file_id, file_size};
    std::lock_guard lock(append_mutex_);
    const std::int64_t record = append_naming_file_locked(file_id, truncate, &s, sizeof s);
    // A truncate whose record the journal refuses does not happen (Engine::truncate_locked), so
    // a rewrite must not make it either.
    if (record > 0) {
        sizes_[file_id] = file_size;
        cuts_[file_id] = file_size;
    }
    return record;
}

std::int64_t Journal::append_truncate_done(std::uint32_t file_id) {
    std::lock_guard lock(append_mutex_);
    // The home file is cut, whether or not this record lands: a rewrite must not make recovery
    // cut it again.
    cuts_.erase(file_id);
    return append_naming_file_locked(file_id, truncate_done, &file_id, 4);
}

CommitPoint Journal::commit_point() const {
    std::lock_guard lock(append_mutex_);
    return CommitPoint{file_generation_, end_, end_ == settled_end_};
}

std::int64_t Journal::append_commit(const CommitPoint& point) {
    std::lock_guard lock(append_mutex_);
    if (point.file_generation != file_generation_ || point.end <= committed_end_) return 0;
    const CommitPayload c{point.end};
    const bool covers_all = point.end == end_;
    const std::int64_t record = append_locked(commit, &c, sizeof c);
    if (record > 0) {
        committed_end_ = point.end;
        if (covers_all) settled_end_ = end_; // the COMMIT record itself needs none
    }
    return record;
}

int Journal::sync_locked() {
    std::int64_t target;
    {
        std::lock_guard lock(append_mutex_);
        target = appended_;
    }
    if (const int e = file_->fdatasync(); e < 0) return e;
    synced_ = std::max(synced_, target);
    return 0;
}

std::int64_t Journal::appended() const {
    std::lock_guard lock(append_mutex_);
    return appended_;
}

std::uint64_t Journal::bytes() const {
    std::lock_guard lock(append_mutex_);
    return end_;
}

} // namespace iosig::tier::detail
