// Threads reading and writing overlapping ranges through one engine: the final file equals the
// serial application of every thread's writes, and no reader ever sees a value that was not
// written to that byte (by its owner, at or before the owner's progress).
#include "engine_fixture.hpp"

#include <atomic>
#include <gtest/gtest.h>
#include <thread>

namespace iosig::tier {
namespace {

using test_support::read_file;
using test_support::ScratchDir;

constexpr std::size_t line = 4096, lines = 64, writers = 4, segment = line / writers;
constexpr unsigned iterations = 250;

// Writer t owns bytes [t*segment, (t+1)*segment) of every line; value injective in the iteration.
unsigned char value_of(std::size_t t, unsigned i, std::size_t offset) {
    return static_cast<unsigned char>((i * 131 + offset * 7 + t * 13) % 251 + 1);
}
// The iteration that wrote `value` at `offset` for writer t (inverse of value_of; 131^-1 mod 251 =
// 23).
unsigned iteration_of(std::size_t t, unsigned char value, std::size_t offset) {
    const long r =
        (static_cast<long>(value) - 1 - static_cast<long>(offset * 7 + t * 13) % 251 + 2 * 251) %
        251;
    return static_cast<unsigned>((r * 23) % 251);
}

void run(const std::string& policy) {
    ScratchDir dir;
    TierConfig config;
    config.cache_file = dir / "cache.tier";
    config.line_size = line;
    config.cache_size = 16 * line; // a quarter of the file: evictions throughout
    config.max_dirty_lines = 8;
    config.writeback_delay = 0.001;
    config.policy = policy;
    config.sequential_cutoff = 0;
    auto tier = TierCache::open(config);
    const auto home = dir / "shared.dat";
    const int h = tier->open_file(home, O_RDWR | O_CREAT);
    ASSERT_GE(h, 0);
    std::vector<char> zeros(lines * line, 0);
    ASSERT_EQ(tier->pwrite(h, zeros.data(), zeros.size(), 0), static_cast<ssize_t>(zeros.size()));

    std::vector<std::vector<unsigned char>> reference(writers,
                                                      std::vector<unsigned char>(lines * line, 0));
    std::array<std::atomic<unsigned>, writers> progress{};
    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> violations{0}, reads{0};
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < writers; ++t) {
        threads.emplace_back([&, t] {
            std::mt19937 rng(static_cast<unsigned>(t) + 1);
            for (unsigned i = 0; i < iterations; ++i) {
                const std::size_t l = rng() % lines;
                const std::size_t len = 1 + rng() % segment;
                const std::size_t off = l * line + t * segment + rng() % (segment - len + 1);
                std::vector<unsigned char> data(len);
                for (std::size_t k = 0; k < len; ++k)
                    data[k] = value_of(t, i, off + k);
                if (tier->pwrite(h, data.data(), len, static_cast<off_t>(off)) !=
                    static_cast<ssize_t>(len))
                    ++violations;
                std::copy(data.begin(), data.end(),
                          reference[t].begin() + static_cast<std::ptrdiff_t>(off));
                progress[t] = i + 1;
                if (i % 50 == 49 && tier->fsync(h) != 0) ++violations;
            }
        });
    }
    for (int r = 0; r < 2; ++r) {
        threads.emplace_back([&, r] {
            std::mt19937 rng(100 + r);
            std::vector<unsigned char> buffer(2 * line);
            while (!stop) {
                const std::size_t len = 1 + rng() % (2 * line);
                const std::size_t off = rng() % (lines * line - len);
                if (tier->pread(h, buffer.data(), len, static_cast<off_t>(off)) !=
                    static_cast<ssize_t>(len)) {
                    ++violations;
                    continue;
                }
                for (std::size_t k = 0; k < len; ++k) {
                    const std::size_t at = off + k, owner = (at % line) / segment;
                    if (buffer[k] == 0) continue;
                    if (iteration_of(owner, buffer[k], at) > progress[owner])
                        ++violations; // write i runs while progress == i
                }
                ++reads;
            }
        });
    }
    for (std::size_t t = 0; t < writers; ++t)
        threads[t].join();
    stop = true;
    for (std::size_t t = writers; t < threads.size(); ++t)
        threads[t].join();
    EXPECT_EQ(violations, 0u) << policy;
    EXPECT_GT(reads, 10u);

    // The serial reference: every writer's own sequence applied to its own bytes.
    std::vector<char> expected(lines * line);
    for (std::size_t b = 0; b < expected.size(); ++b)
        expected[b] = static_cast<char>(reference[(b % line) / segment][b]);
    std::vector<char> got(expected.size());
    ASSERT_EQ(tier->pread(h, got.data(), got.size(), 0), static_cast<ssize_t>(got.size()));
    EXPECT_EQ(got, expected) << policy;
    ASSERT_EQ(tier->close(h), 0);
    EXPECT_EQ(read_file(home), expected) << policy;
    EXPECT_GT(tier->stats().evictions, 0u);
}

TEST(Concurrency, OverlappingThreadsEqualTheSerialReferenceLru) {
    run("lru");
}
TEST(Concurrency, OverlappingThreadsEqualTheSerialReferenceLearner) {
    run("ws");
}
TEST(Concurrency, OverlappingThreadsEqualTheSerialReferenceArc) {
    run("arc");
}

} // namespace
} // namespace iosig::tier
