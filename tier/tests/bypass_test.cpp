// The sequential bypass (TierConfig::sequential_cutoff, bcache's sequential_cutoff): a handle's
// stream longer than the cutoff goes past the cache, and its reads and writes reach the home file
// as the program's own would have, through the page cache (the kernel's readahead and write-back
// merging apply), while the cache's own IO stays direct. On a disk file system, where the page
// cache is separate from the data.
#include "engine_fixture.hpp"
#include "iosig/tier/simulator.hpp"

#include <cstdlib>
#include <gtest/gtest.h>
#include <sys/mman.h>

namespace iosig::tier {
namespace {

using test_support::pattern;
using test_support::ScratchDir;
using test_support::small_config;
using test_support::write_file;

constexpr std::uint64_t line = 4096;

// Pages of `file` in [first_line, last_line] resident in the page cache.
std::size_t resident_lines(const std::filesystem::path& file, std::uint64_t first_line,
                           std::uint64_t last_line) {
    const int fd = ::open(file.c_str(), O_RDONLY);
    if (fd < 0) return 0;
    const std::size_t length = (last_line - first_line + 1) * line;
    void* map =
        ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(first_line * line));
    ::close(fd);
    if (map == MAP_FAILED) return 0;
    std::vector<unsigned char> in_core(length / line);
    std::size_t resident = 0;
    if (::mincore(map, length, in_core.data()) == 0)
        for (const unsigned char page : in_core)
            resident += page & 1;
    ::munmap(map, length);
    return resident;
}

void forget_cached_pages(const std::filesystem::path& file) {
    const int fd = ::open(file.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    ::fdatasync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
}

// A home file of 64 lines behind a 16-line cache with direct IO and a cutoff of 4 lines.
struct BypassOnDisk : ::testing::Test {
    void SetUp() override {
        if (!disk.direct_io())
            GTEST_SKIP()
                << disk.path()
                << " has no O_DIRECT (tmpfs?): the bypass's page-cache path cannot be told "
                   "from the cache's direct IO here";
        write_file(home, data);
        forget_cached_pages(home);
        TierConfig config = small_config(disk, 16);
        config.sequential_cutoff = 4 * line;
        tier = TierCache::open(config);
        h = tier->open_file(home, O_RDWR);
        ASSERT_GE(h, 0);
    }
    // Through a page-aligned buffer, as a program's large buffers are: direct IO could take it.
    std::vector<char> read_line(std::uint64_t l) {
        EXPECT_EQ(tier->pread(h, aligned.get(), line, static_cast<off_t>(l * line)),
                  static_cast<ssize_t>(line));
        return {aligned.get(), aligned.get() + line};
    }
    std::vector<char> line_of(const std::vector<char>& bytes, std::uint64_t l) {
        return {bytes.begin() + static_cast<std::ptrdiff_t>(l * line),
                bytes.begin() + static_cast<std::ptrdiff_t>((l + 1) * line)};
    }

    ScratchDir disk{ScratchDir::On::disk};
    std::filesystem::path home = disk / "home.dat";
    std::vector<char> data = pattern(64 * line, 41);
    std::unique_ptr<TierCache> tier;
    int h = -1;
    std::unique_ptr<char, decltype(&std::free)> aligned{
        static_cast<char*>(std::aligned_alloc(4096, line)), &std::free};
};

// The first lines of a scan fill the cache with direct reads; past the cutoff the scan reads
// through the page cache, so its lines are in the page cache afterwards, where direct reads leave
// none.
TEST_F(BypassOnDisk, AScanPastTheCutoffReadsThroughThePageCache) {
    for (std::uint64_t l = 0; l < 32; ++l)
        ASSERT_EQ(read_line(l), line_of(data, l)) << "line " << l;
    EXPECT_GE(tier->stats().bypassed_bytes, 27 * line);
    EXPECT_EQ(resident_lines(home, 0, 3), 0u) << "the cache's fills read directly";
    EXPECT_EQ(resident_lines(home, 8, 31), 24u) << "the bypassed reads went through the page cache";
}

// A program that opened the file O_DIRECT asked for no page cache: its bypassed scan stays direct.
TEST_F(BypassOnDisk, AnODirectHandleBypassesDirectly) {
    ASSERT_EQ(tier->close(h), 0);
    h = tier->open_file(home, O_RDWR | O_DIRECT);
    ASSERT_GE(h, 0);
    for (std::uint64_t l = 0; l < 32; ++l)
        ASSERT_EQ(read_line(l), line_of(data, l)) << "line " << l;
    EXPECT_GE(tier->stats().bypassed_bytes, 27 * line);
    EXPECT_EQ(resident_lines(home, 0, 31), 0u);
}

// Bytes written through either path read back right through the other. A line the page cache
// holds from a bypassed scan is written through the cache, goes home by direct IO at fsync and
// leaves the cache: a second bypassed scan reads the new bytes, not the page cache's old copy. A
// stream written past the cutoff sits dirty in the page cache: the cache's direct fills read its
// bytes. The home file at the end holds every write.
TEST_F(BypassOnDisk, BypassedAndCachedIoSeeEachOthersBytes) {
    std::vector<char> expected = data;
    const auto write_line = [&](std::uint64_t l, unsigned seed) {
        const std::vector<char> bytes = pattern(line, seed);
        std::copy(bytes.begin(), bytes.end(), aligned.get());
        ASSERT_EQ(tier->pwrite(h, aligned.get(), line, static_cast<off_t>(l * line)),
                  static_cast<ssize_t>(line));
        std::copy(bytes.begin(), bytes.end(),
                  expected.begin() + static_cast<std::ptrdiff_t>(l * line));
    };
    const auto scan = [&](std::uint64_t first, std::uint64_t last, const char* what) {
        for (std::uint64_t l = first; l <= last; ++l)
            ASSERT_EQ(read_line(l), line_of(expected, l)) << what << ", line " << l;
    };
    scan(32, 47, "first scan");
    ASSERT_GT(resident_lines(home, 40, 40), 0u) << "the old line 40 is in the page cache";
    write_line(40, 1); // alone: through the cache
    ASSERT_EQ(tier->fsync(h), 0);
    // 16 lines alone, away from the lines used below: line 40 leaves the 16-line cache.
    for (const std::uint64_t first : {0u, 48u})
        for (std::uint64_t l = first; l < first + 16; l += 2)
            ASSERT_EQ(read_line(l), line_of(expected, l)) << "line " << l;
    scan(32, 47, "second scan");

    for (std::uint64_t l = 16; l < 32; ++l)
        write_line(l, 100 + static_cast<unsigned>(l)); // a stream: all but its first 4 bypassed
    EXPECT_EQ(tier->stats().bypassed_bytes, 36 * line) << "each scan's and the stream's last 12";
    for (const std::uint64_t l : {21u, 25u, 29u}) // alone: filled by direct reads
        ASSERT_EQ(read_line(l), line_of(expected, l)) << "cached read, line " << l;
    ASSERT_EQ(tier->close(h), 0);
    tier.reset();
    EXPECT_EQ(test_support::read_file(home), expected);
}

// The simulator (SimConfig::sequential_cutoff) decides the bypass as the engine does: the same
// lines go past the cache, and the others hit and miss alike. Scans that restart, run through
// cached lines, and single reads between them.
TEST_F(BypassOnDisk, TheSimulatorBypassesTheLinesTheEngineBypasses) {
    std::vector<std::uint64_t> lines;
    for (std::uint64_t l = 0; l < 24; ++l)
        lines.push_back(l); // a scan: 20 bypassed
    for (const std::uint64_t l : {50u, 2u, 60u, 3u, 2u})
        lines.push_back(l); // single reads
    for (std::uint64_t l = 1; l < 12; ++l)
        lines.push_back(l); // through cached lines
    for (std::uint64_t l = 40; l < 64; l += 2)
        lines.push_back(l); // a strided run: cached
    for (std::uint64_t l = 30; l < 64; ++l)
        lines.push_back(l); // a second scan
    Trace trace;
    trace.kind = TraceKind::blocks;
    for (const std::uint64_t l : lines) {
        ASSERT_EQ(read_line(l), line_of(data, l)) << "line " << l;
        trace.requests.push_back(Request{l * line, static_cast<std::uint32_t>(line), false});
    }
    SimConfig sim;
    sim.policy = "lru";
    sim.cache_size = 16 * line;
    sim.line_size = line;
    sim.sequential_cutoff = 4 * line;
    sim.home_file_size = data.size();
    const SimResult predicted = simulate(trace, sim);
    const TierStats measured = tier->stats();
    EXPECT_EQ(predicted.bypassed_bytes, measured.bypassed_bytes);
    EXPECT_EQ(predicted.hits, measured.read_hits);
    EXPECT_EQ(predicted.misses, measured.read_misses);
    EXPECT_EQ(predicted.hits + predicted.misses + predicted.bypassed_references, lines.size());
    EXPECT_GT(predicted.bypassed_references, 30u) << "most of both scans";
    EXPECT_GT(predicted.hits, 5u) << "cached lines inside a bypassed scan are hits";
}

} // namespace
} // namespace iosig::tier
