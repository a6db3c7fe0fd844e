#include "finalize.hpp"

#include "common/layout.hpp"
#include "common/paths.hpp"
#include "move_home.hpp"
#include "open_files.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace iosig::preload {
namespace {

namespace fs = std::filesystem;

bool is_symlink_to(const std::string& path, const std::string& target) {
    struct stat st{};
    if (lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return false;
    char buffer[PATH_MAX];
    const ssize_t n = readlink(path.c_str(), buffer, sizeof buffer - 1);
    return n > 0 && std::string(buffer, static_cast<std::size_t>(n)) == target;
}

bool exists(const std::string& path) {
    struct stat st{};
    return lstat(path.c_str(), &st) == 0;
}

bool is_regular(const std::string& path) {
    struct stat st{};
    return lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

class Finalizer {
public:
    Finalizer(const FinalizeOptions& options, FinalizeResult& result)
        : options_(options), result_(result), layout_(job_layout(options.state_dir, options.job)) {}

    void run() {
        if (!fs::exists(layout_.journal)) {
            result_.errors.push_back("job " + options_.job + ": no journal at " + layout_.journal +
                                     " (nothing was redirected, or another state directory)");
            return;
        }
        JobJournal journal = read_job_journal(layout_.journal);
        result_.damaged_lines = journal.damaged_lines;
        if (!options_.recover) {
            for (const auto& run : journal.runs) {
                if (run.end_ns != 0 || (options_.run && run.run != *options_.run)) continue;
                result_.errors.push_back(
                    "job " + options_.job + ": run " + run.run +
                    " has not ended (still running, or it crashed): after making "
                    "sure it is not running, use --recover");
                return;
            }
        }
        std::vector<std::string> prefixes;
        std::set<std::string> staging_dirs;
        for (const auto& r : journal.redirections) {
            const std::string dir(parent_of(r.staged));
            staging_dirs.insert(dir);
        }
        prefixes.assign(staging_dirs.begin(), staging_dirs.end());
        in_use_ = options_.force ? std::map<std::string, long>{} : files_in_use(prefixes);

        std::set<std::string> known;
        for (auto& r : journal.redirections) {
            known.insert(r.staged);
            if (options_.run && r.run != *options_.run) continue;
            result_.items.push_back(finalize_one(r));
        }
        for (const auto& dir : staging_dirs)
            tidy(dir, known);
    }

private:
    FinalizeItem finalize_one(const Redirection& r) {
        FinalizeItem item{r.staged, r.current, FinalizeAction::already_done, {}};
        if (r.finalized) {
            item.detail = *r.finalized;
            // A crash between the durable `home` record and deleting the staged copy left that
            // copy.
            if (*r.finalized == "home" && is_regular(r.current) && is_regular(r.staged)) {
                unlink(r.staged.c_str());
                item.detail += "; removed the staged copy an interrupted finalize left";
            }
            return item;
        }
        if (r.abandoned || r.deleted || r.migrated) {
            if (is_regular(r.staged)) unlink(r.staged.c_str());
            item.action = FinalizeAction::nothing_left;
            item.detail = r.abandoned ? "never used"
                          : r.deleted ? "deleted by the program"
                                      : "moved home by the shim when the destination filled up";
            record(r, "gone");
            return item;
        }
        if (auto it = in_use_.find(r.staged); it != in_use_.end()) {
            item.action = FinalizeAction::in_use;
            item.detail = "still open or mapped by process " + std::to_string(it->second);
            return item;
        }
        const bool temp = r.persistence == persistence_temp;
        if (is_symlink_to(r.current, r.staged)) {
            if (temp) {
                unlink(r.current.c_str());
                finalize_step(FinalizeStep::symlink_deleted);
                unlink(r.staged.c_str());
                finalize_step(FinalizeStep::data_deleted);
                fsync_directory(std::string(parent_of(r.current)));
                item.action = FinalizeAction::deleted_temp;
                item.detail = "temp: symlink and data deleted";
                if (record(r, "deleted")) finalize_step(FinalizeStep::journaled);
                return item;
            }
            if (r.global && r.keep_global) {
                item.action = FinalizeAction::kept_global;
                item.detail =
                    "persist data on the global mount " + r.mount + " kept there (keep_global)";
                record(r, "kept");
                return item;
            }
            remove_stale_temporaries(r.current);
            const MoveResult moved =
                move_home(r.staged, r.current, [&] { return record(r, "home"); });
            if (!moved.ok) {
                item.action = FinalizeAction::failed;
                item.detail =
                    moved.error + "; the data stays in " + r.staged + " behind the symlink";
                return item;
            }
            item.action = moved.copied ? FinalizeAction::copied_home : FinalizeAction::renamed_home;
            item.detail = moved.copied ? "copied home from " + r.mount : "renamed home";
            return item;
        }
        // The original path is not (or no longer) our symlink.
        remove_stale_temporaries(r.current);
        if (!exists(r.staged)) {
            if (is_regular(r.current) && !temp) {
                // An interrupted finalize: renamed home (same file system), not yet journaled.
                item.action = FinalizeAction::renamed_home;
                item.detail = "finished an interrupted finalize";
                record(r, "home");
            } else if (temp && !exists(r.current)) {
                item.action = FinalizeAction::deleted_temp;
                item.detail = "finished an interrupted finalize";
                record(r, "deleted");
            } else {
                item.action = FinalizeAction::nothing_left;
                item.detail = "no data left in staging (removed outside iosig's view)";
                record(r, "gone");
            }
            return item;
        }
        if (is_regular(r.current) && same_contents(r.current, r.staged)) {
            // An interrupted finalize: the copy is home, the staged copy was not yet deleted.
            unlink(r.staged.c_str());
            item.action = FinalizeAction::copied_home;
            item.detail = "finished an interrupted finalize";
            record(r, "home");
            return item;
        }
        if (temp) {
            unlink(r.staged.c_str());
            item.action = FinalizeAction::deleted_temp;
            item.detail = "temp data deleted (its symlink was already gone)";
            record(r, "deleted");
            return item;
        }
        item.action = FinalizeAction::orphan_kept;
        item.detail = "the symlink at " + r.current +
                      " was removed or replaced outside iosig's view: the data is kept at " +
                      r.staged;
        return item;
    }

    bool record(const Redirection& r, const std::string& outcome) {
        return append_journal_record(layout_.journal, RecordType::finalized,
                                     options_.run.value_or(""), {r.staged, outcome});
    }

    // Removes the job's staging directory when empty; lists what it still holds otherwise.
    void tidy(const std::string& dir, const std::set<std::string>& known) {
        std::error_code ec;
        std::vector<std::string> unknown;
        bool empty = true;
        for (const auto& entry : fs::directory_iterator(dir, ec)) {
            empty = false;
            if (!known.count(entry.path().string())) unknown.push_back(entry.path().string());
        }
        if (ec) return;
        if (empty) {
            // Only the job's directory: the user's `.iosig-<uid>` stays, since removing it would
            // race with another job of the same user creating its staging directory in it right
            // now.
            rmdir(dir.c_str());
            return;
        }
        for (auto& path : unknown)
            result_.left_in_staging.push_back(std::move(path));
    }

    const FinalizeOptions& options_;
    FinalizeResult& result_;
    JobLayout layout_;
    std::map<std::string, long> in_use_;
};

} // namespace

bool FinalizeResult::ok() const {
    return errors.empty() && count(FinalizeAction::failed) == 0 &&
           count(FinalizeAction::in_use) == 0 && count(FinalizeAction::orphan_kept) == 0;
}

std::size_t FinalizeResult::count(FinalizeAction action) const {
    return static_cast<std::size_t>(std::count_if(
        items.begin(), items.end(), [&](const FinalizeItem& i) { return i.action == action; }));
}

FinalizeResult finalize_job(const FinalizeOptions& options) {
    FinalizeResult result;
    try {
        Finalizer(options, result).run();
    } catch (const std::exception& e) {
        result.errors.push_back(std::string("finalize failed: ") + e.what());
    }
    return result;
}

std::vector<std::string> unfinished_jobs(const std::string& state_dir) {
    std::vector<std::string> jobs;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(fs::path(state_dir) / "jobs", ec)) {
        const JobJournal journal = read_job_journal(entry.path() / "journal");
        const bool unfinished =
            std::any_of(journal.redirections.begin(), journal.redirections.end(),
                        [](const Redirection& r) { return !r.finalized; });
        if (unfinished) jobs.push_back(entry.path().filename().string());
    }
    std::sort(jobs.begin(), jobs.end());
    return jobs;
}

std::string to_string(FinalizeAction action) {
    switch (action) {
    case FinalizeAction::renamed_home:
        return "home (renamed)";
    case FinalizeAction::copied_home:
        return "home (copied)";
    case FinalizeAction::deleted_temp:
        return "deleted (temp)";
    case FinalizeAction::kept_global:
        return "kept on the global mount";
    case FinalizeAction::already_done:
        return "already finalized";
    case FinalizeAction::nothing_left:
        return "nothing to do";
    case FinalizeAction::in_use:
        return "skipped: in use";
    case FinalizeAction::orphan_kept:
        return "kept in staging";
    case FinalizeAction::failed:
        return "FAILED";
    }
    return "?";
}

} // namespace iosig::preload
