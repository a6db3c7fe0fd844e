// `iosig finalize` on real files: persist data goes home (rename on one file system, a durable copy
// across two), temp data is deleted, the keep_global policy keeps data where it is, nothing is ever
// lost when home is full, a second run changes nothing, and a crash after any step of the sequence
// is finished by `--recover`.
#include "common/layout.hpp"
#include "scratch.hpp"
#include "tools/finalize.hpp"
#include "tools/move_home.hpp"

#include <fcntl.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <memory>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace iosig::preload;
using namespace iosig::preload::testing;
namespace fs = std::filesystem;

// Skips where a tmpfs cannot be mounted (not root, or a container without CAP_SYS_ADMIN), with the
// reason; fails on any other mount error.
#define REQUIRE_OTHER_FS(name)                                                                     \
    const fs::path* name##_mount = other_fs();                                                     \
    if (name##_mount == nullptr) {                                                                 \
        if (mount_not_permitted()) GTEST_SKIP() << fs_error();                                     \
        FAIL() << fs_error();                                                                      \
    }                                                                                              \
    const fs::path& name = *name##_mount

namespace {

constexpr const char* job = "job-17";
constexpr const char* run = "run-a";

class Finalize : public ::testing::Test {
protected:
    void SetUp() override {
        state = (scratch.path() / "state").string();
        home = scratch.path() / "home";
        fs::create_directories(home);
        local_staging = scratch.path() / "fast";
        fs::create_directories(local_staging);
    }

    // A second file system for the staging side (nullptr when it cannot be mounted: see
    // fs_error()).
    const fs::path* other_fs() {
        if (!tmpfs) tmpfs = std::make_unique<TmpfsMount>(scratch.path() / "tmpfs", "64m");
        return tmpfs->mounted() ? &tmpfs->path() : nullptr;
    }
    std::string fs_error() const { return tmpfs ? tmpfs->error() : std::string(); }
    bool mount_not_permitted() const { return tmpfs && tmpfs->not_permitted(); }

    FinalizeResult finalize(bool recover = false) {
        return finalize_job({state, job, std::nullopt, recover, false});
    }

    std::string journal_text() const { return read_file(job_layout(state, job).journal); }

