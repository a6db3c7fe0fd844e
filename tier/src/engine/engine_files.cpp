// Home files and their handles (engine_impl.hpp): open finds a file by its device and inode, and
// close-to-open consistency: a file another program changed while the engine held none of its
// handles loses its cached lines at the next open, which reads it afresh.
#include "engine_impl.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace iosig::tier::detail {

HomeFile* Engine::file_of(int handle, Handle** out) {
    std::shared_lock lock(files_mutex_);
    const auto it = handles_.find(handle);
    if (it == handles_.end()) return nullptr;
    if (out) *out = it->second.get();
    return files_.at(it->second->file).get();
}

std::filesystem::path Engine::held_path_of(const std::filesystem::path& absolute,
                                           const FileStatus& status) const {
    std::shared_lock lock(files_mutex_);
    const auto it = file_ids_.find(FileIdentity{status.device, status.inode});
    if (it == file_ids_.end()) return {};
    const HomeFile& file = *files_.at(it->second);
    if (file.opened_as != absolute.native() || file.born_ns != status.born_ns) return {};
    return file.path;
}

int Engine::open_file(const std::filesystem::path& home, int flags, mode_t mode) {
    if (abandoned_) return -EIO;
    const int access = flags & O_ACCMODE;
    // The handle's calls may write; the file is written (cut by O_TRUNC) also by a read-only
    // open, which Linux lets empty the file when the caller may write it, as open(2) does.
    const bool writable = access == O_WRONLY || access == O_RDWR;
    const bool writes_file = writable || (flags & O_TRUNC);
    // Nothing here throws (before session 42 a loop of links made std::filesystem::exists throw
    // out of an O_EXCL open). A relative path needs the working directory.
    std::error_code ec;
    const std::filesystem::path absolute = std::filesystem::absolute(home, ec);
    if (ec) return -(ec.value() != 0 ? ec.value() : ENOENT);
    // The file the path leads to now. One the engine holds, opened again by the absolute path it
    // was opened by last, keeps the canonical path it has while that still leads to it (a link
    // on the way may have changed since: then the path is worked out again). Working it out
    // (weakly_canonical: a readlink and a stat per component) was half of such an open's time.
    FileStatus status;
    int looked = status_of(absolute, status);
    std::filesystem::path canonical;
    if (looked == 0 && !(flags & O_CREAT)) {
        canonical = held_path_of(absolute, status);
        FileStatus there;
        if (!canonical.empty() &&
            (status_of(canonical, there) != 0 || there.device != status.device ||
             there.inode != status.inode || there.born_ns != status.born_ns))
            canonical.clear();
    }
    if (canonical.empty()) {
        canonical = std::filesystem::weakly_canonical(absolute, ec);
        if (ec) canonical = absolute;
    }
    // O_EXCL: anything at the name, a link that leads nowhere or into a loop included, is EEXIST,
    // as open(2) has it.
    struct stat at_name{};
    if ((flags & O_CREAT) && (flags & O_EXCL) && ::lstat(canonical.c_str(), &at_name) == 0)
        return -EEXIST;
    // The file the path names now, which the engine may hold under another path (a hard link, a
    // rename since) or not at all: a path that came to name another file (a rename over it, a
    // delete and a create) does not reach the lines of the one it named before (before session
    // 32 the engine went by the path, and served the old file's lines and wrote into it). A file
    // the engine holds needs no descriptor of its own unless this handle is the first to write.
    // A released file (release_idle_files) needs one too.
    std::unique_ptr<File> io;
    std::unique_lock lock(files_mutex_, std::defer_lock);
    std::map<FileIdentity, std::uint32_t>::iterator found;
    // An id promised to this open while it makes or opens a file the engine does not hold, given
    // back under `lock` (which it holds from then until it takes the id) or on an early return.
    // Before session 42 two opens could both see the last id free, both make their files, and
    // the second fail with ENFILE after making its file: its caller's own open(2) with O_EXCL
    // then failed too.
    struct IdPromise {
        Engine& engine;
        bool held = false;
        void give_back_locked() {
            if (held) --engine.file_ids_promised_;
            held = false;
        }
        ~IdPromise() {
            if (!held) return;
            std::unique_lock files(engine.files_mutex_);
            give_back_locked();
        }
    } promise{*this};
    for (bool first = true;; first = false) {
        if (!first) looked = status_of(canonical, status);
        // A path that leads to no file fails as open(2) would (and not with ENFILE when the engine
        // has no id to spare), unless O_CREAT makes the file: not there, no search permission, a
        // loop of links, a file where a directory should be.
        if (looked < 0 && (looked != -ENOENT || !(flags & O_CREAT))) return looked;
        bool need_descriptor = looked < 0; // not there: O_CREAT makes it
        bool needs_id = false;
        {
            std::shared_lock files(files_mutex_);
            const auto it = need_descriptor
                                ? file_ids_.end()
                                : file_ids_.find(FileIdentity{status.device, status.inode});
            needs_id = it == file_ids_.end();
            need_descriptor = need_descriptor || needs_id || !files_.at(it->second)->io.get() ||
                              (writes_file && !files_.at(it->second)->writable);
        }
        // A file the engine does not hold needs an id: without one the open fails before it
        // could create the file, so that the caller's own open(2) finds it as it was.
        if (needs_id && !promise.held) {
            std::unique_lock files(files_mutex_);
            if (!file_id_available_locked()) return -ENFILE;
            ++file_ids_promised_;
            promise.held = true;
        }
        if (!need_descriptor) {
            // No open(2) checks the caller's access to the file, so this does, as open(2) would
            // (the effective ids, access lists, CAP_DAC_OVERRIDE): the mode may have changed since
            // the engine's descriptor was opened.
            const int wanted = (access != O_WRONLY ? R_OK : 0) | (writes_file ? W_OK : 0);
            if (::faccessat(AT_FDCWD, canonical.c_str(), wanted, AT_EACCESS) != 0) return -errno;
        } else {
            int error = 0;
            // O_EXCL as asked: the file was not there at the look above, and if another program
            // makes it meanwhile this open fails with EEXIST, as open(2) would.
            io = File::open(canonical,
                            (writes_file ? O_RDWR : O_RDONLY) | (flags & (O_CREAT | O_EXCL)), mode,
                            FileRole::home, config_.direct_io, config_.faults, error);
            // A file its caller may write but not read: open(2) would open it write-only, but the
            // engine fills lines by reading it, so it declines (EOPNOTSUPP) rather than refuse
            // (EACCES): its caller can then open the file itself.
            if (!io && error == EACCES && access == O_WRONLY &&
                ::faccessat(AT_FDCWD, canonical.c_str(), W_OK, AT_EACCESS) == 0)
                return -EOPNOTSUPP;
            if (!io) return -error;
            if (const int e = io->status(status); e < 0) return e;
        }
        lock.lock();
        promise.give_back_locked(); // the id is taken below, under this lock
        found = file_ids_.find(FileIdentity{status.device, status.inode});
        // Released (or released and forgotten) between the look above and the lock: look
        // again, for a descriptor.
        if (io || (found != file_ids_.end() && files_.at(found->second)->io.get())) break;
        lock.unlock();
    }
    const FileIdentity identity{status.device, status.inode};
    const FileVersion& version = status.version;
    std::uint32_t id;
    HomeFile* file;
    bool forget = false; // the file changed since its last close: its lines leave first
    if (found != file_ids_.end()) {
        id = found->second;
        file = files_.at(id).get();
        if (file->idle_entry) unlist_idle_locked(*file);
        file->unlinked = false;
        // Changed by another program since its last handle closed, or another file in its inode
        // number (a released file's may be handed out again): the cached lines and the size are
        // stale (before session 32 the engine served them). No call is in flight on it, as no
        // handle is open, and handles opened meanwhile wait (`forgetting`).
        const bool reborn = status.born_ns != file->born_ns;
        if (file->handles == 0 &&
            (reborn || (file->closed_version && *file->closed_version != version))) {
            forget = true;
            std::lock_guard table(mutex_);
            file->forgetting = true;
        }
        file->closed_version.reset();
        if (file->close_unsettled) { // this handle's close settles it
            file->close_unsettled = false;
            --unsettled_closes_;
        }
        if (io && (!file->io.get() || (writes_file && !file->writable))) {
            // Released, or the first handles only asked to read: this one's descriptor, to the
            // same file, serves the calls from now on.
            file->io.use(std::move(io));
            file->writable = writes_file;
        }
        file->opened_as = absolute.native();
        if (file->path != canonical.string() || reborn) {
            // Recovery finds the file by the path it was opened by last (the first may be gone),
            // and writes into it only if it was born when the journal says. mark_dirty reads
            // the path and the birth time under mutex_ alone.
            std::lock_guard table(mutex_);
            file->path = canonical.string();
            file->born_ns = status.born_ns;
            // Another file in the inode number has a handle of its own (a reborn file came with
            // the descriptor just put in place: it was released).
            if (reborn) {
                file->handle = FileHandle{};
                if (const File* now = file->io.get()) (void)now->handle(file->handle);
            }
            journal_->append_file(id, file->path, file->journaled_identity());
        }
    } else {
        if (!io) return -EAGAIN; // unreachable: the loop above brings a descriptor for a new file
        id = take_file_id_locked();
        if (id == 0) return -ENFILE; // the caller opens the file itself
        auto f = std::make_shared<HomeFile>();
        f->id = id;
        f->incarnation = ++files_made_;
        f->path = canonical.string();
        f->opened_as = absolute.native();
        f->inode = identity.second;
        f->born_ns = status.born_ns;
        (void)io->file_system(f->file_system); // unknown ({0, 0}) if fstatfs fails
        (void)io->handle(f->handle);           // unknown (empty) where the file system gives none
        f->device = identity.first;
        f->writable = writes_file;
        const off_t size = io->size();
        if (size < 0) return static_cast<int>(size);
        f->size = f->home_size = size;
        f->io.use(std::move(io));
        file = f.get();
        {
            // Without its FILE record (the journal fails) the file is still served: none of its
            // lines is recorded dirty until the record is appended (mark_dirty), so its writes
            // go home meanwhile.
            std::lock_guard table(mutex_);
            f->journaled = journal_->append_file(id, f->path, f->journaled_identity()) > 0;
        }
        files_[id] = std::move(f);
        file_ids_[identity] = id;
    }
    ++file->handles;
    auto h = std::make_unique<Handle>();
    h->file = id;
    h->readable = access == O_RDONLY || access == O_RDWR;
    h->writable = writable;
    if (flags & O_DIRECT) h->past_cache = File::Path::direct_when_aligned;
    if (!config_.prefetch.empty())
        h->prefetcher = make_prefetcher(config_.prefetch, prefetch_config_);
    const int handle = next_handle_++;
    handles_[handle] = std::move(h);
    lock.unlock();
    if (forget) {
        forget_lines(*file, version.size);
    } else {
        std::unique_lock table(mutex_);
        changed_.wait(table, [&] { return !file->forgetting; });
    }
    if (flags & O_TRUNC) {
        if (const int e = truncate_file(*file, 0); e < 0) {
            close(handle);
            return e;
        }
    }
    return handle;
}

