// The journal's rewrite (journal.hpp): the records of the lines still dirty, written beside the
// journal while appends go on, then the records appended meanwhile, synced and renamed over it.
#include "journal.hpp"
#include "journal_format.hpp"

#include <chrono>
#include <fcntl.h>
#include <unistd.h>

namespace iosig::tier::detail {
using namespace journal_format;

void Journal::begin_rewrite() {
    std::lock_guard lock(append_mutex_);
    rewriting_ = true;
    tail_.clear();
    rewrite_files_ = files_;
    rewrite_sizes_ = sizes_;
    rewrite_cuts_ = cuts_;
    rewrite_forget_owed_ = forget_owed_;
}

void Journal::end_rewrite_locked() {
    rewriting_ = false;
    std::vector<char>().swap(tail_);
    rewrite_files_.clear();
    rewrite_sizes_.clear();
    rewrite_cuts_.clear();
    rewrite_forget_owed_.clear();
}

int Journal::finish_rewrite(const std::vector<std::pair<std::uint32_t, DirtyRecord>>& dirty_lines,
                            const std::function<int()>& before, double& held_seconds) {
    held_seconds = 0;
    const std::filesystem::path fresh = path_.string() + ".new";
    int error = 0;
    std::unique_ptr<File> next = File::open(fresh, O_RDWR | O_CREAT | O_TRUNC, 0600,
                                            FileRole::journal, false, faults_, error);
    // On failure the old journal stays: every record was appended to it.
    const auto give_up_locked = [&](int e) {
        end_rewrite_locked();
        next.reset();
        std::error_code ignored;
        std::filesystem::remove(fresh, ignored);
        return e;
    };
    const auto give_up = [&](int e) {
        std::lock_guard lock(append_mutex_);
        return give_up_locked(e);
    };
    if (!next) return give_up(-error);
    std::uint64_t end = 0;
    const auto write = [&](const std::vector<char>& bytes) {
        const ssize_t n = next->pwrite(bytes.data(), bytes.size(), static_cast<off_t>(end));
        if (n < 0) return static_cast<int>(n);
        end += bytes.size();
        return 0;
    };
    // The noted state, in writes of up to 1 MiB: the dirty lines may be millions.
    constexpr std::size_t chunk_bytes = 1 << 20;
    std::vector<char> chunk;
    chunk.reserve(chunk_bytes + 4096);
    const auto write_if_full = [&](std::size_t at_least) {
        if (chunk.size() < at_least) return 0;
        const int e = write(chunk);
        chunk.clear();
        return e;
    };
    const HeaderPayload h{magic, line_size_, slots_, version, page_cache_};
    encode_record(chunk, header, &h, sizeof h);
    for (const auto& [id, named] : rewrite_files_) {
        const std::vector<char> payload = file_payload(
            id, named.identity.inode, named.identity.born_ns, named.identity.file_system.type,
            named.identity.file_system.id, named.path);
        encode_record(chunk, file_born, payload.data(), static_cast<std::uint16_t>(payload.size()));
        if (const FileHandle& handle = named.identity.handle; handle.known()) {
            const std::vector<char> bytes = handle_payload(id, handle.type, handle.bytes);
            encode_record(chunk, file_handle, bytes.data(),
                          static_cast<std::uint16_t>(bytes.size()));
        }
        if (const int e = write_if_full(chunk_bytes); e < 0) return give_up(e);
    }
    // Before the DIRTY records: replay takes a file's size from its TRUNCATE record and then
    // the largest of the DIRTY records after it.
    for (const auto& [id, length] : rewrite_cuts_) {
        const SizePayload s{id, length};
        encode_record(chunk, truncate, &s, sizeof s);
    }
    for (const auto& [slot, line] : dirty_lines) {
        const auto it = rewrite_sizes_.find(line.file);
        const DirtyPayload d{slot, line.file, line.line,
                             it == rewrite_sizes_.end() ? 0 : it->second};
        encode_record(chunk, dirty, &d, sizeof d);
        for (const ByteRange& part : line.parts) {
            const DirtyPartPayload p{slot, part.begin, part.end};
            encode_record(chunk, dirty_part, &p, sizeof p);
        }
        if (const int e = write_if_full(chunk_bytes); e < 0) return give_up(e);
    }
    if (const int e = write_if_full(1); e < 0) return give_up(e);
    // The bulk of both syncs before appends are held; under the hold they cover only the tail.
    if (const int e = next->fdatasync(); e < 0) return give_up(e);
    if (const int e = before(); e < 0) return give_up(e);

    // Closing the replaced journal frees its pages (its name is gone), which takes a while for a
    // large one: it is closed after appends are let go (declared before the locks).
    std::unique_ptr<File> replaced;
    std::lock_guard sync(sync_mutex_);
    std::lock_guard lock(append_mutex_);
    const auto held_from = std::chrono::steady_clock::now();
    // The tail, and a COMMIT of everything: each DIRTY record in this file follows its line's data,
    // and `before` syncs the cache file before this file is synced and named the journal.
    const CommitPayload everything{end + tail_.size()};
    encode_record(tail_, commit, &everything, sizeof everything);
    if (const int e = write(tail_); e < 0) return give_up_locked(e);
    if (const int e = before(); e < 0) return give_up_locked(e);
    if (const int e = next->fdatasync(); e < 0) return give_up_locked(e);
    if (const int e = next->rename_to(path_); e < 0) return give_up_locked(e);
    // Make the rename durable before any append reaches the new journal: sync the directory.
    const int dir = ::open(path_.parent_path().empty() ? "." : path_.parent_path().c_str(),
                           O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
        ::fsync(dir);
        ::close(dir);
    }
    replaced = std::move(file_);
    file_ = std::move(next);
    end_ = end;
    committed_end_ = settled_end_ = end;
    ++file_generation_;
    synced_ = appended_;
    // The new journal holds no record of what an id reused before the rewrite named: its
    // FILE_FORGOTTEN record is no longer owed (one reused since may be: the noted files were).
    for (const std::uint32_t id : rewrite_forget_owed_)
        forget_owed_.erase(id);
    end_rewrite_locked();
    held_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - held_from).count();
    return 0;
}

} // namespace iosig::tier::detail
