// Failure behaviour: iosig falls back to what the program would have done without it, never loses a
// byte, and never follows a symlink planted in its staging path. These tests make their own small
// tmpfs mounts (no device lab needed) and a one-mount node configuration.
#include "support.hpp"

#include <csignal>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace iosig::e2e {
namespace {

class Faults : public ::testing::Test {
protected:
    void SetUp() override {
        if (geteuid() != 0) GTEST_SKIP() << "needs root (mounts a tmpfs)";
        base_ = scratch(::testing::UnitTest::GetInstance()->current_test_info()->name());
        work_ = base_ / "work";
        fs::create_directories(work_);
        job_ = std::string("faults-") +
               ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
               std::to_string(getpid());
    }

    // A tmpfs of `size` as the node's only mount, rules sending *.dat there with `sig`.
    void node(const std::string& size, const std::string& sig, const std::string& options = "",
              bool read_only = false) {
        tmpfs_ = std::make_unique<Tmpfs>(base_ / "mnt", size, read_only);
        ASSERT_TRUE(tmpfs_->mounted()) << "cannot mount a tmpfs";
        write_single_mount_node(base_ / "node.yaml", tmpfs_->path(), "1G", false);
        write_text(base_ / "rules.yaml", (options.empty() ? "" : "options: {" + options + "}\n") +
                                             "rules:\n  - match: \"**/*.dat\"\n    sig: \"" + sig +
                                             "\"\n");
    }

    std::vector<std::string> iosig_run(std::vector<std::string> command, bool keep = true) {
        std::vector<std::string> argv = {iosig_binary().string(),
                                         "run",
                                         "--config",
                                         (base_ / "node.yaml").string(),
                                         "--rules",
                                         (base_ / "rules.yaml").string(),
                                         "--job",
                                         job_,
                                         "--state",
                                         (base_ / "state").string()};
        if (keep) argv.push_back("--keep");
        argv.push_back("--");
        argv.insert(argv.end(), command.begin(), command.end());
        return argv;
    }

    std::string staging() const { return tmpfs_->path().string() + "/.iosig-0/" + job_; }
    std::map<std::string, std::string> log_env() const {
        return {{"IOSIG_LOG", (base_ / "iosig.log").string()}};
    }

