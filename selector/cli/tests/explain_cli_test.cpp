// `iosig explain` and `iosig config` as a user runs them: the built binary, real files, exit
// statuses.
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

namespace fs = std::filesystem;

const std::string paper_node = IOSIG_SOURCE_DIR "/configs/paper-node.yaml";

struct Result {
    int status = -1;
    std::string out, err;
};

std::string quote(const std::string& arg) {
    std::string q = "'";
    for (char c : arg)
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

std::string slurp(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

class Scratch {
public:
    Scratch() {
        static int count = 0;
        dir_ = fs::temp_directory_path() /
               ("iosig-cli-test-" + std::to_string(getpid()) + "-" + std::to_string(count++));
        fs::create_directories(dir_);
    }
    ~Scratch() { fs::remove_all(dir_); }
    const fs::path& dir() const { return dir_; }
    fs::path write(const std::string& name, const std::string& text) const {
        std::ofstream(dir_ / name) << text;
        return dir_ / name;
    }

private:
    fs::path dir_;
};

Result run(const std::vector<std::string>& args, const std::string& env = "",
           const std::string& executable = IOSIG_EXECUTABLE) {
    static Scratch io;
    std::string command = env + " " + quote(executable);
    for (const std::string& a : args)
        command += " " + quote(a);
    command +=
        " >" + quote((io.dir() / "out").string()) + " 2>" + quote((io.dir() / "err").string());
    const int raw = std::system(command.c_str());
    Result r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = slurp(io.dir() / "out");
    r.err = slurp(io.dir() / "err");
    return r;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST(Explain, PrintsEveryMountAndTheChoice) {
    const Result r = run({"explain", "--config", paper_node, "--sig",
                          "random persist size-per-IO(512K) totalsize(1G)"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "choice: /mnt/nvram")) << r.out;
    for (const char* mount : {"/mnt/ramdisk", "/mnt/nvram", "/mnt/raid1", "/mnt/hdd", "/mnt/nfs"})
        EXPECT_TRUE(contains(r.out, mount)) << mount << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, "needs persist; tmpfs mount is volatile")) << r.out;
    EXPECT_TRUE(contains(r.out, "* /mnt/nvram")) << r.out; // the chosen row is marked
    EXPECT_TRUE(contains(r.out, "MTTDL (1 GiB)")) << r.out;
}

TEST(Explain, JsonHasTheChoiceAndEveryCandidate) {
    const Result r = run(
        {"explain", "--config", paper_node, "--sig", "random MTTDL(20y) totalsize(1G)", "--json"});
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["choice"]["mount"], "/mnt/raid1");
    EXPECT_TRUE(j["choice"].contains("label"));
    ASSERT_EQ(j["candidates"].size(), 5u);
    for (const auto& c : j["candidates"]) {
        ASSERT_TRUE(c["mount"].is_string());
        ASSERT_TRUE(c["eligible"].is_boolean());
        ASSERT_TRUE(c["reasons"].is_array());
        ASSERT_TRUE(c["throughput_bytes_per_s"].is_number());
        EXPECT_GT(c["throughput_bytes_per_s"].get<double>(), 0);
        EXPECT_EQ(c["eligible"].get<bool>(), c["reasons"].empty()) << c.dump();
        if (c["mount"] == "/mnt/hdd") {
            ASSERT_EQ(c["reasons"].size(), 1u);
            EXPECT_TRUE(
                contains(c["reasons"][0].get<std::string>(), "needs MTTDL >= 20 y for 1 GiB"))
                << c.dump();
            EXPECT_EQ(c["reason_codes"][0], "mttdl_too_low");
        }
    }
    EXPECT_EQ(j["size_per_io"], 1 << 20); // the default
    EXPECT_EQ(j["size_per_io_defaulted"], true);
}

TEST(Explain, AcceptsALeadingSigKeyword) {
    const Result r = run({"explain", "-c", paper_node, "-s", "sig global random", "--json"});
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["choice"]["mount"], "/mnt/nfs");
    EXPECT_EQ(j["choice"]["label"], "shared");
}

TEST(Explain, NoQualifyingMountExitsThreeSayingWhy) {
    const Result r =
        run({"explain", "--config", paper_node, "--sig", "global persist totalsize(1P)"});
    EXPECT_EQ(r.status, 3) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "choice: none")) << r.out;
    EXPECT_TRUE(contains(r.out, "needs 1 PiB (totalsize), has 20 TiB free")) << r.out;
    EXPECT_TRUE(contains(r.err, "no mount of node 'paper-node' satisfies")) << r.err;
    const Result j =
        run({"explain", "--config", paper_node, "--sig", "global persist totalsize(1P)", "--json"});
    EXPECT_EQ(j.status, 3);
    EXPECT_TRUE(nlohmann::json::parse(j.out)["choice"].is_null());
}