// A key holds 24 bits of file id (line_meta.hpp): an engine that has met 16.7 M files hands out
// the ids of forgotten ones again (before session 41 the id went on counting, and file 2^24 + 1's
// lines had file 1's keys). Its journal records may still name the old file: the journal drops
// them in replay (Journal::reuse_file_id), the prefetch buffer's lines of it are told apart by
// incarnation, and no line of it is cached (Engine::forget_unused_locked).
std::uint32_t Engine::take_file_id_locked() {
    if (next_file_ <= most_file_ids_) return next_file_++;
    if (!file_id_available_locked()) return 0;
    for (;;) {
        reuse_cursor_ = reuse_cursor_ % most_file_ids_ + 1;
        if (!files_.contains(reuse_cursor_)) break;
    }
    journal_->reuse_file_id(reuse_cursor_);
    ++file_ids_reused_;
    return reuse_cursor_;
}

int Engine::close(int handle) {
    Handle* h = nullptr;
    HomeFile* file = file_of(handle, &h);
    if (file == nullptr) return -EBADF;
    const int flushed = abandoned_ ? -EIO : flush_file(file->id, false);
    // A line whose write-back was under way when the close began, and whose CLEAN record the
    // journal refused then, is home but still dirty: its record is tried once more. The file
    // settles either way (such a line counts as home: home_unrecorded), but until the record is
    // in, the journal lists the line dirty, and a crash would make recovery write it home again
    // over a change another program makes after this close (RefusedRecordCrash.*). A journal
    // that still refuses (its device full) fails no close: the bytes are home.
    if (flushed == 0) record_lines_home(file->id);
    std::unique_lock lock(files_mutex_);
    --file->handles;
    handles_.erase(handle);
    const bool idle = file->handles == 0 && settle_closed_locked(*file, flushed == 0);
    lock.unlock();
    if (idle) release_idle_files(false);
    return flushed;
}

