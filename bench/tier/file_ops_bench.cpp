// fsync and ftruncate through the engine, in caches of 2^18 and 2^20 lines (1 and 4 GiB of 4 KiB
// lines) on tmpfs, so that the time is the engine's own. Both cost the file's own lines, not the
// cache's: fsync finds the file's dirty lines in the flusher's FIFO, ftruncate looks up the lines
// beyond the new end in the index. Each used to scan every line's metadata under the engine's lock
// (docs/performance.md, "fsync in a large cache", "ftruncate in a large cache"). And a read and a
// write that hit the cache, each holding its bytes in the file's range lock for the call
// (docs/performance.md, "Each call one step for the others"). And writes with the cache on a disk
// file system, where a device flush costs what it costs (docs/performance.md, "Writes that sync
// nothing"). And a read that misses (docs/performance.md, "A read that misses").
#define CATCH_CONFIG_MAIN
#include "iosig/tier/engine.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <string>
#include <unistd.h>
#include <vector>

using namespace iosig::tier;

namespace {

std::filesystem::path scratch() {
    const std::filesystem::path dir =
        std::filesystem::path(std::filesystem::exists("/dev/shm") ? "/dev/shm" : "/tmp") /
        fmt::format("iosig-file-ops-bench-{}", ::getpid());
    std::filesystem::create_directories(dir);
    return dir;
}

} // namespace

TierConfig large_cache(const std::filesystem::path& dir, std::uint64_t lines) {
    TierConfig config;
    config.cache_file = dir / "cache.tier";
    config.line_size = 4096;
    config.cache_size = lines * config.line_size;
    config.policy = "lru";
    config.sequential_cutoff = 0;
    return config;
}

constexpr std::uint64_t cache_lines[] = {std::uint64_t{1} << 18, std::uint64_t{1} << 20};

TEST_CASE("fsync of one written line") {
    const std::filesystem::path dir = scratch();
    std::vector<char> line(4096, 'x');
    for (const std::uint64_t lines : cache_lines) {
        auto tier = TierCache::open(large_cache(dir, lines));
        const int h = tier->open_file(dir / "home.dat", O_RDWR | O_CREAT);
        REQUIRE(h >= 0);
        off_t at = 0;
        BENCHMARK(fmt::format("pwrite 4 KiB + fsync, {} lines", lines)) {
            REQUIRE(tier->pwrite(h, line.data(), line.size(), at) ==
                    static_cast<ssize_t>(line.size()));
            at = (at + 4096) % (1 << 26);
            return tier->fsync(h);
        };
        tier->close(h);
    }
    std::filesystem::remove_all(dir);
}

// A log cut back after every few records: 16 KiB written (4 lines), then truncated to 0.
TEST_CASE("ftruncate of a small file") {
    const std::filesystem::path dir = scratch();
    std::vector<char> record(4 * 4096, 'x');
    for (const std::uint64_t lines : cache_lines) {
        auto tier = TierCache::open(large_cache(dir, lines));
        const int h = tier->open_file(dir / "log.dat", O_RDWR | O_CREAT);
        REQUIRE(h >= 0);
        BENCHMARK(fmt::format("pwrite 16 KiB + ftruncate to 0, {} lines", lines)) {
            REQUIRE(tier->pwrite(h, record.data(), record.size(), 0) ==
                    static_cast<ssize_t>(record.size()));
            return tier->ftruncate(h, 0);
        };
        tier->close(h);
    }
    std::filesystem::remove_all(dir);
}

// The engine's cost per call when the line is cached (and, for the write, already dirty): the
// cache file's pread or pwrite on tmpfs, the line's lease, and the call's range hold.
TEST_CASE("pread and pwrite of a cached line") {
    const std::filesystem::path dir = scratch();
    constexpr std::uint64_t lines = 1024;
    std::vector<char> data(lines * 4096, 'x');
    auto tier = TierCache::open(large_cache(dir, lines));
    const int h = tier->open_file(dir / "home.dat", O_RDWR | O_CREAT);
    REQUIRE(h >= 0);
    REQUIRE(tier->pwrite(h, data.data(), data.size(), 0) == static_cast<ssize_t>(data.size()));
    std::vector<char> buffer(4096);
    off_t at = 0;
    BENCHMARK("pread 4 KiB, a cached line") {
        at = (at + 4096) % static_cast<off_t>(data.size());
        return tier->pread(h, buffer.data(), buffer.size(), at);
    };
    BENCHMARK("pwrite 4 KiB, a cached dirty line") {
        at = (at + 4096) % static_cast<off_t>(data.size());
        return tier->pwrite(h, buffer.data(), buffer.size(), at);
    };
    tier->close(h);
    std::filesystem::remove_all(dir);
}