    ScratchDir scratch;
    std::string state;
    fs::path home, local_staging;
    std::unique_ptr<TmpfsMount> tmpfs;
};

void expect_home(const Planted& p, const std::string& bytes) {
    EXPECT_TRUE(regular_file_at(p.original)) << p.original << " is not a regular file";
    EXPECT_EQ(read_file(p.original), bytes) << p.original << " does not hold the program's bytes";
    EXPECT_FALSE(fs::exists(fs::symlink_status(p.staged))) << "staged copy left at " << p.staged;
}

std::size_t leftovers_beside(const std::string& original) {
    std::size_t n = 0;
    for (const auto& e : fs::directory_iterator(fs::path(original).parent_path()))
        if (e.path().filename().string().find(".iosig-finalize-") != std::string::npos) ++n;
    return n;
}

TEST_F(Finalize, PersistOnTheSameFileSystemIsRenamedHome) {
    const std::string bytes = pseudo_random_bytes(3 << 20, 1);
    journal_run_begin(state, job, run);
    const auto p =
        plant_redirection(state, job, run, local_staging, home / "out.dat", bytes, "persist");
    journal_run_end(state, job, run, 0);
    struct stat before{};
    ASSERT_EQ(stat(p.staged.c_str(), &before), 0);

    const auto result = finalize();

    EXPECT_TRUE(result.ok());
    ASSERT_EQ(result.items.size(), 1u);
    EXPECT_EQ(result.items[0].action, FinalizeAction::renamed_home);
    expect_home(p, bytes);
    struct stat after{};
    ASSERT_EQ(stat(p.original.c_str(), &after), 0);
    EXPECT_EQ(after.st_ino, before.st_ino) << "a rename keeps the inode";
    EXPECT_EQ(after.st_mode & 0777, 0640u);
    EXPECT_FALSE(fs::exists(fs::path(p.staged).parent_path()))
        << "the empty staging directory is removed";
    EXPECT_NE(journal_text().find("\tF\t"), std::string::npos) << "no finalized record";
}

TEST_F(Finalize, PersistAcrossFileSystemsIsCopiedDurablyAndTheStagedCopyRemoved) {
    REQUIRE_OTHER_FS(fast);
    const std::string bytes = pseudo_random_bytes((5 << 20) + 123, 2);
    journal_run_begin(state, job, run);
    const auto p = plant_redirection(state, job, run, fast, home / "ckpt-1.h5", bytes, "persist");
    journal_run_end(state, job, run, 0);
    struct stat staged_stat{}, home_stat{};
    ASSERT_EQ(stat(p.staged.c_str(), &staged_stat), 0);
    ASSERT_EQ(stat(home.c_str(), &home_stat), 0);
    ASSERT_NE(staged_stat.st_dev, home_stat.st_dev) << "the test needs two file systems";

    const auto result = finalize();

    EXPECT_TRUE(result.ok());
    ASSERT_EQ(result.items.size(), 1u);
    EXPECT_EQ(result.items[0].action, FinalizeAction::copied_home);
    expect_home(p, bytes);
    struct stat after{};
    ASSERT_EQ(stat(p.original.c_str(), &after), 0);
    EXPECT_EQ(after.st_dev, home_stat.st_dev);
    EXPECT_EQ(after.st_mode & 0777, 0640u) << "mode kept";
    EXPECT_EQ(after.st_mtim.tv_sec, staged_stat.st_mtim.tv_sec) << "mtime kept";
    EXPECT_EQ(leftovers_beside(p.original), 0u);
}

TEST_F(Finalize, TempDataAndItsSymlinkAreDeleted) {
    REQUIRE_OTHER_FS(fast);
    journal_run_begin(state, job, run);
    const auto p = plant_redirection(state, job, run, fast, home / "scratch.tmp",
                                     pseudo_random_bytes(4096, 3), "temp");
    journal_run_end(state, job, run, 0);

    const auto result = finalize();

    EXPECT_TRUE(result.ok());
    ASSERT_EQ(result.items.size(), 1u);
    EXPECT_EQ(result.items[0].action, FinalizeAction::deleted_temp);
    EXPECT_FALSE(fs::exists(fs::symlink_status(p.original)));
    EXPECT_FALSE(fs::exists(fs::symlink_status(p.staged)));
}

TEST_F(Finalize, KeepGlobalPolicyLeavesPersistDataOnTheGlobalMount) {
    journal_run_begin(state, job, run);
    const std::string bytes = pseudo_random_bytes(10000, 4);
    const auto kept =
        plant_redirection(state, job, run, local_staging, home / "shared.dat", bytes, "persist",
                          /*global=*/true, /*keep_global=*/true);
    const auto moved =
        plant_redirection(state, job, run, local_staging, home / "other.dat", bytes, "persist",
                          /*global=*/true, /*keep_global=*/false);
    journal_run_end(state, job, run, 0);

    const auto result = finalize();

    EXPECT_TRUE(result.ok());
    ASSERT_EQ(result.items.size(), 2u);
    EXPECT_EQ(result.items[0].action, FinalizeAction::kept_global);
    EXPECT_TRUE(symlink_at(kept.original));
    EXPECT_EQ(read_file(kept.original), bytes) << "readable through the symlink";
    EXPECT_EQ(result.items[1].action, FinalizeAction::renamed_home);
    expect_home(moved, bytes);
}

TEST_F(Finalize, IsIdempotent) {
    REQUIRE_OTHER_FS(fast);
    const std::string bytes = pseudo_random_bytes(70000, 5);
    journal_run_begin(state, job, run);
    const auto p = plant_redirection(state, job, run, fast, home / "a.dat", bytes, "persist");
    const auto t = plant_redirection(state, job, run, fast, home / "b.tmp", bytes, "temp");
    journal_run_end(state, job, run, 0);
    ASSERT_TRUE(finalize().ok());
    const std::string journal_after_first = journal_text();

    const auto again = finalize();

    EXPECT_TRUE(again.ok());
    ASSERT_EQ(again.items.size(), 2u);
    EXPECT_EQ(again.count(FinalizeAction::already_done), 2u);
    expect_home(p, bytes);
    EXPECT_FALSE(fs::exists(fs::symlink_status(t.original)));
    EXPECT_EQ(journal_text(), journal_after_first) << "a second finalize records nothing new";
}

TEST_F(Finalize, RefusesARunThatHasNotEndedUnlessRecovering) {
    const std::string bytes = pseudo_random_bytes(1000, 6);
    journal_run_begin(state, job, run);
    const auto p =
        plant_redirection(state, job, run, local_staging, home / "c.dat", bytes, "persist");
    // no run_end: the program is still running or was killed

    const auto refused = finalize();
    EXPECT_FALSE(refused.ok());
    ASSERT_EQ(refused.errors.size(), 1u);
    EXPECT_NE(refused.errors[0].find("--recover"), std::string::npos) << refused.errors[0];
    EXPECT_TRUE(symlink_at(p.original)) << "nothing touched";

    const auto recovered = finalize(/*recover=*/true);
    EXPECT_TRUE(recovered.ok());
    expect_home(p, bytes);
}

TEST_F(Finalize, FollowsRenamesAndDeletionsTheShimJournaled) {
    const std::string bytes = pseudo_random_bytes(2000, 7);
    journal_run_begin(state, job, run);
    const auto renamed =
        plant_redirection(state, job, run, local_staging, home / "part.dat", bytes, "persist");
    fs::rename(renamed.original, home / "final.dat"); // the program renamed its symlink
    journal_record(state, job, run, RecordType::moved,
                   {renamed.staged, (home / "final.dat").string()});
    const auto deleted =
        plant_redirection(state, job, run, local_staging, home / "gone.dat", bytes, "persist");
    fs::remove(deleted.original);
    fs::remove(deleted.staged);
    journal_record(state, job, run, RecordType::deleted, {deleted.staged});
    journal_run_end(state, job, run, 0);

    const auto result = finalize();

    EXPECT_TRUE(result.ok());
    EXPECT_TRUE(regular_file_at(home / "final.dat"));
    EXPECT_EQ(read_file(home / "final.dat"), bytes);
    EXPECT_FALSE(fs::exists(fs::symlink_status(home / "part.dat")));
    EXPECT_FALSE(fs::exists(fs::symlink_status(home / "gone.dat")));
    EXPECT_EQ(result.count(FinalizeAction::nothing_left), 1u);
}

TEST_F(Finalize, HomeTooSmallKeepsTheDataBehindTheSymlink) {
    TmpfsMount small(scratch.path() / "small-home", "1m");
    if (!small.mounted()) {
        if (small.not_permitted()) GTEST_SKIP() << small.error();
        FAIL() << small.error();
    }
    const std::string bytes = pseudo_random_bytes(3 << 20, 8);
    journal_run_begin(state, job, run);
    const auto p = plant_redirection(state, job, run, local_staging, small.path() / "big.dat",
                                     bytes, "persist");
    journal_run_end(state, job, run, 0);

    const auto result = finalize();

    EXPECT_FALSE(result.ok());
    ASSERT_EQ(result.items.size(), 1u);
    EXPECT_EQ(result.items[0].action, FinalizeAction::failed);
    EXPECT_NE(result.items[0].detail.find("No space"), std::string::npos) << result.items[0].detail;
    EXPECT_TRUE(symlink_at(p.original));
    EXPECT_EQ(read_file(p.original), bytes) << "every byte still reachable at the original path";
    EXPECT_EQ(leftovers_beside(p.original), 0u) << "the partial copy is removed";
}

TEST_F(Finalize, LeavesAFileAnotherProcessStillHasOpen) {
    const std::string bytes = pseudo_random_bytes(5000, 9);
    journal_run_begin(state, job, run);
    const auto p =
        plant_redirection(state, job, run, local_staging, home / "busy.dat", bytes, "persist");
    journal_run_end(state, job, run, 0);
    int ready[2], release[2];
    ASSERT_EQ(pipe(ready), 0);
    ASSERT_EQ(pipe(release), 0);
    const pid_t holder = fork();
    ASSERT_GE(holder, 0);
    if (holder == 0) {
        const int fd = open(p.staged.c_str(), O_RDONLY);
        char c = fd >= 0 ? 'y' : 'n';
        (void)!write(ready[1], &c, 1);
        (void)!read(release[0], &c, 1);
        _exit(0);
    }
    char c = 0;
    ASSERT_EQ(read(ready[0], &c, 1), 1);
    ASSERT_EQ(c, 'y');

    const auto busy = finalize();

    char go = 'g';
    ASSERT_EQ(write(release[1], &go, 1), 1);
    waitpid(holder, nullptr, 0);
    for (int fd : {ready[0], ready[1], release[0], release[1]})
        close(fd);
    ASSERT_EQ(busy.items.size(), 1u);
    EXPECT_EQ(busy.items[0].action, FinalizeAction::in_use);
    EXPECT_TRUE(symlink_at(p.original));
    EXPECT_TRUE(finalize().ok()) << "once the process is gone";
    expect_home(p, bytes);
}

// --- a crash after each step ------------------------------------------------------------------

struct CrashCase {
    const char* name;
    FinalizeStep step;
    bool cross_fs;
    bool temp;
};

void PrintTo(const CrashCase& c, std::ostream* os) {
    *os << c.name;
}

FinalizeStep crash_at;
void crash_hook(FinalizeStep step) {
    if (step == crash_at)
        _exit(86); // no destructors, no flushing: as abrupt as kill -9 for our state
}

class FinalizeCrash : public Finalize, public ::testing::WithParamInterface<CrashCase> {};

TEST_P(FinalizeCrash, RecoverFinishesTheJob) {
    const CrashCase& c = GetParam();
    fs::path staging = local_staging;
    if (c.cross_fs) {
        REQUIRE_OTHER_FS(fast);
        staging = fast;
    }
    const std::string bytes = pseudo_random_bytes((2 << 20) + 7, 10);
    journal_run_begin(state, job, run);
    const auto p = plant_redirection(state, job, run, staging, home / (c.temp ? "x.tmp" : "x.dat"),
                                     bytes, c.temp ? "temp" : "persist");
    journal_run_end(state, job, run, 0);

    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        crash_at = c.step;
        set_finalize_step_hook(crash_hook);
        finalize();
        _exit(0); // the step was never reached
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 86) << "finalize did not reach step " << c.name;

