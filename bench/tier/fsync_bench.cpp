// fsync through the engine: one 4 KiB line written and made durable, in caches of 2^18 and 2^20
// lines (1 and 4 GiB of 4 KiB lines) on tmpfs, so that the time is the engine's own. fsync finds
// the file's dirty lines from the flusher's FIFO; a scan of every line's metadata made it grow
// with the cache (docs/performance.md, "fsync in a large cache").
#define CATCH_CONFIG_MAIN
#include "iosig/tier/engine.hpp"

#include <catch2/catch.hpp>
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
        fmt::format("iosig-fsync-bench-{}", ::getpid());
    std::filesystem::create_directories(dir);
    return dir;
}

} // namespace

TEST_CASE("fsync of one written line") {
    const std::filesystem::path dir = scratch();
    std::vector<char> line(4096, 'x');
    for (const std::uint64_t lines : {std::uint64_t{1} << 18, std::uint64_t{1} << 20}) {
        TierConfig config;
        config.cache_file = dir / "cache.tier";
        config.line_size = line.size();
        config.cache_size = lines * line.size();
        config.policy = "lru";
        config.sequential_cutoff = 0;
        auto tier = TierCache::open(config);
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
