// iosig-cachesim and iosig-dirtytop as a user runs them.
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace {

const std::string bin = std::string(IOSIG_BINARY_DIR) + "/bin/";

struct Result {
    int status = -1;
    std::string out; // stdout and stderr
};

Result run(const std::string& command) {
    Result r;
    std::FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
    if (!pipe) return r;
    std::array<char, 4096> buffer{};
    while (std::fgets(buffer.data(), buffer.size(), pipe))
        r.out += buffer.data();
    const int status = ::pclose(pipe);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

class CachesimCli : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               ("iosig-cachesim-cli-" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir_ / "data");
        write("node.yaml",
              "node: {name: t, page_size: 4K}\n"
              "system:\n"
              "  page_cache_write_bw: 2G/s\n"
              "  page_cache_write_bw_flushing: 1G/s\n"
              "  write_syscall_base: 2us\n"
              "  sync_write_syscall_base: 1ms\n"
              "  memory_bw: 10G/s\n"
              "  dirty_bytes: 64M\n"
              "  dirty_background_bytes: 32M\n"
              "devices:\n"
              "  d: {structure: simple, media: ssd, capacity: 10G,\n"
              "      performance: {seq_write_bw: 500M/s, seq_read_bw: 1G/s, op_latency: 100us}}\n"
              "mounts:\n"
              "  - {path: " +
                  (dir_ / "data").string() + ", device: d, fs_type: ext4, block_size: 4K}\n");
        std::string workload = "offset,size,delay_s\n";
        for (int i = 0; i < 48; ++i)
            workload += std::to_string(i) + "M,1M,0\n";
        write("w.csv", workload);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    void write(const std::string& name, const std::string& text) {
        std::ofstream(dir_ / name) << text;
    }
    std::string path(const std::string& name) const { return (dir_ / name).string(); }
    std::string cachesim(const std::string& args) const {
        return bin + "iosig-cachesim --config " + path("node.yaml") + " --mount " +
               (dir_ / "data").string() + " " + args;
    }

    std::filesystem::path dir_;
};

TEST_F(CachesimCli, PredictsEveryWriteWithTotalsAndCsv) {
    const Result r = run(cachesim("--method buffered --workload " + path("w.csv") +
                                  " --no-live --csv " + path("out.csv")));
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("total cost  model (CAWL):"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("baseline (size / bandwidth)"), std::string::npos);
    EXPECT_NE(r.out.find("background-flush"),
              std::string::npos); // 48 MiB crosses the 32 MiB threshold
    std::ifstream csv(path("out.csv"));
    std::string header, line;
    std::getline(csv, header);
    EXPECT_EQ(header,
              "index,offset,size,delay_s,cost_s,baseline_s,pause_s,dirty_pages,state,syscalls,"
              "typical_s");
    int rows = 0;
    while (std::getline(csv, line))
        ++rows;
    EXPECT_EQ(rows, 48);
}

TEST_F(CachesimCli, StartsFromTheLiveKernelStateByDefault) {
    const Result r = run(cachesim("--method stdio --workload " + path("w.csv") + " --quiet"));
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("48 writes"), std::string::npos) << r.out;
    const Result noisy = run(cachesim("--method buffered --workload " + path("w.csv")));
    EXPECT_NE(noisy.out.find("note: dirty thresholds from the kernel"), std::string::npos)
        << noisy.out;
}

TEST_F(CachesimCli, BadWorkloadNamesFileAndLine) {
    write("bad.csv", "offset,size,delay_s\n0,4K,0\n4K,0,0\n");
    const Result r = run(cachesim("--method buffered --no-live --workload " + path("bad.csv")));
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.out.find(path("bad.csv") + ":3: size must be positive"), std::string::npos)
        << r.out;
}

TEST_F(CachesimCli, DirectIoNeedsAlignedWrites) {
    write("odd.csv", "offset,size,delay_s\n0,6000,0\n");
    const Result r = run(cachesim("--method direct --no-live --workload " + path("odd.csv")));
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.out.find(path("odd.csv") + ":2: direct IO needs offsets and sizes"),
              std::string::npos)
        << r.out;
}

TEST_F(CachesimCli, MissingParametersAreListed) {
    write("bare.yaml",
          "node: {name: t}\ndevices:\n  d: {structure: simple, media: ssd, capacity: 1G,\n"
          "      performance: {seq_write_bw: 500M/s, seq_read_bw: 1G/s}}\n"
          "mounts:\n  - {path: /, device: d, fs_type: ext4}\n");
    const Result r = run(bin + "iosig-cachesim --config " + path("bare.yaml") +
                         " --mount / --method buffered --no-live"
                         " --workload " +
                         path("w.csv"));
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.out.find("lacks parameters the buffered model needs"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("system.write_syscall_base"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("system.page_cache_write_bw"), std::string::npos) << r.out;
}

TEST_F(CachesimCli, UnknownMountIsBadInput) {
    const Result r = run(bin + "iosig-cachesim --config " + path("node.yaml") +
                         " --mount /nowhere --method buffered"
                         " --workload " +
                         path("w.csv"));
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.out.find("no mount"), std::string::npos) << r.out;
}

TEST(DirtytopCli, PrintsTheLiveStateWithTheFallback) {
    const Result r = run(bin + "iosig-dirtytop --no-bpf --count 2 --interval 0.2");
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("eBPF probes unavailable (disabled by the caller)"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("source: procfs"), std::string::npos);
    EXPECT_NE(r.out.find("thresh"), std::string::npos);
}

TEST(DirtytopCli, PrintsTheLiveStateWithEbpf) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root for the probes";
    if (!std::filesystem::exists("/sys/kernel/btf/vmlinux")) GTEST_SKIP() << "no BTF";
    const Result r = run(bin + "iosig-dirtytop --count 1 --interval 0.2");
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("source: ebpf"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("written"), std::string::npos) << r.out;
}

} // namespace
