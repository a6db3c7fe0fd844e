// A scratch directory (tmpfs when available, so fsync costs nothing) and helpers for engine tests.
#pragma once

#include "iosig/tier/engine.hpp"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <grp.h>
#include <gtest/gtest.h>
#include <optional>
#include <random>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace iosig::tier::test_support {

class ScratchDir {
public:
    enum class On { tmpfs_if_any, disk };
    // On::disk: under the temporary directory (a disk file system here, with O_DIRECT and a page
    // cache separate from the data), for tests of the direct and buffered IO paths.
    explicit ScratchDir(On on = On::tmpfs_if_any) {
        const std::filesystem::path base =
            on == On::tmpfs_if_any && std::filesystem::exists("/dev/shm")
                ? std::filesystem::path("/dev/shm")
                : std::filesystem::temp_directory_path();
        std::random_device rd;
        path_ =
            base / ("iosig-tier-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
        std::filesystem::create_directories(path_);
    }
    ~ScratchDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    const std::filesystem::path& path() const { return path_; }
    std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
    // Whether files here can be opened with O_DIRECT (not on tmpfs before Linux 6.6, nor on
    // some FUSE and network file systems).
    bool direct_io() const {
        const auto probe = path_ / ".direct-probe";
        const int fd = ::open(probe.c_str(), O_CREAT | O_RDWR | O_DIRECT, 0600);
        if (fd < 0) return false;
        ::close(fd);
        std::filesystem::remove(probe);
        return true;
    }

private:
    std::filesystem::path path_;
};

inline constexpr int could_not_become_nobody = 77;

// Runs `check` in a forked child that has become user and group 65534 first, where the process is
// root (root passes every mode check): 0 when `check` returned "", 1 when it returned what went
// wrong (printed), could_not_become_nobody when root could not drop its ids, -1 when the child
// died. `dir` is made writable for everybody, so that the child can make files in it.
inline int exit_status_as_nobody(const ScratchDir& dir, const std::function<std::string()>& check) {
    std::filesystem::permissions(dir.path(), std::filesystem::perms::all);
    const pid_t child = ::fork();
    if (child < 0) return -1;
    if (child == 0) {
        if (::geteuid() == 0 &&
            (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0)) {
            std::fprintf(stderr, "could not become user 65534: %s\n", std::strerror(errno));
            ::_exit(could_not_become_nobody);
        }
        const std::string wrong = check();
        if (!wrong.empty()) std::fprintf(stderr, "%s\n", wrong.c_str());
        ::_exit(wrong.empty() ? 0 : 1);
    }
    int status = 0;
    if (::waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
}

// In a test body: runs `check` as user 65534 (exit_status_as_nobody) and expects it to pass, or
// skips saying why (`why`: what running as root instead would not show).
#define IOSIG_EXPECT_PASSES_AS_NOBODY(dir, check, why)                                             \
    do {                                                                                           \
        const int status_as_nobody =                                                               \
            ::iosig::tier::test_support::exit_status_as_nobody(dir, check);                        \
        if (status_as_nobody == ::iosig::tier::test_support::could_not_become_nobody)              \
            GTEST_SKIP() << "root here cannot become user 65534 (no CAP_SETUID?), " << why;        \
        EXPECT_EQ(status_as_nobody, 0) << "see the child's message above";                         \
    } while (false)

// Another program's write of `bytes` at `at` in `path`, past the engine.
inline void write_outside(const std::filesystem::path& path, const std::vector<char>& bytes,
                          off_t at) {
    const int fd = ::open(path.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), at), static_cast<ssize_t>(bytes.size()));
    ::close(fd);
}

// The descriptors of this process that name `path` (deleted or not).
inline int descriptors_naming(const std::filesystem::path& path) {
    int count = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
        std::error_code ec;
        const std::string target = std::filesystem::read_symlink(entry.path(), ec).string();
        if (!ec && target.rfind(path.string(), 0) == 0) ++count;
    }
    return count;
}

