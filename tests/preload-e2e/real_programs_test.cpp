// Unmodified programs under `iosig run` with rules, on the device lab's mounts. For each: the same
// command runs once plainly and once under iosig; every output must be byte-identical (sha256),
// must be a symlink into the job's staging directory on the mount the core selects while the job is
// kept
// (--keep), and must be a regular file with the same bytes after `iosig finalize`.
#include "support.hpp"

#include <functional>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace iosig::e2e {
namespace {

constexpr const char* persist_sig = "sequential persist MTTDL(20y) size-per-IO(64K)";
constexpr const char* temp_sig = "temp random size-per-IO(4K)";

// Deterministic pseudo-random bytes (same in both directories).
void write_data(const fs::path& file, std::size_t bytes) {
    std::string data(bytes, '\0');
    std::uint64_t x = 88172645463325252ULL;
    for (auto& c : data) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        c = static_cast<char>(x);
    }
    write_text(file, data);
}

struct Scenario {
    std::string name;
    std::vector<std::string> command;
    std::vector<std::string> outputs;                // relative to the working directory
    std::function<void(const fs::path&)> setup = {}; // run in both working directories
    bool foreign = true;                             // not one of our own (sanitized) programs
};

class RealPrograms : public ::testing::Test {
protected:
    void SetUp() override {
        if (geteuid() != 0) GTEST_SKIP() << "needs root (the device lab's loop devices and mounts)";
        if (lab_dir().empty() || !fs::exists(lab_config()))
            GTEST_SKIP()
                << "no device lab: IOSIG_LAB_DIR is unset or has no lab.yaml (ctest brings one up)";
    }

    void check(const Scenario& s) {
        const fs::path base = scratch("real-" + s.name);
        const fs::path plain = base / "plain";
        const fs::path under = base / "iosig";
        for (const auto& dir : {plain, under}) {
            fs::create_directories(dir / "out");
            if (s.setup) s.setup(dir);
        }
        const auto env = s.foreign ? foreign_program_env() : std::map<std::string, std::string>{};
        const Result reference = run(s.command, plain, env);
        ASSERT_EQ(reference.status, 0) << "plain run failed: " << reference.err;

        const fs::path rules = base / "rules.yaml";
        write_text(rules, std::string("rules:\n  - match: \"**/out/**\"\n    sig: \"") +
                              persist_sig + "\"\n  - match: \"**/*.tmp\"\n    sig: \"" + temp_sig +
                              "\"\n");
        const std::string job = "e2e-" + s.name + "-" + std::to_string(getpid());
        const fs::path state = base / "state";
        std::vector<std::string> command = {iosig_binary().string(),
                                            "run",
                                            "--config",
                                            lab_config().string(),
                                            "--rules",
                                            rules.string(),
                                            "--keep",
                                            "--job",
                                            job,
                                            "--state",
                                            state.string(),
                                            "--"};
        command.insert(command.end(), s.command.begin(), s.command.end());
        const Result redirected = run(command, under, env);
        ASSERT_EQ(redirected.status, 0) << redirected.err;

        const std::string mount = expected_mount(lab_config(), persist_sig);
        ASSERT_FALSE(mount.empty());
        const std::string staging = mount + "/.iosig-0/" + job + "/";
        for (const auto& output : s.outputs) {
            const fs::path path = under / output;
            EXPECT_TRUE(is_link(path)) << output << " was not redirected\n" << redirected.err;
            EXPECT_EQ(link_target(path).rfind(staging, 0), 0U)
                << output << " -> " << link_target(path) << ", expected under " << staging;
            EXPECT_EQ(sha256(path), sha256(plain / output)) << output;
        }

        const Result report = run(
            {iosig_binary().string(), "report", "--json", "--job", job, "--state", state.string()},
            under);
        ASSERT_EQ(report.status, 0) << report.err;
        const auto document = nlohmann::json::parse(report.out);
        for (const auto& output : s.outputs) {
            const std::string path = (under / output).string();
            bool found = false;
            for (const auto& file : document["files"])
                if (file["path"] == path) {
                    found = true;
                    EXPECT_TRUE(file["redirected"].get<bool>()) << path;
                    EXPECT_EQ(file["signature"], canonical(persist_sig)) << path;
                }
            EXPECT_TRUE(found) << path << " missing from the report:\n" << report.out;
        }

        const Result finalized = run(
            {iosig_binary().string(), "finalize", "--job", job, "--state", state.string()}, under);
        ASSERT_EQ(finalized.status, 0) << finalized.out << finalized.err;
        for (const auto& output : s.outputs) {
            const fs::path path = under / output;
            EXPECT_TRUE(is_plain_file(path)) << output << " is not a regular file after finalize";
            EXPECT_EQ(sha256(path), sha256(plain / output)) << output;
        }
        EXPECT_FALSE(fs::exists(mount + "/.iosig-0/" + job)) << "staging directory left behind";
        const Result again = run(
            {iosig_binary().string(), "finalize", "--job", job, "--state", state.string()}, under);
        EXPECT_EQ(again.status, 0) << "finalize is not idempotent: " << again.out << again.err;
    }
};