    const auto recovered = finalize(/*recover=*/true);

    EXPECT_TRUE(recovered.ok());
    ASSERT_EQ(recovered.items.size(), 1u);
    if (c.temp) {
        EXPECT_FALSE(fs::exists(fs::symlink_status(p.original)));
        EXPECT_FALSE(fs::exists(fs::symlink_status(p.staged)));
    } else {
        expect_home(p, bytes);
        EXPECT_EQ(leftovers_beside(p.original), 0u)
            << "a temporary copy was left beside the original";
    }
    const auto again = finalize(true);
    EXPECT_EQ(again.count(FinalizeAction::already_done), 1u) << "recovered state is final";
    EXPECT_FALSE(fs::exists(fs::path(p.staged).parent_path())) << "staging directory left behind";
}

INSTANTIATE_TEST_SUITE_P(
    EveryStep, FinalizeCrash,
    ::testing::Values(
        CrashCase{"copy_temp_created", FinalizeStep::temp_created, true, false},
        CrashCase{"copy_copied", FinalizeStep::copied, true, false},
        CrashCase{"copy_synced", FinalizeStep::synced, true, false},
        CrashCase{"copy_renamed", FinalizeStep::renamed, true, false},
        CrashCase{"copy_directory_synced", FinalizeStep::directory_synced, true, false},
        CrashCase{"copy_journaled", FinalizeStep::journaled, true, false},
        CrashCase{"copy_staged_deleted", FinalizeStep::staged_deleted, true, false},
        CrashCase{"rename_renamed", FinalizeStep::renamed, false, false},
        CrashCase{"rename_directory_synced", FinalizeStep::directory_synced, false, false},
        CrashCase{"rename_journaled", FinalizeStep::journaled, false, false},
        CrashCase{"temp_symlink_deleted", FinalizeStep::symlink_deleted, true, true},
        CrashCase{"temp_data_deleted", FinalizeStep::data_deleted, true, true},
        CrashCase{"temp_journaled", FinalizeStep::journaled, true, true}),
    [](const ::testing::TestParamInfo<CrashCase>& info) { return std::string(info.param.name); });

} // namespace