    fs::path base_, work_;
    std::string job_;
    std::unique_ptr<Tmpfs> tmpfs_;
};

std::string expected_bytes(std::size_t n) {
    std::string data(n, '\0');
    for (std::size_t i = 0; i < n; ++i)
        data[i] = static_cast<char>((i * 131 + 7) % 251);
    return data;
}

TEST_F(Faults, DestinationTooSmallFallsBackAtOpen) {
    node("1M", "temp sequential"); // default min_free is 64 MiB: a 1 MiB tmpfs never qualifies
    const Result r = run(iosig_run({program("write_files").string(), "open", "big.dat", "4194304"}),
                         work_, log_env());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(is_plain_file(work_ / "big.dat"));
    EXPECT_EQ(read_text(work_ / "big.dat"), expected_bytes(4u << 20));
    // The selector never considers a mount without the free space the signature needs, and says so.
    EXPECT_NE(read_text(base_ / "iosig.log").find("free (needs 64 MiB)"), std::string::npos)
        << read_text(base_ / "iosig.log");
}

TEST_F(Faults, DestinationFillingUpMidFileMovesTheFileHome) {
    node("1M", "temp sequential", "min_free: 4K"); // chosen, then full after 1 MiB of a 4 MiB file
    const Result r =
        run(iosig_run({program("write_files").string(), "open", "big.dat", "4194304", "65536"}),
            work_, log_env());
    ASSERT_EQ(r.status, 0) << r.err << read_text(base_ / "iosig.log");
    EXPECT_TRUE(is_plain_file(work_ / "big.dat")) << "not moved home";
    EXPECT_EQ(read_text(work_ / "big.dat"), expected_bytes(4u << 20)) << "bytes lost";
    EXPECT_NE(read_text(base_ / "iosig.log").find("moved home"), std::string::npos)
        << read_text(base_ / "iosig.log");
    // Nothing of it is left on the full mount, and finalize has nothing to do.
    const Result f = run(
        {iosig_binary().string(), "finalize", "--job", job_, "--state", (base_ / "state").string()},
        work_);
    EXPECT_EQ(f.status, 0) << f.out << f.err;
    EXPECT_EQ(read_text(work_ / "big.dat"), expected_bytes(4u << 20));
}

TEST_F(Faults, StdioStreamOnFullDestinationKeepsEveryWrittenByte) {
    // A stdio stream cannot be moved under the program's feet (its buffer is inside glibc): the
    // program sees ENOSPC like on a full disk, and every byte that reached the file comes home at
    // finalize.
    node("1M", "sequential persist", "min_free: 4K");
    const Result r =
        run(iosig_run({program("write_files").string(), "fopen", "big.dat", "4194304", "65536"}),
            work_, log_env());
    EXPECT_NE(r.status, 0) << "the program should have seen ENOSPC";
    ASSERT_TRUE(is_link(work_ / "big.dat"));
    const std::string staged = read_text(work_ / "big.dat");
    EXPECT_GT(staged.size(), 0U);
    EXPECT_EQ(staged, expected_bytes(4u << 20).substr(0, staged.size()));
    const Result f = run(
        {iosig_binary().string(), "finalize", "--job", job_, "--state", (base_ / "state").string()},
        work_);
    EXPECT_EQ(f.status, 0) << f.out << f.err;
    EXPECT_TRUE(is_plain_file(work_ / "big.dat"));
    EXPECT_EQ(read_text(work_ / "big.dat"), staged);
}

TEST_F(Faults, UnwritableStagingFallsBack) {
    node("64M", "temp sequential", "min_free: 4K", /*read_only=*/true);
    const Result r = run(iosig_run({program("write_files").string(), "open", "a.dat", "100000"}),
                         work_, log_env());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(is_plain_file(work_ / "a.dat"));
    EXPECT_EQ(read_text(work_ / "a.dat"), expected_bytes(100000));
    const std::string log = read_text(base_ / "iosig.log");
    EXPECT_NE(log.find("not redirecting"), std::string::npos) << log;
    // One warning per cause, although the job created more than one file.
    const Result second = run(
        iosig_run({program("write_files").string(), "fopen", "b.dat", "1000"}), work_, log_env());
    ASSERT_EQ(second.status, 0);
    EXPECT_EQ(read_text(base_ / "iosig.log"), log) << "the warning was repeated";
}

TEST_F(Faults, StagingDirectoryOfAnotherUserIsRefused) {
    node("64M", "temp sequential", "min_free: 4K");
    fs::create_directories(tmpfs_->path() / ".iosig-0");
    ASSERT_EQ(chown((tmpfs_->path() / ".iosig-0").c_str(), 4242, 4242), 0);
    const Result r = run(iosig_run({program("write_files").string(), "open", "a.dat", "5000"}),
                         work_, log_env());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(is_plain_file(work_ / "a.dat"));
    EXPECT_TRUE(fs::is_empty(tmpfs_->path() / ".iosig-0"));
    EXPECT_NE(read_text(base_ / "iosig.log").find("another user"), std::string::npos)
        << read_text(base_ / "iosig.log");
}

TEST_F(Faults, PlantedSymlinkAtStagingPathIsNotFollowed) {
    node("64M", "temp sequential", "min_free: 4K");
    const fs::path attacker = base_ / "attacker";
    fs::create_directories(attacker);
    fs::create_directory_symlink(attacker, tmpfs_->path() / ".iosig-0");
    const Result r = run(iosig_run({program("write_files").string(), "open", "a.dat", "5000"}),
                         work_, log_env());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(fs::is_empty(attacker)) << "the planted symlink was followed";
    EXPECT_TRUE(is_plain_file(work_ / "a.dat"));
    EXPECT_EQ(read_text(work_ / "a.dat"), expected_bytes(5000));
    EXPECT_NE(read_text(base_ / "iosig.log").find("symlink"), std::string::npos)
        << read_text(base_ / "iosig.log");

    // One level down: the user's directory is genuine, the job's is a planted symlink.
    fs::remove(tmpfs_->path() / ".iosig-0");
    fs::create_directory(tmpfs_->path() / ".iosig-0");
    fs::permissions(tmpfs_->path() / ".iosig-0", fs::perms::owner_all);
    fs::create_directory_symlink(attacker, staging());
    const Result second =
        run(iosig_run({program("write_files").string(), "open", "b.dat", "5000"}), work_);
    ASSERT_EQ(second.status, 0) << second.err;
    EXPECT_TRUE(fs::is_empty(attacker)) << "the planted job symlink was followed";
    EXPECT_TRUE(is_plain_file(work_ / "b.dat"));
}

TEST_F(Faults, KillNineThenRecoverRestoresEveryFsyncedByte) {
    node("256M", "sequential persist", "min_free: 4K");
    const fs::path progress = base_ / "progress";
    auto argv = iosig_run(
        {program("crash_writer").string(), "log.dat", progress.string(), "100000"}, false);
    const pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0); // its own group: the kill takes iosig run and the writer down together
        if (chdir(work_.c_str()) != 0) _exit(126);
        std::vector<char*> args;
        for (auto& a : argv)
            args.push_back(a.data());
        args.push_back(nullptr);
        execv(args[0], args.data());
        _exit(127);
    }
    setpgid(pid, pid);
    long written = 0;
    for (int i = 0; i < 1000 && written < 40; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        written = std::atol(read_text(progress).c_str());
    }
    ASSERT_GE(written, 40) << "the writer did not make progress";
    ASSERT_EQ(kill(-pid, SIGKILL), 0);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status));
    // The writer is iosig run's child: it may still be closing its files after the leader is
    // reaped, and recovery rightly skips a file a live process holds.
    ASSERT_TRUE(wait_until_group_has_exited(pid, 10'000)) << "the killed writer did not exit";
    written = std::atol(read_text(progress).c_str()); // the count after its last completed fsync
    ASSERT_TRUE(is_link(work_ / "log.dat")) << "the file was not redirected";

    const std::vector<std::string> finalize = {
        iosig_binary().string(), "finalize", "--job", job_, "--state", (base_ / "state").string()};
    const Result refused = run(finalize, work_);
    EXPECT_NE(refused.status, 0)
        << "finalize must not touch a run that never ended without --recover";
    EXPECT_NE(refused.err.find("--recover"), std::string::npos) << refused.err;

    auto recover = finalize;
    recover.push_back("--recover");
    const Result recovered = run(recover, work_);
    ASSERT_EQ(recovered.status, 0) << recovered.out << recovered.err;
    ASSERT_TRUE(is_plain_file(work_ / "log.dat"));
    const std::string data = read_text(work_ / "log.dat");
    ASSERT_GE(data.size(), static_cast<std::size_t>(written) * 65536) << "fsync'd bytes lost";
    for (long k = 0; k < written; ++k) {
        const std::string_view block =
            std::string_view(data).substr(static_cast<std::size_t>(k) * 65536, 65536);
        ASSERT_EQ(block.find_first_not_of(static_cast<char>(k % 251)), std::string_view::npos)
            << "block " << k;
    }
}

TEST_F(Faults, BadRulesFileRunsTheProgramUnchangedWithOneMessage) {
    node("64M", "temp sequential", "min_free: 4K");
    write_text(base_ / "rules.yaml", "rules:\n  - match: \"*.dat\"\n    sig: \"tmep random\"\n");
    const Result r =
        run(iosig_run({program("write_files").string(), "open", "a.dat", "5000"}), work_);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(is_plain_file(work_ / "a.dat"));
    EXPECT_NE(r.err.find("rules.yaml:3:11"), std::string::npos) << r.err;

    // The shim itself, given the bad file directly, says so once and changes nothing.
    auto env = foreign_program_env(); // /bin/sh runs under the shim too
    env.insert({{"LD_PRELOAD", IOSIG_E2E_PRELOAD},
                {"IOSIG_RULES", (base_ / "rules.yaml").string()},
                {"IOSIG_CONFIG", (base_ / "node.yaml").string()},
                {"IOSIG_STATE", (base_ / "state2").string()},
                {"IOSIG_JOB", job_ + "-direct"}});
    const Result direct = shell(program("write_files").string() + " open b.dat 5000 && " +
                                    program("write_files").string() + " open c.dat 5000",
                                work_, env);
    ASSERT_EQ(direct.status, 0) << direct.err;
    EXPECT_TRUE(is_plain_file(work_ / "b.dat"));
    EXPECT_TRUE(is_plain_file(work_ / "c.dat"));
    std::size_t messages = 0;
    for (std::size_t at = 0; (at = direct.err.find("iosig is disabled", at)) != std::string::npos;
         ++at)
        ++messages;
    EXPECT_EQ(messages, 1U) << direct.err;
}

} // namespace
} // namespace iosig::e2e
