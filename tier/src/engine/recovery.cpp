// Crash recovery (recovery.hpp).
#include "recovery.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace iosig::tier::detail {

std::filesystem::path journal_path(const TierConfig& config) {
    return config.cache_file.string() + ".journal";
}

JournalState replay_or_refuse(Journal& journal) {
    try {
        return journal.replay();
    } catch (const std::runtime_error& e) {
        throw TierError(e.what());
    }
}

namespace {

TierError recovery_failed(const TierConfig& config, const std::string& what, int error) {
    return TierError(
        fmt::format("{}: recovery failed: {}: {} (the journal is kept; fix and reopen)",
                    config.cache_file.string(), what, std::strerror(error)));
}

// The home files of the journal's dirty lines, each opened once: the file the journal names, found
// at its path, or by its handle where it was renamed or moved since. A file that is gone (deleted)
// or whose path names another file now is none; one that is there but cannot be opened (no
// permission, a read-only mount, a device error) or whose file system is not mounted fails the
// recovery, so that its lines wait in the journal.
class HomeFiles {
public:
    HomeFiles(const TierConfig& config, const JournalState& state, RecoveryReport& report)
        : config_(config), state_(state), report_(report) {}

    // nullptr when the file is gone; replaced() says whether another file is at its path.
    File* find(std::uint32_t id) {
        if (const auto it = homes_.find(id); it != homes_.end()) return it->second.get();
        std::unique_ptr<File> f;
        if (const auto name = state_.files.find(id); name != state_.files.end())
            f = open(id, name->second);
        File* raw = f.get();
        homes_[id] = std::move(f);
        return raw;
    }
    bool replaced(std::uint32_t id) const { return replaced_.count(id) != 0; }

    void sync_all() {
        for (auto& [id, f] : homes_)
            if (f) {
                if (const int e = f->fdatasync(); e < 0)
                    throw recovery_failed(config_, "syncing " + f->path().string(), -e);
            }
    }

private:
    std::unique_ptr<File> open(std::uint32_t id, const std::string& path) {
        const auto journaled = state_.identities.find(id);
        const JournaledIdentity* was =
            journaled == state_.identities.end() ? nullptr : &journaled->second;
        int error = 0;
        auto f = File::open(path, O_RDWR, 0, FileRole::home, false, config_.faults, error);
        // A file that is there and cannot be opened now still needs its lines. Gone, it has
        // nowhere to take them; a directory at its path is another file, and so is a loop of
        // symbolic links (ELOOP; the file was renamed or deleted, and a link made at its name:
        // before session 43 the recovery failed there and never looked for it by its handle).
        if (!f && error != ENOENT && error != ENOTDIR && error != EISDIR && error != ELOOP)
            throw recovery_failed(config_, "opening " + path, error);
        bool another_at_path = !f && (error == EISDIR || error == ELOOP);
        // The inode and its birth time: a device's number may change across a reboot, an
        // inode's does not, and a file made after the crash may have the same inode number.
        if (f && was && !is(*f, *was)) {
            f.reset();
            another_at_path = true;
        }
        if (!f && was) f = moved(path, *was);
        if (f) return f;
        if (another_at_path) {
            replaced_.insert(id);
            return nullptr;
        }
        // Not there: deleted, or on a file system not mounted now, where the path ends on the
        // one below the mount point.
        if (was && was->file_system.known()) {
            FileSystemIdentity now;
            if (file_system_at(path, now) < 0 || now != was->file_system)
                throw TierError(fmt::format(
                    "{}: recovery failed: {} is not there, and its path now ends on another file "
                    "system than the file was on (not mounted?); mount it and reopen, or remove "
                    "the journal {} to drop the file's dirty lines",
                    config_.cache_file.string(), path, journal_path(config_).string()));
        }
        return nullptr;
    }

    // Whether `f` is the file the journal named (its inode, and its birth time where both sides
    // know one), and still has a name.
    static bool is(const File& f, const JournaledIdentity& was) {
        FileStatus now;
        return f.status(now) == 0 && now.inode == was.inode &&
               (was.born_ns == 0 || now.born_ns == 0 || now.born_ns == was.born_ns) &&
               now.links > 0;
    }

    // The file by its handle, where its path no longer leads to it: renamed or moved within its
    // file system. A program that renames its output after writing it (a checkpoint written as
    // `ckpt.tmp` and renamed over `ckpt`) would otherwise lose the lines a crash left dirty.
    // Nothing when the handle finds no file (deleted: ESTALE), the engine may not open by
    // handle (EPERM: no CAP_DAC_READ_SEARCH), the file system is not mounted (EXDEV) or gives
    // no handles; any other error (a file found but not writable, a device error) fails the
    // recovery, as at its path.
    std::unique_ptr<File> moved(const std::string& path, const JournaledIdentity& was) {
        if (!was.handle.known()) return nullptr;
        int error = 0;
        auto f = File::open_by_handle(was.handle, path, was.file_system, O_RDWR, FileRole::home,
                                      config_.faults, error);
        const bool nothing_found = error == ESTALE || error == EPERM || error == EXDEV ||
                                   error == EOPNOTSUPP || error == EINVAL || error == ENOENT;
        if (!f && !nothing_found)
            throw recovery_failed(config_, "opening " + path + ", moved (found by its handle)",
                                  error);
        if (!f) return nullptr;
        if (!is(*f, was)) return nullptr;
        ++report_.files_found_moved;
        return f;
    }