// The last handle is gone. With every line home, the file's version now is what the next open
// compares with (a version taken while a write-back is still landing only makes that open drop
// lines it could have kept), and the file is listed idle, unless a cut is not finished at home
// (which needs its descriptor). Else (a close that failed) both wait for settle_failed_closes:
// without the version, an open after another program changed the file would serve the old
// bytes and size (before session 43).
bool Engine::settle_closed_locked(HomeFile& file, bool lines_home) {
    FileStatus status;
    bool settled = lines_home && file.io->status(status) == 0;
    if (settled) {
        std::lock_guard table(mutex_);
        settled = !has_lines_not_home_locked(file.id);
    }
    if (!settled && !file.close_unsettled) {
        file.close_unsettled = true;
        ++unsettled_closes_;
    } else if (settled && file.close_unsettled) {
        file.close_unsettled = false;
        --unsettled_closes_;
    }
    if (!settled) return false;
    file.closed_version = status.version;
    if (file.unfinished_cut >= 0 || file.truncate_done_unrecorded) return false;
    list_idle_locked(file, status.links == 0);
    return true;
}

void Engine::settle_failed_closes() {
    if (unsettled_closes_.load() == 0) return;
    bool idle = false;
    {
        std::unique_lock files(files_mutex_);
        for (const auto& [id, file] : files_)
            if (file->close_unsettled && file->handles == 0)
                idle = settle_closed_locked(*file, true) || idle;
    }
    if (idle) release_idle_files(false);
}