void with_source(const fs::path& dir) {
    write_data(dir / "src.bin", 3u << 20);
}

TEST_F(RealPrograms, Cp) {
    check({"cp", {"cp", "src.bin", "out/copy.bin"}, {"out/copy.bin"}, with_source});
}

TEST_F(RealPrograms, DdBuffered) {
    check({"dd",
           {"dd", "if=src.bin", "of=out/dd.bin", "bs=64k", "status=none"},
           {"out/dd.bin"},
           with_source});
}

TEST_F(RealPrograms, DdDirect) {
    check({"dd-direct",
           {"dd", "if=src.bin", "of=out/direct.bin", "bs=1M", "oflag=direct", "status=none"},
           {"out/direct.bin"},
           with_source});
}

TEST_F(RealPrograms, TarExtract) {
    const fs::path archive = scratch("real-tar-source") / "in.tar";
    const fs::path tree = archive.parent_path() / "tree";
    fs::create_directories(tree / "sub" / "deeper");
    write_data(tree / "a.bin", 100000);
    write_data(tree / "sub" / "b.bin", 250000);
    write_text(tree / "sub" / "deeper" / "c.txt", "hello from tar\n");
    ASSERT_EQ(run({"tar", "-cf", archive.string(), "-C", tree.string(), "."}, "/").status, 0);
    check({"tar",
           {"tar", "-xf", archive.string(), "-C", "out"},
           {"out/a.bin", "out/sub/b.bin", "out/sub/deeper/c.txt"}});
}

TEST_F(RealPrograms, Gzip) {
    check({"gzip",
           {"gzip", "-n", "-k", "out/data.bin"},
           {"out/data.bin.gz"},
           [](const fs::path& dir) { write_data(dir / "out" / "data.bin", 1u << 20); }});
}

TEST_F(RealPrograms, Sqlite3DatabaseAndJournal) {
    std::string statements;
    for (int i = 0; i < 20; ++i)
        statements +=
            "insert into t values(" + std::to_string(i) + ", '" + std::string(100 + i, 'x') + "');";
    check({"sqlite3",
           {"sqlite3", "out/db.sqlite",
            "create table t(a integer, b text);" + statements + "select count(*) from t;"},
           {"out/db.sqlite"}});
    // Every transaction created and deleted a rollback journal: none is left, neither beside the
    // database nor in the staging directory (check() saw that directory removed by finalize).
    EXPECT_FALSE(fs::exists(fs::path(IOSIG_BINARY_DIR) /
                            "preload-e2e/real-sqlite3/iosig/out/db.sqlite-journal"));
}

TEST_F(RealPrograms, Python3) {
    check({"python3",
           {"python3", "-c",
            "import os\n"
            "with open('out/text.txt', 'w') as f:\n"
            "    f.write(''.join(f'{i} {i*i}\\n' for i in range(20000)))\n"
            "with open('out/bytes.bin', 'wb') as f:\n"
            "    f.write(bytes(range(256)) * 4000)\n"
            "with open('scratch.tmp', 'w') as f:\n"
            "    f.write('temporary')\n"
            "os.remove('scratch.tmp')\n"},
           {"out/text.txt", "out/bytes.bin"}});
}

TEST_F(RealPrograms, CxxOfstream) {
    check({"ofstream",
           {program("ofstream").string(), "out/lines.txt", "20000"},
           {"out/lines.txt"},
           {},
           false});
}

TEST_F(RealPrograms, EightThreadsCreatingFiles) {
    std::vector<std::string> outputs;
    for (int t = 0; t < 8; ++t)
        for (int n = 0; n < 4; ++n)
            outputs.push_back("out/t" + std::to_string(t) + "-" + std::to_string(n) + ".dat");
    check({"threads", {program("threads").string(), "out", "4", "20000"}, outputs, {}, false});
}

TEST_F(RealPrograms, ForkExecShellPipeline) {
    check({"pipeline",
           {"/bin/sh", "-c",
            "seq 1 200000 | gzip -n > out/nums.gz && gzip -dc out/nums.gz | sort -r > "
            "out/sorted.txt"},
           {"out/nums.gz", "out/sorted.txt"}});
}

} // namespace
} // namespace iosig::e2e