    const TierConfig& config_;
    const JournalState& state_;
    RecoveryReport& report_;
    std::map<std::uint32_t, std::unique_ptr<File>> homes_;
    std::set<std::uint32_t> replaced_; // files whose path names another file now
};

} // namespace

RecoveryReport write_home_after_crash(const TierConfig& config, JournalState state,
                                      std::uint64_t page_cache) {
    RecoveryReport report;
    report.journal_found = state.valid;
    report.torn_tail = state.torn_tail;
    report.dirty_lines = state.dirty.size();
    if (!state.valid) return report;
    report.power_cut = state.page_cache == 0 || state.page_cache != page_cache;
    if (report.power_cut) report.uncommitted_lines = state.drop_uncommitted();
    HomeFiles homes(config, state, report);
    // A truncate the journal holds may not have reached the home file: one that cut the file,
    // and one that grew it, which the engine showed grown as well (before session 43 recovery
    // left such a file at its old length).
    for (const auto& [id, length] : state.truncated) {
        if (File* f = homes.find(id); f != nullptr && f->size() != length) {
            if (const int e = f->ftruncate(length); e < 0)
                throw recovery_failed(config, "truncating " + f->path().string(), -e);
        }
    }
    if (!state.dirty.empty()) {
        int error = 0;
        auto cache = File::open(config.cache_file, O_RDONLY, 0, FileRole::cache, false,
                                config.faults, error);
        if (!cache && error == ENOENT)
            throw TierError(fmt::format(
                "{}: recovery failed: the cache file is gone, and the journal {} lists {} dirty "
                "lines in it; put it back, or remove the journal to drop them",
                config.cache_file.string(), journal_path(config).string(), state.dirty.size()));
        if (!cache) throw recovery_failed(config, "opening the cache file", error);
        std::vector<char> buffer(state.line_size);
        const std::vector<ByteRange> whole{
            ByteRange{0, static_cast<std::uint32_t>(state.line_size)}};
        for (const auto& [slot, line] : state.dirty) {
            File* f = homes.find(line.file);
            if (f == nullptr) {
                ++(homes.replaced(line.file) ? report.lines_of_replaced_files
                                             : report.missing_files);
                continue;
            }
            const ssize_t got = cache->pread(buffer.data(), buffer.size(),
                                             static_cast<off_t>(slot * state.line_size));
            if (got < 0)
                throw recovery_failed(config, "reading slot " + std::to_string(slot),
                                      static_cast<int>(-got));
            std::fill(buffer.begin() + got, buffer.end(), 0);
            const auto size_it = state.sizes.find(line.file);
            const std::int64_t size =
                std::max<std::int64_t>(size_it == state.sizes.end() ? 0 : size_it->second, 0);
            const auto start = static_cast<std::int64_t>(line.line * state.line_size);
            const std::int64_t inside =
                std::min<std::int64_t>(static_cast<std::int64_t>(state.line_size), size - start);
            if (inside <= 0) continue;
            // The parts the writes changed, where the journal names them (dirty_bytes_only: the
            // rest of the line is what the fill read, and another writer may have changed it).
            for (const ByteRange& part : line.parts.empty() ? whole : line.parts) {
                const std::int64_t end = std::min<std::int64_t>(part.end, inside);
                if (end <= part.begin) continue;
                const ssize_t put =
                    f->pwrite(buffer.data() + part.begin,
                              static_cast<std::size_t>(end - part.begin), start + part.begin);
                if (put < 0)
                    throw recovery_failed(config, "writing " + f->path().string(),
                                          static_cast<int>(-put));
            }
            ++report.lines_written_home;
        }
    }
    homes.sync_all();
    return report;
}

} // namespace iosig::tier::detail

namespace iosig::tier {

RecoveryReport TierCache::recover(const std::filesystem::path& cache_file) {
    TierConfig config;
    config.cache_file = cache_file;
    const std::filesystem::path journal_file = detail::journal_path(config);
    std::error_code ec;
    if (!std::filesystem::exists(journal_file, ec)) {
        if (ec)
            throw TierError(fmt::format("{}: cannot look for the journal: {}",
                                        journal_file.string(), ec.message()));
        return RecoveryReport{};
    }
    std::unique_ptr<detail::Journal> journal;
    try {
        journal = std::make_unique<detail::Journal>(journal_file, nullptr);
    } catch (const std::runtime_error& e) {
        throw TierError(e.what());
    }
    detail::JournalState state = detail::replay_or_refuse(*journal);
    const std::uint64_t line_size = state.line_size, slots = state.slots;
    const RecoveryReport report =
        detail::write_home_after_crash(config, std::move(state), journal->page_cache());
    // Every line is home: the journal starts again, empty, for the same cache.
    if (report.journal_found)
        if (const int e = journal->reset(line_size, slots); e < 0)
            throw TierError(fmt::format("{}: every dirty line is home, but the journal cannot be "
                                        "emptied: {}; the next open writes them again",
                                        journal_file.string(), std::strerror(-e)));
    return report;
}

} // namespace iosig::tier
