// IO runs (TierConfig::io_run_bytes). Fill runs: a read that misses several adjacent lines fetches
// them from the home file in one IO, the simulator counts the same home reads, and the model
// charges one IO per run instead of one per line. Write runs: a write-back batch writes adjacent
// dirty lines home in one IO (through io_uring, or pwritev when faults are injected), a failed run
// keeps all of its lines dirty, and the flusher's replay counts the same writes.
#include "engine_fixture.hpp"
#include "iosig/tier/io.hpp"
#include "iosig/tier/simulator.hpp"
#include "iosig/tier/tier_prediction.hpp"
#include "iosig/tier/writeback_model.hpp"

#include <chrono>
#include <fcntl.h>
#include <functional>
#include <gtest/gtest.h>
#include <numeric>
#include <random>
#include <thread>

namespace iosig::tier {
namespace {

using test_support::pattern;
using test_support::ScratchDir;
using test_support::small_config;
using test_support::write_file;

constexpr std::uint64_t line = 4096;

std::vector<char> read_range(TierCache& tier, int h, std::size_t count, off_t offset) {
    std::vector<char> v(count);
    EXPECT_EQ(tier.pread(h, v.data(), count, offset), static_cast<ssize_t>(count));
    return v;
}

std::vector<char> slice(const std::vector<char>& data, std::size_t from, std::size_t count) {
    return {data.begin() + static_cast<std::ptrdiff_t>(from),
            data.begin() + static_cast<std::ptrdiff_t>(from + count)};
}

// A home file of `bytes` pattern bytes behind a fresh engine of 32 lines (its configuration
// adjusted by `configure`), open for reading and writing.
struct HomeBehindTier {
    HomeBehindTier(std::size_t bytes, unsigned seed,
                   const std::function<void(TierConfig&)>& configure = {})
        : data(pattern(bytes, seed)) {
        write_file(home, data);
        TierConfig config = small_config(dir, 32);
        if (configure) configure(config);
        tier = TierCache::open(config);
        h = tier->open_file(home, O_RDWR);
    }
    ScratchDir dir;
    std::filesystem::path home = dir / "in.dat";
    std::vector<char> data;
    std::unique_ptr<TierCache> tier;
    int h = -1;
};

std::function<void(TierConfig&)> io_runs_of(std::uint64_t bytes,
                                            std::shared_ptr<IoFaults> faults = nullptr) {
    return [=](TierConfig& c) {
        c.io_run_bytes = bytes;
        c.faults = faults;
    };
}

TEST(FillRuns, AReadOverMissingLinesFetchesThemInOneHomeRead) {
    HomeBehindTier t(16 * line, 7);
    ASSERT_GE(t.h, 0);
    EXPECT_EQ(read_range(*t.tier, t.h, 16 * line, 0), t.data);
    EXPECT_EQ(t.tier->stats().fills, 16u);
    EXPECT_EQ(t.tier->stats().fill_reads, 1u);
    EXPECT_EQ(read_range(*t.tier, t.h, 16 * line, 0), t.data) << "now from the cache";
    EXPECT_EQ(t.tier->stats().read_hits, 16u);
    EXPECT_EQ(t.tier->stats().fill_reads, 1u);
}

// A line the cache holds splits the run: the lines before it and the lines after it are two reads.
TEST(FillRuns, ACachedLineSplitsTheRun) {
    HomeBehindTier t(16 * line, 8);
    EXPECT_EQ(read_range(*t.tier, t.h, line, 8 * line), slice(t.data, 8 * line, line));
    EXPECT_EQ(read_range(*t.tier, t.h, 16 * line - 100, 50), slice(t.data, 50, 16 * line - 100));
    EXPECT_EQ(t.tier->stats().fills, 16u);
    EXPECT_EQ(t.tier->stats().fill_reads, 3u); // line 8, then lines 0-7 and 9-15
}

// The run is bounded by io_run_bytes (0 or one line: a read per line) and by the home file's end,
// after which the lines read as zeros.
TEST(FillRuns, RunsStopAtTheirSizeLimitAndAtTheEndOfTheHomeFile) {
    for (const auto& [run_bytes, reads] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{
             {0, 16}, {4 * line, 4}, {1 << 20, 1}}) {
        HomeBehindTier t(16 * line, 9, io_runs_of(run_bytes));
        EXPECT_EQ(read_range(*t.tier, t.h, 16 * line, 0), t.data);
        EXPECT_EQ(t.tier->stats().fill_reads, reads) << "io_run_bytes " << run_bytes;
    }
    HomeBehindTier t(5 * line + 100, 10);
    EXPECT_EQ(read_range(*t.tier, t.h, t.data.size(), 0), t.data);
    EXPECT_EQ(t.tier->stats().fills, 6u);
    EXPECT_EQ(t.tier->stats().fill_reads, 1u);
    // The tail of the last line is zeros in the cache: growing the file shows them.
    ASSERT_EQ(t.tier->ftruncate(t.h, 6 * line), 0);
    EXPECT_EQ(read_range(*t.tier, t.h, line - 100, 5 * line + 100),
              std::vector<char>(line - 100, 0));
}

// A write that reaches the home file while a read's run is being filled (here: a long sequential
// write, which bypasses the cache) makes the lines the run fetched before it stale: they are
// fetched again, and the cache never holds the old bytes. The write cannot touch the bytes the read
// returns (those two calls are one step each for the other, CallAtomicity.*), but it can touch the
// rest of the read's last line, which the run fetched with it.
TEST(FillRuns, AWriteDuringTheRunIsNotServedStale) {
    auto faults = std::make_shared<IoFaults>();
    // Every line the reader puts into the cache file takes 200 ms: the writer acts meanwhile.
    faults->slow_down(FileRole::cache, std::chrono::milliseconds(200));
    HomeBehindTier t(8 * line, 11, [&](TierConfig& c) {
        c.faults = faults;
        c.sequential_cutoff = 8 * line; // the reader's 8 lines go through the cache, the
                                        // writer's 9 lines bypass it
    });
    const int writer = t.tier->open_file(t.home, O_RDWR);
    ASSERT_GE(t.h, 0);
    ASSERT_GE(writer, 0);
    const auto fresh = pattern(9 * line, 12);
    constexpr off_t read_end = 7 * line + 1; // lines 0-7, the last one's first byte
    const std::uint64_t home_reads = faults->reads(FileRole::home);
    std::thread read_thread([&] { read_range(*t.tier, t.h, read_end, 0); });
    // The reader's run read has begun (its generation taken before it): from here it puts line 0
    // into the cache file, slowly, and has not yet looked at lines 1-7.
    for (int i = 0; i < 5000 && faults->reads(FileRole::home) == home_reads; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_EQ(t.tier->pwrite(writer, fresh.data(), fresh.size(), read_end),
              static_cast<ssize_t>(fresh.size()));
    read_thread.join();
    EXPECT_EQ(t.tier->stats().fill_reads, 2u) << "lines 1-7 were fetched again after the write";
    EXPECT_EQ(t.tier->stats().fills, 8u);
    EXPECT_EQ(t.tier->stats().bypassed_bytes, fresh.size());
    const int check = t.tier->open_file(t.home, O_RDONLY);
    std::vector<char> line7 = slice(t.data, 7 * line, 1);
    line7.insert(line7.end(), fresh.begin(), fresh.begin() + line - 1);
    EXPECT_EQ(read_range(*t.tier, check, line, 7 * line), line7);
    EXPECT_EQ(read_range(*t.tier, check, 7 * line, 0), slice(t.data, 0, 7 * line));
    EXPECT_EQ(t.tier->stats().fills, 8u) << "both from the cache";
}

// The simulator counts the engine's home reads request by request: random reads of 1-20 lines
// over a 64-line file through a 16-line LRU cache.
TEST(FillRuns, TheSimulatorCountsTheEnginesHomeReads) {
    ScratchDir dir;
    const auto home = dir / "in.dat";
    const auto data = pattern(64 * line, 13);
    write_file(home, data);
    Trace trace;
    trace.kind = TraceKind::blocks;
    std::mt19937 rng(5);
    for (int i = 0; i < 300; ++i) {
        const std::uint64_t first = rng() % 60, lines = 1 + rng() % 20;
        const std::uint64_t offset = first * line + rng() % line;
        const std::uint64_t size = std::min<std::uint64_t>(lines * line, 64 * line - offset);
        trace.requests.push_back(Request{offset, static_cast<std::uint32_t>(size), false});
    }
    for (const std::uint64_t run_bytes : {std::uint64_t{0}, 8 * line, std::uint64_t{1} << 20}) {
        TierConfig config = small_config(dir, 16);
        config.io_run_bytes = run_bytes;
        auto tier = TierCache::open(config);
        const int h = tier->open_file(home, O_RDONLY);
        for (const Request& r : trace.requests)
            ASSERT_EQ(read_range(*tier, h, r.size, static_cast<off_t>(r.id)),
                      slice(data, r.id, r.size));
        SimConfig sim;
        sim.cache_size = 16 * line;
        sim.line_size = line;
        sim.fills_per_request = true;
        sim.io_run_bytes = run_bytes;
        const SimResult predicted = simulate(trace, sim);
        const TierStats stats = tier->stats();
        EXPECT_EQ(stats.fills, predicted.read_misses);
        EXPECT_EQ(stats.fill_reads,
                  std::accumulate(predicted.request_fill_reads.begin(),
                                  predicted.request_fill_reads.end(), std::uint64_t{0}))
            << "io_run_bytes " << run_bytes;
        if (run_bytes == 0) EXPECT_EQ(stats.fill_reads, stats.fills);
        if (run_bytes == 1 << 20) EXPECT_LT(stats.fill_reads * 3, stats.fills);
        tier->close(h);
    }
}

// A run of k lines costs one IO of k lines at the home device's rate for that size, on the
// foreground's clock and in Eq. 2: with a 5 ms IO and 20 MiB/s, 16 lines in one read take
// 5 ms + 64 KiB / 20 MiB/s = 8.125 ms, one read per line 16 x 5.195 ms = 83.1 ms.
TEST(FillRuns, TheModelChargesOneIoPerRun) {
    TierRates rates{1e6, 1e6, 1 / (0.005 + 4096.0 / (20 << 20)), 200, true, {}};
    rates.tier2_read_io = [](std::uint64_t bytes) {
        return 1 / (0.005 + static_cast<double>(bytes) / (20 << 20));
    };
    EXPECT_NEAR(fetch_seconds(rates, 16, 1, line), 0.008125, 1e-9);
    EXPECT_NEAR(fetch_seconds(rates, 16, 16, line), 16 * (0.005 + 4096.0 / (20 << 20)), 1e-9);
    EXPECT_NEAR(fetch_seconds(rates, 16, 2, line), 2 * (0.005 + 8 * 4096.0 / (20 << 20)), 1e-9);
    EXPECT_EQ(fetch_seconds(rates, 0, 0, line), 0);
    TierRates per_line = rates;
    per_line.tier2_read_io = nullptr;
    EXPECT_NEAR(fetch_seconds(per_line, 16, 1, line), 16 / rates.tier2_read, 1e-12);

    Trace trace;
    trace.kind = TraceKind::blocks;
    trace.requests.push_back(Request{0, 16 * line, false});
    WritebackModelConfig writeback;
    writeback.line_size = line;
    const std::vector<std::uint32_t> fills{16}, one_read{1}, sixteen_reads{16};
    const TierPrediction run = predict_tier_time(trace, 16, rates, writeback, &fills, &one_read);
    const TierPrediction per_line_reads =
        predict_tier_time(trace, 16, rates, writeback, &fills, &sixteen_reads);
    const TierPrediction no_counts = predict_tier_time(trace, 16, rates, writeback, &fills);
    EXPECT_NEAR(run.seconds, 0.008125, 1e-9); // Eq. 3: the fetch outlasts 16 tier-1 reads
    // The request waits for the fetch, the 16 lines' writes into tier 1 and its reads of them.
    EXPECT_NEAR(run.foreground_seconds, 0.008125 + 16 / 1e6 + 16 / 1e6, 1e-9);
    EXPECT_NEAR(per_line_reads.seconds, no_counts.seconds, 1e-12);
    EXPECT_GT(per_line_reads.seconds, 10 * run.seconds);
    const std::vector<std::uint32_t> wrong_length{1, 1};
    EXPECT_THROW(predict_tier_time(trace, 16, rates, writeback, &fills, &wrong_length),
                 std::invalid_argument);
}

// Dirty lines written with fsync: adjacent ones of a batch go home in one write, whether the
// flusher uses io_uring or (with fault injection) pwritev.
TEST(WriteRuns, AdjacentDirtyLinesGoHomeInOneWrite) {
    for (const bool injected : {false, true}) {
        for (const auto& [run_bytes, writes] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{
                 {1 << 20, 2}, {4 * line, 3}, {0, 12}}) {
            HomeBehindTier t(
                16 * line, 14,
                io_runs_of(run_bytes, injected ? std::make_shared<IoFaults>() : nullptr));
            const auto first = pattern(8 * line, 15), second = pattern(4 * line, 16);
            ASSERT_EQ(t.tier->pwrite(t.h, first.data(), first.size(), 0),
                      static_cast<ssize_t>(first.size()));
            ASSERT_EQ(t.tier->pwrite(t.h, second.data(), second.size(), 12 * line),
                      static_cast<ssize_t>(second.size()));
            ASSERT_EQ(t.tier->fsync(t.h), 0);
            const TierStats s = t.tier->stats();
            EXPECT_EQ(s.writebacks, 12u);
            EXPECT_EQ(s.writeback_writes, writes)
                << "io_run_bytes " << run_bytes << (injected ? ", pwritev" : ", io_uring");
            EXPECT_EQ(s.io_uring, !injected);
            auto expected = t.data;
            std::copy(first.begin(), first.end(), expected.begin());
            std::copy(second.begin(), second.end(), expected.begin() + 12 * line);
            EXPECT_EQ(test_support::read_file(t.home), expected);
        }
    }
}

// A write run that fails leaves every one of its lines dirty: fsync reports the error, and once
// the device is back the next fsync writes them all.
TEST(WriteRuns, AFailedRunKeepsAllItsLinesDirty) {
    auto faults = std::make_shared<IoFaults>();
    HomeBehindTier t(8 * line, 17, io_runs_of(1 << 20, faults));
    const auto fresh = pattern(8 * line, 18);
    ASSERT_EQ(t.tier->pwrite(t.h, fresh.data(), fresh.size(), 0),
              static_cast<ssize_t>(fresh.size()));
    faults->fail_nth_write(1, {FileRole::home});
    EXPECT_EQ(t.tier->fsync(t.h), -EIO);
    EXPECT_EQ(t.tier->stats().dirty_lines, 8u);
    EXPECT_EQ(test_support::read_file(t.home), t.data) << "nothing of the failed run went home";
    faults->clear_failures();
    ASSERT_EQ(t.tier->fsync(t.h), 0);
    EXPECT_EQ(t.tier->stats().dirty_lines, 0u);
    EXPECT_EQ(test_support::read_file(t.home), fresh);
    EXPECT_EQ(t.tier->stats().writeback_writes, 2u)
        << "the failed write and the one that went home";
}

// The flusher's replay makes the same writes: one per run of adjacent lines in a batch (sorted),
// at write_cost line writes each; unset, a run costs a write per line.
TEST(WriteRuns, TheFlusherReplayCountsOneWritePerRun) {
    Trace trace;
    trace.kind = TraceKind::blocks;
    trace.requests.push_back(Request{8 * line, 8 * line, true}); // lines 8-15
    trace.requests.push_back(Request{0, 4 * line, true});        // lines 0-3
    trace.requests.push_back(Request{20 * line, line, true});    // line 20
    WritebackModelConfig config;
    config.line_size = line;
    config.max_dirty_lines = 1000;
    config.writeback_rate = 100; // line writes per second
    const WritebackEstimate plain = estimate_writebacks(trace, 0.0, config);
    EXPECT_EQ(plain.writebacks, 13u);
    EXPECT_EQ(plain.writes, 3u);
    EXPECT_DOUBLE_EQ(plain.write_units, 13);
    EXPECT_DOUBLE_EQ(plain.seconds, 0.14); // 13 line writes and one sync at close
    config.write_cost = [](std::uint64_t bytes) { return 0.5 + 0.5 * bytes / line; };
    const WritebackEstimate runs = estimate_writebacks(trace, 0.0, config);
    EXPECT_EQ(runs.writes, 3u);
    EXPECT_DOUBLE_EQ(runs.write_units, (0.5 + 4) + (0.5 + 2) + (0.5 + 0.5));
    config.io_run_bytes = 0;
    const WritebackEstimate lines = estimate_writebacks(trace, 0.0, config);
    EXPECT_EQ(lines.writes, 13u);
    EXPECT_DOUBLE_EQ(lines.write_units, 13);
}

// Runs with O_DIRECT (a disk file system, not the tmpfs the other tests use): random reads and
// writes of 1-20 lines at unaligned offsets through a 16-line cache, fsync now and then, against a
// plain copy of the file; every byte read and the home file at the end equal the copy, through
// io_uring and through pwritev.
TEST(IoRuns, DirectIoOnADiskFileSystemKeepsEveryByte) {
    const ScratchDir disk(ScratchDir::On::disk);
    const std::filesystem::path& base = disk.path();
    if (!disk.direct_io())
        GTEST_SKIP() << base << " has no O_DIRECT (tmpfs?): the direct-IO paths cannot run here";
    for (const bool injected : {false, true}) {
        const auto home = base / "home.dat";
        auto expected = pattern(64 * line, 19);
        write_file(home, expected);
        TierConfig config;
        config.cache_file = base / "cache.tier";
        config.cache_size = 16 * line;
        config.line_size = line;
        config.writeback_delay = 0.01; // the flusher writes batches while the test runs
        config.sequential_cutoff = 0;
        if (injected) config.faults = std::make_shared<IoFaults>();
        auto tier = TierCache::open(config);
        const int h = tier->open_file(home, O_RDWR);
        ASSERT_GE(h, 0);
        std::mt19937 rng(injected ? 21 : 20);
        for (int i = 0; i < 400; ++i) {
            const std::size_t offset = rng() % (60 * line), size = 1 + rng() % (20 * line);
            const std::size_t count = std::min(size, 64 * line - offset);
            if (rng() % 2 == 0) {
                ASSERT_EQ(read_range(*tier, h, count, static_cast<off_t>(offset)),
                          slice(expected, offset, count))
                    << "read " << i;
            } else {
                const auto bytes = pattern(count, 100 + static_cast<unsigned>(i));
                ASSERT_EQ(tier->pwrite(h, bytes.data(), count, static_cast<off_t>(offset)),
                          static_cast<ssize_t>(count));
                std::copy(bytes.begin(), bytes.end(),
                          expected.begin() + static_cast<std::ptrdiff_t>(offset));
            }
            if (i % 50 == 49) ASSERT_EQ(tier->fsync(h), 0);
        }
        ASSERT_EQ(tier->close(h), 0);
        const TierStats s = tier->stats();
        tier.reset();
        EXPECT_EQ(test_support::read_file(home), expected) << (injected ? "pwritev" : "io_uring");
        EXPECT_LT(s.fill_reads, s.fills) << "some reads fetched several lines at once";
        EXPECT_LT(s.writeback_writes, s.writebacks) << "some write-backs wrote several lines";
        std::filesystem::remove(home);
        std::filesystem::remove(config.cache_file);
    }
}

} // namespace
} // namespace iosig::tier