// Reads that miss: a home file four times the size of a 1,024-line cache, read a line at a time in
// turn, so that every read fills its line from home and evicts the least recently used (clean)
// one. The home file and the cache file are on tmpfs: the time is the engine's own and two 4 KiB
// copies. Since session 33 each fill and each eviction also counts the file's lines in the index
// (Engine::resident_lines_, for forgetting released files).
TEST_CASE("pread of a line that misses") {
    const std::filesystem::path dir = scratch();
    constexpr std::uint64_t cache_lines_here = 1024;
    constexpr std::uint64_t home_lines = 4 * cache_lines_here;
    const auto path = dir / "input.dat";
    {
        const std::vector<char> data(home_lines * 4096, 'x');
        const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
        REQUIRE(fd >= 0);
        REQUIRE(::write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size()));
        ::close(fd);
    }
    auto tier = TierCache::open(large_cache(dir, cache_lines_here));
    const int h = tier->open_file(path, O_RDONLY);
    REQUIRE(h >= 0);
    std::vector<char> buffer(4096);
    off_t at = 0;
    const std::uint64_t hits_before = tier->stats().read_hits;
    BENCHMARK("pread 4 KiB, a miss that evicts a clean line") {
        at = (at + 4096) % static_cast<off_t>(home_lines * 4096);
        return tier->pread(h, buffer.data(), buffer.size(), at);
    };
    REQUIRE(tier->stats().read_hits == hits_before);
    tier->close(h);
    std::filesystem::remove_all(dir);
}

// A file opened, read (one cached line) and closed again and again, as a program that reopens its
// inputs does: open_file finds the file by its device and inode and compares its version with the
// one its last close noted (close-to-open consistency), close notes it again; a cache of 2^18
// lines holding the file's 1,024 lines, none dirty.
TEST_CASE("open, pread and close of a cached file") {
    const std::filesystem::path dir = scratch();
    constexpr std::uint64_t lines = 1024;
    std::vector<char> data(lines * 4096, 'x');
    auto tier = TierCache::open(large_cache(dir, std::uint64_t{1} << 18));
    const auto path = dir / "input.dat";
    int h = tier->open_file(path, O_RDWR | O_CREAT);
    REQUIRE(h >= 0);
    REQUIRE(tier->pwrite(h, data.data(), data.size(), 0) == static_cast<ssize_t>(data.size()));
    REQUIRE(tier->close(h) == 0);
    std::vector<char> buffer(4096);
    off_t at = 0;
    BENCHMARK("open_file + pread 4 KiB + close, a cached file") {
        const int r = tier->open_file(path, O_RDONLY);
        at = (at + 4096) % static_cast<off_t>(data.size());
        const ssize_t n = tier->pread(r, buffer.data(), buffer.size(), at);
        return tier->close(r) + n;
    };
    REQUIRE(tier->stats().read_misses == 0);
    std::filesystem::remove_all(dir);
}

