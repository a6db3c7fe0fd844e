// `iosig run`, `iosig finalize`, `iosig report` as a user types them: the built `iosig` and
// libiosig.so, a node whose only mount is /dev/shm (a tmpfs: files under /tmp are redirected
// there), real shell commands. Real-program coverage (cp, dd, tar, sqlite3, ...) is in
// tests/preload-e2e/.
#include "scratch.hpp"

#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <string>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace iosig::preload::testing;
namespace fs = std::filesystem;

namespace {

constexpr long tmpfs_magic = 0x01021994;

// Uninstrumented programs (sh, seq) run with the sanitizer runtime preloaded: no leak reports from
// them.
#ifdef IOSIG_TESTS_SANITIZED
const std::string sanitizer_environment = "ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 ";
#else
const std::string sanitizer_environment;
#endif
const std::string iosig = std::string(IOSIG_BINARY_DIR) + "/bin/iosig";

std::string shell_quoted(const std::string& text) {
    std::string out = "'";
    for (const char c : text)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

struct Outcome {
    int status = -1; // exit status
    std::string out, err;
};

class IosigRun : public ::testing::Test {
protected:
    void SetUp() override {
        struct statfs shm{};
        if (statfs("/dev/shm", &shm) != 0 || static_cast<long>(shm.f_type) != tmpfs_magic)
            GTEST_SKIP() << "/dev/shm is not a tmpfs: no second mount to redirect to";
        work = scratch.path() / "work";
        fs::create_directories(work);
        state = (scratch.path() / "state").string();
        job = "run-test-" + std::to_string(getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name();
        write_file(scratch.path() / "node.yaml",
                   "node: {name: t}\n"
                   "devices:\n  ram:\n    structure: simple\n    media: ram\n    capacity: 1G\n"
                   "    performance: {seq_read_bw: 6G/s, seq_write_bw: 4G/s, op_latency: 2us}\n"
                   "    reliability: {mttf: 1y, ber: 1e-12, mttr: 10min}\n"
                   "mounts:\n  - path: /dev/shm\n    device: ram\n    fs_type: tmpfs\n"
                   "    volatile: false\n    capacity: 1G\n");
        write_file(scratch.path() / "rules.yaml",
                   "rules:\n  - match: \"" + work.string() +
                       "/*.dat\"\n    sig: \"sequential persist size-per-IO(64K) "
                       "totalsize(16M)\"\n");
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all("/dev/shm/.iosig-" + std::to_string(geteuid()) + "/" + job, ec);
    }

    // iosig ARGS, in `work`, output captured.
    Outcome iosig_cmd(const std::string& args, const std::string& environment = "") {
        const std::string out = (scratch.path() / "stdout").string(),
                          err = (scratch.path() / "stderr").string();
        const std::string line = "cd " + shell_quoted(work.string()) +
                                 " && env -u IOSIG_JOB -u SLURM_JOB_ID " + sanitizer_environment +
                                 environment + " " + shell_quoted(iosig) + " " + args + " >" + out +
                                 " 2>" + err;
        const int status = std::system(line.c_str());
        Outcome o;
        o.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        o.out = read_file(out);
        o.err = read_file(err);
        return o;
    }

    std::string common() const {
        return "--config " + shell_quoted((scratch.path() / "node.yaml").string()) + " --rules " +
               shell_quoted((scratch.path() / "rules.yaml").string()) + " --state " +
               shell_quoted(state) + " --job " + job;
    }

    ScratchDir scratch;
    fs::path work;
    std::string state, job;
};

TEST_F(IosigRun, PropagatesTheExitStatusAndDeathBySignal) {
    EXPECT_EQ(iosig_cmd("run " + common() + " -- sh -c 'exit 7'").status, 7);
    EXPECT_EQ(iosig_cmd("run " + common() + " -- sh -c 'kill -TERM $$'").status, 128 + SIGTERM);
    EXPECT_EQ(iosig_cmd("run " + common() + " -- /nonexistent/program").status, 127);
}

TEST_F(IosigRun, SetsTheEnvironmentAndPrependsTheShimToLdPreload) {
    const auto o =
        iosig_cmd("run " + common() + " -- sh -c 'env > env.txt'", "LD_PRELOAD=libm.so.6");
    ASSERT_EQ(o.status, 0) << o.err;
    const std::string env = read_file(work / "env.txt");
    // In a sanitizer build the sanitizer runtime comes first (docs/preload.md, "Sanitizer builds").
    const auto line = env.find("LD_PRELOAD=");
    ASSERT_NE(line, std::string::npos) << env;
    const std::string preload = env.substr(line, env.find('\n', line) - line);
    const std::string shim_then_existing =
        std::string(IOSIG_BINARY_DIR) + "/lib/libiosig.so:libm.so.6";
    EXPECT_EQ(preload.substr(preload.size() - shim_then_existing.size()), shim_then_existing)
        << preload;
    EXPECT_NE(env.find("IOSIG_JOB=" + job + "\n"), std::string::npos) << env;
    EXPECT_NE(env.find("IOSIG_STATE=" + state + "\n"), std::string::npos) << env;
    EXPECT_NE(env.find("IOSIG_RULES=" + (scratch.path() / "rules.yaml").string() + "\n"),
              std::string::npos);
    EXPECT_NE(env.find("IOSIG_CONFIG=" + (scratch.path() / "node.yaml").string() + "\n"),
              std::string::npos);
    EXPECT_NE(env.find("IOSIG_RUN=run-"), std::string::npos);
}

TEST_F(IosigRun, RedirectsWhileRunningThenFinalizesHome) {
    const auto o = iosig_cmd("run " + common() + " --report " +
                             shell_quoted((scratch.path() / "r.json").string()) +
                             " -- sh -c 'seq 1 200000 > out.dat; readlink out.dat > link.txt'");
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_EQ(read_file(work / "link.txt").rfind("/dev/shm/.iosig-", 0), 0u)
        << "out.dat was not a symlink into /dev/shm while the command ran: "
        << read_file(work / "link.txt");
    EXPECT_TRUE(regular_file_at(work / "out.dat")) << "not finalized";
    std::string expected;
    for (int i = 1; i <= 200000; ++i)
        expected += std::to_string(i) + "\n";
    EXPECT_EQ(read_file(work / "out.dat"), expected);
    EXPECT_NE(o.err.find("1 redirected: 1 to /dev/shm"), std::string::npos) << o.err;
    EXPECT_NE(o.err.find("finalize: 1 home"), std::string::npos) << o.err;

    const auto report = nlohmann::json::parse(read_file(scratch.path() / "r.json"));
    ASSERT_EQ(report["files"].size(), 1u) << report.dump(2);
    EXPECT_EQ(report["files"][0]["path"], (work / "out.dat").string());
    EXPECT_EQ(report["files"][0]["finalized"], "home");
    EXPECT_EQ(report["files"][0]["total_bytes"], expected.size());

    const auto table =
        iosig_cmd("report " + shell_quoted((scratch.path() / "r.json").string()) + " --suggest");
    EXPECT_EQ(table.status, 0) << table.err;
    EXPECT_NE(table.out.find("redirected to /dev/shm"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("#pragma sig sequential persist"), std::string::npos) << table.out;
}

TEST_F(IosigRun, KeepLeavesTheSymlinkUntilFinalize) {
    ASSERT_EQ(iosig_cmd("run --keep " + common() + " -- sh -c 'seq 1 1000 > kept.dat'").status, 0);
    EXPECT_TRUE(symlink_at(work / "kept.dat"));
    const auto first = iosig_cmd("finalize --state " + shell_quoted(state) + " --job " + job);
    EXPECT_EQ(first.status, 0) << first.out << first.err;
    EXPECT_TRUE(regular_file_at(work / "kept.dat"));
    const auto second = iosig_cmd("finalize --state " + shell_quoted(state) + " --job " + job);
    EXPECT_EQ(second.status, 0);
    EXPECT_NE(second.out.find("already finalized"), std::string::npos) << second.out;
}

TEST_F(IosigRun, ABadRulesFileIsReportedAndTheCommandRunsWithoutIosig) {
    write_file(scratch.path() / "rules.yaml",
               "rules:\n  - match: \"*.dat\"\n    sig: \"sequential bogus(3)\"\n");
    const auto o = iosig_cmd("run " + common() + " -- sh -c 'echo hi > plain.dat; exit 3'");
    EXPECT_EQ(o.status, 3);
    EXPECT_NE(o.err.find("rules.yaml:3:"), std::string::npos) << "no file:line:col: " << o.err;
    EXPECT_TRUE(regular_file_at(work / "plain.dat"));
    EXPECT_EQ(read_file(work / "plain.dat"), "hi\n");
}

TEST_F(IosigRun, RecoverFinishesARunWhoseIosigWasKilled) {
    const std::string line =
        "cd " + shell_quoted(work.string()) + " && exec " + shell_quoted(iosig) + " run " +
        common() +
        " -- sh -c 'seq 1 100000 > crash.dat; sync; touch ready; sleep 60' >/dev/null 2>&1";
    const pid_t runner = fork();
    ASSERT_GE(runner, 0);
    if (runner == 0) {
        setpgid(0, 0);
        execl("/bin/sh", "sh", "-c", line.c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
    setpgid(runner, runner);
    for (int i = 0; i < 600 && !fs::exists(work / "ready"); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_TRUE(fs::exists(work / "ready")) << "the command did not start";
    kill(-runner, SIGKILL); // iosig run and its command: nobody finalizes, no run-end record
    waitpid(runner, nullptr, 0);
    ASSERT_TRUE(symlink_at(work / "crash.dat"));

    const auto refused = iosig_cmd("finalize --state " + shell_quoted(state) + " --job " + job);
    EXPECT_EQ(refused.status, 1);
    EXPECT_NE(refused.err.find("--recover"), std::string::npos) << refused.err;
    EXPECT_TRUE(symlink_at(work / "crash.dat"));

    const auto recovered =
        iosig_cmd("finalize --recover --state " + shell_quoted(state) + " --job " + job);
    EXPECT_EQ(recovered.status, 0) << recovered.out << recovered.err;
    EXPECT_TRUE(regular_file_at(work / "crash.dat"));
    std::string expected;
    for (int i = 1; i <= 100000; ++i)
        expected += std::to_string(i) + "\n";
    EXPECT_EQ(read_file(work / "crash.dat"), expected);
}

} // namespace
