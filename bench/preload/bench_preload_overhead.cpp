// The shim's overhead versus no preload, measured side by side in one run: the same workload
// program is spawned alternately without and with LD_PRELOAD=libiosig.so (order swapped every
// pair), each run times its own loop, and the medians are compared (docs/performance.md,
// "preload").
//
//   non-matching file:  64 B fwrite (target <= 5 %), 4 KiB pwrite (target <= 2 %)
//   tracked file:       64 B fwrite (target <= 10 %), 4 KiB pwrite (target <= 5 %)
//   redirected open:    the added cost of open(O_CREAT)+close when the file is redirected, in us
//                       (journal on the state directory's file system, with its fdatasync)
//
// Run: build/bench/bench_preload_overhead [-s]   (IOSIG_BENCH_REPS=N pairs, default 61)
#define CATCH_CONFIG_MAIN
#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <spawn.h>
#include <string>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;

constexpr long tmpfs_magic = 0x01021994;

int repetitions() {
    const char* text = std::getenv("IOSIG_BENCH_REPS");
    const int n = text ? std::atoi(text) : 0;
    return n > 0 ? n : 61;
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const auto n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

void write_text(const fs::path& file, const std::string& text) {
    std::ofstream out(file);
    out << text;
    REQUIRE(out.good());
}

std::string node_yaml(const std::string& mount, const std::string& fs_type) {
    return "node: {name: bench}\n"
           "devices:\n"
           "  dev:\n"
           "    structure: simple\n    media: ram\n    capacity: 4G\n"
           "    performance: {seq_read_bw: 6G/s, seq_write_bw: 4G/s, op_latency: 2us}\n"
           "    reliability: {mttf: 1y, ber: 1e-12, mttr: 10min}\n"
           "mounts:\n"
           "  - path: " +
           mount + "\n    device: dev\n    fs_type: " + fs_type +
           "\n    volatile: false\n    capacity: 4G\n";
}

// The bench's files: <scratch>/data (the only mount of data.yaml: tracked files stay there; a tmpfs
// when root), <scratch>/data/home (created files, redirected to /dev/shm by shm.yaml), rules,
// state.
struct Scratch {
    fs::path root;
    std::string data_fs;
    Scratch() {
        std::string pattern = "/var/tmp/iosig-bench-preload-XXXXXX";
        REQUIRE(mkdtemp(pattern.data()) != nullptr);
        root = pattern;
        fs::create_directories(root / "data");
        // The written files on a private tmpfs when we may mount one: page-cache-only writes
        // without ext4 writeback in the way, so the comparison measures the shim, not the disk.
        data_fs = "ext4";
        if (geteuid() == 0 &&
            mount("iosig-bench", (root / "data").c_str(), "tmpfs", 0, "size=512m") == 0)
            data_fs = "tmpfs";
        fs::create_directories(root / "data" / "home");
        write_text(root / "data.yaml", node_yaml((root / "data").string(), data_fs));
        write_text(root / "shm.yaml", node_yaml("/dev/shm", "tmpfs"));
        write_text(root / "rules.yaml",
                   "rules:\n"
                   "  - match: \"" +
                       (root / "data").string() +
                       "/tracked-*\"\n"
                       "    sig: \"sequential persist size-per-IO(4K) totalsize(64M)\"\n"
                       "  - match: \"" +
                       (root / "data" / "home").string() +
                       "/redirected-*/*\"\n"
                       "    sig: \"temp random size-per-IO(4K) totalsize(1M)\"\n");
    }
    ~Scratch() {
        std::error_code ec;
        if (data_fs == "tmpfs") umount2((root / "data").c_str(), MNT_DETACH);
        fs::remove_all(root, ec);
        fs::remove_all("/dev/shm/.iosig-" + std::to_string(geteuid()), ec);
    }
};

// Runs the workload; returns the ns per operation it printed.
double spawn_workload(const std::vector<std::string>& args,
                      const std::map<std::string, std::string>& extra_env) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
        const std::string entry(*e);
        if (entry.rfind("LD_PRELOAD=", 0) == 0 || entry.rfind("IOSIG_", 0) == 0) continue;
        env.push_back(entry);
    }
    for (const auto& [key, value] : extra_env)
        env.push_back(key + "=" + value);
    std::vector<char*> envp, argv;
    for (auto& e : env)
        envp.push_back(e.data());
    envp.push_back(nullptr);
    std::vector<std::string> all = {IOSIG_PRELOAD_WORKLOAD};
    all.insert(all.end(), args.begin(), args.end());
    for (auto& a : all)
        argv.push_back(a.data());
    argv.push_back(nullptr);

    int out[2];
    REQUIRE(pipe(out) == 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    pid_t pid = 0;
    const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    REQUIRE(spawned == 0);
    std::string text;
    char buffer[256];
    ssize_t n;
    while ((n = read(out[0], buffer, sizeof buffer)) > 0)
        text.append(buffer, static_cast<std::size_t>(n));
    close(out[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    INFO("workload " << args[0] << " " << args[1] << " failed, output: " << text);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    return std::strtod(text.c_str(), nullptr);
}

struct Comparison {
    double plain = 0, preloaded = 0; // medians, ns per operation
    double overhead = 0;             // median of the per-pair ratios - 1
};

// Alternates plain and preloaded runs (swapping which goes first) and compares the medians.
// `prepare(i)` returns the arguments of run i (a fresh path when the workload creates files).
template <typename Prepare>
Comparison compare(const Prepare& prepare, const std::map<std::string, std::string>& preload_env) {
    std::vector<double> plain, preloaded, ratios;
    const int reps = repetitions();
    spawn_workload(prepare(-1), {}); // warm-up: page cache, binary, library
    for (int i = 0; i < reps; ++i) {
        double p = 0, q = 0;
        if (i % 2 == 0) {
            p = spawn_workload(prepare(2 * i), {});
            q = spawn_workload(prepare(2 * i + 1), preload_env);
        } else {
            q = spawn_workload(prepare(2 * i + 1), preload_env);
            p = spawn_workload(prepare(2 * i), {});
        }
        plain.push_back(p);
        preloaded.push_back(q);
        ratios.push_back(q / p);
    }
    return {median(plain), median(preloaded), median(ratios) - 1};
}

std::map<std::string, std::string> shim_env(const Scratch& s, const std::string& config,
                                            const std::string& state) {
    return {{"LD_PRELOAD", IOSIG_PRELOAD_LIBRARY},
            {"IOSIG_CONFIG", (s.root / config).string()},
            {"IOSIG_RULES", (s.root / "rules.yaml").string()},
            {"IOSIG_STATE", state},
            {"IOSIG_JOB", "bench"},
            {"IOSIG_RUN", "bench-run"},
            {"IOSIG_REPORT", state + "/report.jsonl"},
            {"IOSIG_LOG", (s.root / "shim.log").string()}};
}

void print(const char* name, const Comparison& c, const char* unit_note, double target) {
    std::printf("%-34s plain %9.2f ns/op   preload %9.2f ns/op   overhead %+6.2f %%   (target <= "
                "%.0f %%)%s\n",
                name, c.plain, c.preloaded, c.overhead * 100, target * 100, unit_note);
    std::fflush(stdout);
}

void check_tracked(const Scratch& s, const char* name) {
    // The tracked runs really were tracked: their files appear in the shim's report.
    std::ifstream in(s.root / "state-data" / "report.jsonl");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    INFO("no report entry for " << name << " (the file was not tracked?)");
    CHECK(text.find(name) != std::string::npos);
}

} // namespace

TEST_CASE("write overhead: non-matching and tracked files", "[preload][overhead]") {
    Scratch s;
    const auto env = shim_env(s, "data.yaml", (s.root / "state-data").string());
    const std::string data = (s.root / "data").string();
    std::printf("preload overhead, files on %s, %d alternating pairs per line, medians\n",
                s.data_fs.c_str(), repetitions());

    const auto fwrite_plain = compare(
        [&](int) {
            return std::vector<std::string>{"fwrite64", data + "/plain-64.bin", "2000000"};
        },
        env);
    print("non-matching file, 64 B fwrite", fwrite_plain, "", 0.05);
    const auto pwrite_plain = compare(
        [&](int) { return std::vector<std::string>{"pwrite4k", data + "/plain-4k.bin", "100000"}; },
        env);
    print("non-matching file, 4 KiB pwrite", pwrite_plain, "", 0.02);
    const auto fwrite_tracked = compare(
        [&](int) {
            return std::vector<std::string>{"fwrite64", data + "/tracked-64.bin", "2000000"};
        },
        env);
    print("tracked file, 64 B fwrite", fwrite_tracked, "", 0.10);
    const auto pwrite_tracked = compare(
        [&](int) {
            return std::vector<std::string>{"pwrite4k", data + "/tracked-4k.bin", "100000"};
        },
        env);
    print("tracked file, 4 KiB pwrite", pwrite_tracked, "", 0.05);

    check_tracked(s, "tracked-64.bin");
    check_tracked(s, "tracked-4k.bin");
    CHECK(fwrite_plain.overhead <= 0.05);
    CHECK(pwrite_plain.overhead <= 0.02);
    CHECK(fwrite_tracked.overhead <= 0.10);
    CHECK(pwrite_tracked.overhead <= 0.05);
}

TEST_CASE("redirected open: added cost", "[preload][open]") {
    struct statfs shm{};
    if (statfs("/dev/shm", &shm) != 0 || static_cast<long>(shm.f_type) != tmpfs_magic) {
        WARN("skipped: /dev/shm is not a tmpfs (the redirection target of this benchmark)");
        return;
    }
    Scratch s;
    constexpr long files = 400;
    const std::string home = (s.root / "data" / "home").string();
    auto fresh = [&](const char* prefix) {
        return [&, prefix](int i) {
            const std::string dir = home + "/" + prefix + std::to_string(i + 1);
            fs::create_directories(dir);
            return std::vector<std::string>{"create", dir, std::to_string(files)};
        };
    };
    // Journal (state directory) on the same ext4 as the program's files: every redirection is one
    // fdatasync'd journal record. Then with the state directory on a tmpfs, to separate that cost.
    const auto redirected =
        compare(fresh("redirected-"), shim_env(s, "shm.yaml", (s.root / "state-open").string()));
    const auto unmatched =
        compare(fresh("plain-"), shim_env(s, "shm.yaml", (s.root / "state-open").string()));
    const std::string shm_state = "/dev/shm/iosig-bench-state-" + std::to_string(getpid());
    const auto redirected_shm_state =
        compare(fresh("redirected-s"), shim_env(s, "shm.yaml", shm_state));
    std::error_code ec;
    fs::remove_all(shm_state, ec);

    const auto us = [](double ns) { return ns / 1000; };
    std::printf("open(O_CREAT|O_EXCL)+close in a directory on %s, %ld files per run, %d "
                "alternating pairs, medians\n",
                s.data_fs.c_str(), files, repetitions());
    std::printf("%-52s plain %7.2f us   preload %8.2f us   added %8.2f us\n",
                "redirected (journal on ext4, fdatasync)", us(redirected.plain),
                us(redirected.preloaded), us(redirected.preloaded - redirected.plain));
    std::printf("%-52s plain %7.2f us   preload %8.2f us   added %8.2f us\n",
                "redirected (journal on tmpfs)", us(redirected_shm_state.plain),
                us(redirected_shm_state.preloaded),
                us(redirected_shm_state.preloaded - redirected_shm_state.plain));
    std::printf("%-52s plain %7.2f us   preload %8.2f us   added %8.2f us\n",
                "not matching any rule", us(unmatched.plain), us(unmatched.preloaded),
                us(unmatched.preloaded - unmatched.plain));
    std::fflush(stdout);

    // The redirections really happened: the staged files exist on /dev/shm behind symlinks.
    const fs::path first = home + "/redirected-2/f0";
    INFO(first << " is not a symlink into /dev/shm");
    CHECK(fs::is_symlink(fs::symlink_status(first)));
    CHECK(fs::read_symlink(first, ec).string().rfind("/dev/shm/", 0) == 0);
}