// 256 files opened, read and closed in turn, as a program that walks its inputs again and again
// does: with TierConfig::idle_files at its default (64) every open finds its file released and
// opens a descriptor again (and the close releases the longest idle file); with 1,024 idle files
// allowed the engine keeps every descriptor, as it did before session 33.
TEST_CASE("open, pread and close of 256 cached files in turn") {
    const std::filesystem::path dir = scratch();
    constexpr int files = 256;
    std::vector<char> data(4 * 4096, 'x');
    std::vector<char> buffer(4096);
    for (const std::size_t idle : {std::size_t{64}, std::size_t{1024}}) {
        TierConfig config = large_cache(dir, std::uint64_t{1} << 18);
        config.idle_files = idle;
        auto tier = TierCache::open(config);
        std::vector<std::filesystem::path> paths;
        for (int i = 0; i < files; ++i) {
            paths.push_back(dir / fmt::format("input-{}.dat", i));
            const int h = tier->open_file(paths.back(), O_RDWR | O_CREAT);
            REQUIRE(h >= 0);
            REQUIRE(tier->pwrite(h, data.data(), data.size(), 0) ==
                    static_cast<ssize_t>(data.size()));
            REQUIRE(tier->close(h) == 0);
        }
        int next = 0;
        BENCHMARK(fmt::format("open_file + pread 4 KiB + close, 256 files, {} idle", idle)) {
            const int r = tier->open_file(paths[static_cast<std::size_t>(next)], O_RDONLY);
            next = (next + 1) % files;
            const ssize_t n = tier->pread(r, buffer.data(), buffer.size(), 0);
            return tier->close(r) + n;
        };
        REQUIRE(tier->stats().read_misses == 0);
    }
    std::filesystem::remove_all(dir);
}

// A file the engine has not met: its first open brings its descriptors, its status, its file
// system and (since session 36) its handle, and journals it (a FILE_BORN record and, since session
// 36, a FILE_HANDLE one). Each run opens and closes a file of its own, made before its sample is
// timed; the engine forgets each (released, no line cached) as later ones push it out of the idle
// files.
TEST_CASE("open and close of a file the engine has not met") {
    const std::filesystem::path dir = scratch();
    auto tier = TierCache::open(large_cache(dir, std::uint64_t{1} << 18));
    int made = 0;
    BENCHMARK_ADVANCED("open_file + close, a file not met before")
    (Catch::Benchmark::Chronometer meter) {
        std::vector<std::filesystem::path> paths;
        for (int i = 0; i < meter.runs(); ++i) {
            paths.push_back(dir / fmt::format("new-{}.dat", made++));
            const int fd = ::open(paths.back().c_str(), O_WRONLY | O_CREAT, 0600);
            REQUIRE(fd >= 0);
            ::close(fd);
        }
        meter.measure([&](int i) {
            const int h = tier->open_file(paths[static_cast<std::size_t>(i)], O_RDONLY);
            return tier->close(h) + h;
        });
        for (const auto& path : paths)
            std::filesystem::remove(path);
    };
    tier.reset();
    std::filesystem::remove_all(dir);
}

// The cache on a disk file system (IOSIG_BENCH_DISK, default /var/tmp), 1 GiB of 4 KiB lines, no
// write-back while it runs: a write that turns a clean line dirty (its DIRTY record), and a
// 128-byte append to a dirty line (a SIZE record). Neither syncs anything since session 30; before,
// each synced the cache file and then the journal.
TEST_CASE("writes with the cache on disk") {
    const char* where = std::getenv("IOSIG_BENCH_DISK");
    const std::filesystem::path dir = std::filesystem::path(where ? where : "/var/tmp") /
                                      fmt::format("iosig-file-ops-bench-{}", ::getpid());
    std::filesystem::create_directories(dir);
    constexpr std::uint64_t lines = std::uint64_t{1} << 18;
    TierConfig config = large_cache(dir, lines);
    config.writeback_delay = 3600;
    config.max_dirty_lines = lines;
    auto tier = TierCache::open(config);
    const int h = tier->open_file(dir / "home.dat", O_RDWR | O_CREAT);
    REQUIRE(h >= 0);
    std::vector<char> data(4096, 'w');
    std::uint64_t next = 0;
    BENCHMARK("pwrite 4 KiB to a clean line, cache on disk") {
        const off_t at = static_cast<off_t>((next++ % lines) * 4096);
        return tier->pwrite(h, data.data(), data.size(), at);
    };
    const int log = tier->open_file(dir / "log.dat", O_RDWR | O_CREAT);
    REQUIRE(log >= 0);
    off_t end = 0;
    BENCHMARK("append 128 B (one line in 32 clean), cache on disk") {
        const ssize_t n = tier->pwrite(log, data.data(), 128, end);
        end = (end + 128) % (off_t{1} << 30);
        return n;
    };
    tier->abandon(); // writing 1 GiB home is not what is measured
    tier.reset();
    std::filesystem::remove_all(dir);
}