inline std::vector<char> read_file(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::vector<char>((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
}

// Up to the first `bytes` of handle `h`, read through the engine in one call (fewer at its end).
inline std::vector<char> read_through(TierCache& tier, int h, std::size_t bytes) {
    std::vector<char> got(bytes);
    const ssize_t n = tier.pread(h, got.data(), got.size(), 0);
    got.resize(n < 0 ? 0 : static_cast<std::size_t>(n));
    return got;
}

inline void write_file(const std::filesystem::path& p, const std::vector<char>& data) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
}

inline std::vector<char> pattern(std::size_t n, unsigned seed) {
    std::vector<char> v(n);
    std::mt19937 rng(seed);
    for (char& c : v)
        c = static_cast<char>(rng());
    return v;
}

inline TierConfig small_config(const ScratchDir& dir, std::uint64_t lines = 16,
                               std::uint64_t line_size = 4096) {
    TierConfig c;
    c.cache_file = dir / "cache.tier";
    c.cache_size = lines * line_size;
    c.line_size = line_size;
    c.policy = "lru";
    c.writeback_delay = 3600; // tests decide when data goes home
    c.sequential_cutoff = 0;
    return c;
}

// small_config whose streams go past the cache after `cutoff` bytes, with every write to a home
// file taking `home_write` first and every journal write `journal_write` (race tests widen their
// windows with them).
inline TierConfig past_cache_config(const ScratchDir& dir, std::uint64_t cutoff,
                                    std::chrono::microseconds home_write,
                                    std::chrono::microseconds journal_write = {}) {
    TierConfig c = small_config(dir);
    c.sequential_cutoff = cutoff;
    c.faults = std::make_shared<IoFaults>();
    c.faults->slow_down(FileRole::home, home_write);
    if (journal_write.count() > 0) c.faults->slow_down(FileRole::journal, journal_write);
    return c;
}

// A thread making one read after another until it is stopped (or destroyed): the race tests'
// readers. `read` makes one and says how it went: std::nullopt not to count it, true for a read as
// expected, false for one that was not.
class ReaderThread {
public:
    template <typename Read>
    explicit ReaderThread(Read read)
        : thread_([read = std::move(read), this]() mutable {
              while (!stop_.load()) {
                  const std::optional<bool> as_expected = read();
                  if (!as_expected) continue;
                  reads_.fetch_add(1);
                  if (!*as_expected) unexpected_.fetch_add(1);
              }
          }) {}
    ~ReaderThread() { stop(); }
    ReaderThread(const ReaderThread&) = delete;
    ReaderThread& operator=(const ReaderThread&) = delete;
    void stop() {
        stop_ = true;
        if (thread_.joinable()) thread_.join();
    }
    std::uint64_t reads() const { return reads_.load(); }
    std::uint64_t unexpected() const { return unexpected_.load(); }

private:
    std::atomic<bool> stop_{false};
    std::atomic<std::uint64_t> reads_{0}, unexpected_{0};
    std::thread thread_; // last: it starts once the counters exist
};

// Writes `bytes` (one line) at 0 through handle `h`, lets the flusher write the line back but
// holds it at the home file's sync (before the line's CLEAN record), and closes `h` from another
// thread meanwhile; the journal refuses the CLEAN record (one failed write, `faults`: the engine's
// TierConfig::faults), so the close finds the line home but unrecorded. Returns the close's result
// (1 when the test failed first: the flusher never wrote the line back, or the record was not
// refused).
inline int close_during_a_write_back_whose_clean_record_fails(TierCache& tier, IoFaults& faults,
                                                              int h,
                                                              const std::vector<char>& bytes) {
    faults.hold_syncs(FileRole::home);
    if (tier.pwrite(h, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size())) {
        ADD_FAILURE() << "the write failed";
        return 1;
    }
    for (int i = 0; i < 10'000 && faults.syncs(FileRole::home) == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (faults.syncs(FileRole::home) == 0) {
        ADD_FAILURE() << "the flusher never wrote the line back";
        faults.let_syncs_go();
        return 1;
    }
    faults.fail_one_write(1, {FileRole::journal}); // the CLEAN record
    int closed = 1;
    std::thread close([&] { closed = tier.close(h); });
    std::this_thread::sleep_for(std::chrono::milliseconds(100)); // the close waits for the line
    faults.let_syncs_go();
    close.join();
    if (faults.injected_failures() != 1) {
        ADD_FAILURE() << "the CLEAN record was not refused";
        return 1;
    }
    return closed;
}

} // namespace iosig::tier::test_support