TEST(Explain, AvailabilityUsesTheJobLifetimeFromTheEnvironment) {
    const std::vector<std::string> args{
        "explain", "--config", paper_node, "--sig", "random availability(1e-6)", "--json"};
    const Result hour = run(args, "IOSIG_JOB_LIFETIME=1h");
    ASSERT_EQ(hour.status, 0) << hour.err;
    const nlohmann::json j = nlohmann::json::parse(hour.out);
    EXPECT_EQ(j["choice"]["mount"], "/mnt/raid1");
    EXPECT_EQ(j["job_lifetime_seconds"], 3600);
    // over 200 years even the RAID1 (7700 y for 1 GiB) and the NFS (1000 y) lose data too likely
    const Result centuries = run(args, "IOSIG_JOB_LIFETIME=200y");
    EXPECT_EQ(centuries.status, 3) << centuries.out;
}

TEST(Explain, BadSignatureExitsTwoWithACaret) {
    const Result r = run({"explain", "--config", paper_node, "--sig", "random sequental"});
    EXPECT_EQ(r.status, 2);
    EXPECT_TRUE(contains(r.err, "random sequental\n")) << r.err;
    EXPECT_TRUE(contains(r.err, "\n         ^"))
        << r.err; // under "sequental" (offset 7, two spaces indent)
    EXPECT_TRUE(contains(r.err, "sequential")) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(Explain, BadConfigExitsTwoNamingFileLineAndColumn) {
    Scratch scratch;
    const fs::path bad =
        scratch.write("bad.yaml", "node:\n  name: x\ndevices:\n  d:\n    structure: simple\n"
                                  "    media: ssd\n    capacity: 12Q\n");
    const Result r = run({"explain", "--config", bad.string(), "--sig", "random"});
    EXPECT_EQ(r.status, 2);
    EXPECT_TRUE(contains(r.err, bad.string() + ":7:")) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    const Result missing =
        run({"explain", "--config", (scratch.dir() / "nope.yaml").string(), "--sig", "random"});
    EXPECT_EQ(missing.status, 2) << missing.err;
}

TEST(Explain, LayersSeveralConfigFiles) {
    Scratch scratch;
    // A site override declares the RAID1 global (say it is exported to the other nodes).
    const fs::path site =
        scratch.write("site.yaml", "mounts:\n  - path: /mnt/raid1\n    global: true\n");
    const Result r = run({"explain", "--config", paper_node, "--config", site.string(), "--sig",
                          "global random", "--json"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["choice"]["mount"], "/mnt/raid1");
}

TEST(Config, PathsAreRelativeToTheRunningBinary) {
    const fs::path lib = fs::path(IOSIG_BINARY_DIR) / "lib";
    const Result plugin = run({"config", "--plugin"});
    ASSERT_EQ(plugin.status, 0) << plugin.err;
    EXPECT_EQ(plugin.out, (lib / "iosig/iosig-clang-plugin.so").string() + "\n");
    EXPECT_EQ(run({"config", "--preload"}).out, (lib / "libiosig.so").string() + "\n");
    EXPECT_EQ(run({"config", "--lib-dir"}).out, lib.string() + "\n");
    EXPECT_EQ(run({"config", "--prefix"}).out,
              fs::path(IOSIG_BINARY_DIR).lexically_normal().string() + "\n");
    const Result all = run({"config"});
    EXPECT_TRUE(contains(all.out, "plugin:")) << all.out;
    EXPECT_TRUE(contains(all.out, "preload:")) << all.out;
    EXPECT_TRUE(contains(all.out, "include-dir:")) << all.out;
}

TEST(Config, AnInstalledCopyFindsItsOwnPrefix) {
    Scratch scratch;
    const fs::path prefix = scratch.dir() / "prefix";
    fs::create_directories(prefix / IOSIG_INSTALL_BINDIR);
    fs::copy_file(IOSIG_EXECUTABLE, prefix / IOSIG_INSTALL_BINDIR / "iosig");
    const Result r =
        run({"config", "--preload"}, "", (prefix / IOSIG_INSTALL_BINDIR / "iosig").string());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out,
              (prefix / IOSIG_INSTALL_LIBDIR / "libiosig.so").lexically_normal().string() + "\n");
    EXPECT_TRUE(contains(r.err, "does not exist")) << r.err; // nothing installed there
}

} // namespace