off_t Engine::file_size(int handle) {
    HomeFile* file = file_of(handle);
    if (file == nullptr) return -EBADF;
    std::lock_guard lock(mutex_);
    return file->size;
}

bool Engine::has_lines_not_home_locked(std::uint32_t file_id) {
    bool not_home = false;
    for_each_dirty_locked([&](Slot, const LineMeta& m) {
        not_home = not_home || (m.file == file_id && !home_unrecorded(m));
    });
    return not_home;
}

// As a truncate to 0 does in the engine (truncate_locked), without touching the home file: clean
// lines need no record to leave, and a dirty line whose bytes are home already (its CLEAN record
// refused, home_unrecorded) leaves as cut_lines_locked lets one go, its slot set aside while the
// journal refuses the record. A line not home, which no settled close left behind (the caller
// found every line home at the last close), would stay. No range is held: no handle of the file
// was open, and those opened meanwhile wait for `forgetting` to end (or, for a deleted file, can
// only be opened through another process's descriptor, and read its bytes from home).
void Engine::forget_lines(HomeFile& file, std::optional<std::int64_t> size) {
    const std::vector<Slot> slots = hold_lines_from(file, 0);
    {
        std::lock_guard lock(mutex_);
        for (const Slot s : slots) {
            LineMeta& m = meta_[s];
            if (!m.valid || m.file != file.id) continue;
            if (m.dirty && home_unrecorded(m)) {
                m.dirty = false;
                dirty_parts_.erase(s);
                --dirty_count_;
                const std::int64_t clean = journal_->append_clean(s);
                m.clean_record = clean > 0 ? clean : Journal::never_appended;
            }
            if (!m.dirty) drop_line_locked(s);
        }
        if (size) {
            file.size = file.home_size = *size;
            file.forgetting = false; // the opens waiting for it wake at let_lines_go's notify
            // Recovery writes a dirty line home up to the largest size the journal took since
            // the file's last TRUNCATE record: one larger than the file is now would make it
            // write a new last line past the end (before session 45 the file grew back after a
            // crash, zeros and all).
            if (*size < journal_->journaled_size(file.id)) (void)record_size_from_home_locked(file);
        }
    }
    let_lines_go(file, slots, true);
}

bool Engine::record_size_from_home_locked(HomeFile& file) {
    if (journal_->append_truncate(file.id, file.size) < 0) {
        file.size_record_owed = true;
        return false;
    }
    file.size_record_owed = false;
    // Without it recovery would cut the home file to this size, over what another program may
    // write after the next close: fsync asks for it again, as after a truncate.
    if (journal_->append_truncate_done(file.id) < 0) file.truncate_done_unrecorded = true;
    return true;
}

} // namespace iosig::tier::detail
