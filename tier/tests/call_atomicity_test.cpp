// Each read, write and truncate of a file through the engine is one step for the others, as POSIX
// asks of them on a regular file (XSH 2.9.7) and as the kernel gives writers (the inode lock): two
// writes of overlapping ranges never interleave line by line, a read never returns part of a
// write, and a read sees a truncate wholly or not at all. Every call in these tests fills its
// range with one byte value, so a range that is not uniform is a call that was split.
#include "engine_fixture.hpp"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <gtest/gtest.h>
#include <thread>

namespace iosig::tier {
namespace {

using test_support::read_file;
using test_support::ScratchDir;
using test_support::small_config;

constexpr std::size_t line = 4096;
// A range over four lines, the first and the last only in part.
constexpr off_t range_begin = line / 2;
constexpr std::size_t range_bytes = 3 * line;

bool uniform(const std::vector<char>& bytes, std::size_t count) {
    return std::all_of(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(count),
                       [&](char c) { return c == bytes[0]; });
}

// A thread reading [offset, offset + count) of `h` until stopped, counting reads that are not
// uniform or are neither of the sizes `whole` allows (split()).
class UniformReader : public test_support::ReaderThread {
public:
    template <typename Whole>
    UniformReader(TierCache& tier, int h, off_t offset, std::size_t count, Whole whole)
        : ReaderThread([&tier, h, offset, count, whole,
                        buffer = std::vector<char>(count)]() mutable -> std::optional<bool> {
              const ssize_t n = tier.pread(h, buffer.data(), count, offset);
              if (n <= 0) return std::nullopt; // before the first write
              return whole(static_cast<std::size_t>(n)) &&
                     uniform(buffer, static_cast<std::size_t>(n));
          }) {}
    std::uint64_t split() const { return unexpected(); }
};

// Four writers fill the same range at once, each write with a value of its own, round after round;
// two readers read it meanwhile. After every round the range must hold one value: the last write's.
// The cache file's writes are slowed, so that a write takes a while per line and another call
// would find it half done.
void expect_overlapping_writes_whole(TierConfig config, const ScratchDir& dir) {
    constexpr unsigned writers = 4, rounds = 60;
    config.faults = config.faults ? config.faults : std::make_shared<IoFaults>();
    config.faults->slow_down(FileRole::cache, std::chrono::microseconds(100));
    auto tier = TierCache::open(config);
    const auto home = dir / "shared.dat";
    const int h = tier->open_file(home, O_RDWR | O_CREAT);
    ASSERT_GE(h, 0);
    std::vector<char> zeros(16 * line, 0);
    ASSERT_EQ(tier->pwrite(h, zeros.data(), zeros.size(), 0), static_cast<ssize_t>(zeros.size()));

    std::atomic<std::uint64_t> errors{0};
    std::uint64_t interleaved_rounds = 0;
    std::vector<char> got(range_bytes);
    auto check_round = [&]() noexcept {
        if (tier->pread(h, got.data(), range_bytes, range_begin) !=
            static_cast<ssize_t>(range_bytes))
            errors.fetch_add(1);
        else if (!uniform(got, range_bytes))
            ++interleaved_rounds;
    };
    std::barrier round_done(writers, check_round);
    {
        auto exact = [](std::size_t n) { return n == range_bytes; };
        UniformReader first(*tier, h, range_begin, range_bytes, exact);
        UniformReader second(*tier, h, range_begin, range_bytes, exact);
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < writers; ++t) {
            threads.emplace_back([&, t] {
                std::vector<char> data(range_bytes);
                for (unsigned r = 0; r < rounds; ++r) {
                    std::fill(data.begin(), data.end(), static_cast<char>(1 + t * rounds + r));
                    if (tier->pwrite(h, data.data(), range_bytes, range_begin) !=
                        static_cast<ssize_t>(range_bytes))
                        errors.fetch_add(1);
                    round_done.arrive_and_wait();
                }
            });
        }
        for (auto& thread : threads)
            thread.join();
        first.stop();
        second.stop();
        EXPECT_GT(first.reads() + second.reads(), 10u);
        EXPECT_EQ(first.split() + second.split(), 0u) << "reads that returned part of a write";
    }
    EXPECT_EQ(errors.load(), 0u);
    EXPECT_EQ(interleaved_rounds, 0u) << "rounds after which two writes were interleaved";
    ASSERT_EQ(tier->close(h), 0);
    const std::vector<char> on_home = read_file(home);
    ASSERT_EQ(on_home.size(), zeros.size());
    EXPECT_TRUE(std::equal(got.begin(), got.end(), on_home.begin() + range_begin))
        << "the home file differs from what was read through the cache";
}

TEST(CallAtomicity, OverlappingWritesThroughTheCacheAreEachWhole) {
    ScratchDir dir;
    TierConfig config = small_config(dir, 8); // half the file: evictions and fills
    config.max_dirty_lines = 4;
    config.writeback_delay = 0.001;
    expect_overlapping_writes_whole(config, dir);
}

TEST(CallAtomicity, OverlappingWritesPastTheCacheAreEachWhole) {
    ScratchDir dir;
    // Every write is longer than the cutoff: it goes home past the cache, a line at a time.
    expect_overlapping_writes_whole(
        test_support::past_cache_config(dir, line, std::chrono::microseconds(100)), dir);
}

// A writer fills four lines with a new value and truncates the file into its second line, over
// and over; readers read the four lines. Each read must return the file before the truncate (four
// lines of one value) or after it (the kept part, of one value): a read that took the size before
// the truncate and read lines after it would return zeros, or the next write's bytes, for them.
TEST(CallAtomicity, AReadSeesATruncateWhollyOrNotAtAll) {
    constexpr off_t kept = line + 100;
    constexpr std::size_t whole = 4 * line;
    ScratchDir dir;
    TierConfig config = small_config(dir, 8);
    config.faults = std::make_shared<IoFaults>();
    config.faults->slow_down(FileRole::cache, std::chrono::microseconds(100));
    auto tier = TierCache::open(config);
    const int h = tier->open_file(dir / "cut.dat", O_RDWR | O_CREAT);
    ASSERT_GE(h, 0);
    std::uint64_t reads = 0, split = 0, errors = 0;
    {
        auto before_or_after = [](std::size_t n) {
            return n == whole || n == static_cast<std::size_t>(kept);
        };
        UniformReader first(*tier, h, 0, whole, before_or_after);
        UniformReader second(*tier, h, 0, whole, before_or_after);
        std::vector<char> data(whole);
        for (unsigned i = 0; i < 150; ++i) {
            std::fill(data.begin(), data.end(), static_cast<char>(1 + i % 250));
            if (tier->pwrite(h, data.data(), whole, 0) != static_cast<ssize_t>(whole)) ++errors;
            if (tier->ftruncate(h, kept) != 0) ++errors;
        }
        first.stop();
        second.stop();
        reads = first.reads() + second.reads();
        split = first.split() + second.split();
    }
    EXPECT_EQ(errors, 0u);
    EXPECT_GT(reads, 10u);
    EXPECT_EQ(split, 0u) << "reads that saw part of a truncate or of a write";
    ASSERT_EQ(tier->close(h), 0);
    EXPECT_EQ(read_file(dir / "cut.dat").size(), static_cast<std::size_t>(kept));
}

} // namespace
} // namespace iosig::tier
