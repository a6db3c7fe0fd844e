// ftruncate racing the engine's other work on the same file: fills for readers and the flusher's
// write-backs. A truncate is one step for everyone else: no line it removes comes back, neither in
// the cache (a fill that read the old bytes) nor in the home file (a write-back that read them).
#include "engine_fixture.hpp"

#include <atomic>
#include <chrono>
#include <gtest/gtest.h>
#include <optional>
#include <random>
#include <thread>

namespace iosig::tier {
namespace {

using test_support::past_cache_config;
using test_support::pattern;
using test_support::read_file;
using test_support::ScratchDir;
using test_support::small_config;
using test_support::write_file;

constexpr std::size_t line = 4096;

// A thread reading the first `bytes` of random lines among the first `lines` lines of `h` until it
// is stopped, counting the reads that fail (errors()).
class RandomReader : public test_support::ReaderThread {
public:
    RandomReader(TierCache& tier, int h, std::size_t lines, unsigned seed, std::size_t bytes = line)
        : ReaderThread([&tier, h, lines, bytes, rng = std::mt19937(seed),
                        buffer = std::vector<char>(bytes)]() mutable -> std::optional<bool> {
              const auto offset = static_cast<off_t>((rng() % lines) * line);
              return tier.pread(h, buffer.data(), bytes, offset) >= 0;
          }) {}
    std::uint64_t errors() const { return unexpected(); }
};

bool all_zero(const std::vector<char>& bytes) {
    return std::all_of(bytes.begin(), bytes.end(), [](char c) { return c == 0; });
}

// The file is cut to half a line while a reader's fill of line 0 (for the half that is kept, a
// call the truncate does not wait for) has read the line's old bytes from the home file and is
// putting them into the slow cache file. When the file grows back, every byte beyond the half must
// read as zero: a fill that read the old bytes and stayed in the cache would return them.
TEST(TruncateRace, ALineFilledWhileTheFileIsTruncatedIsNotKept) {
    constexpr std::size_t file_lines = 4, kept = line / 2;
    unsigned truncates_during_fills = 0;
    for (unsigned round = 0; round < 12; ++round) {
        ScratchDir dir;
        auto config = small_config(dir, file_lines);
        config.faults = std::make_shared<IoFaults>();
        config.faults->slow_down(FileRole::cache, std::chrono::microseconds(4000));
        const auto home = dir / "filled.dat";
        const auto data = pattern(file_lines * line, round + 1);
        write_file(home, data);
        auto tier = TierCache::open(config);
        const int h = tier->open_file(home, O_RDWR);
        ASSERT_GE(h, 0);
        RandomReader reader(*tier, h, 1, round + 100, kept); // its first read fills line 0
        usleep(1000 + (round % 4) * 500);
        if (reader.reads() == 0) ++truncates_during_fills;
        ASSERT_EQ(tier->ftruncate(h, kept), 0);
        ASSERT_EQ(tier->ftruncate(h, static_cast<off_t>(file_lines * line)), 0);
        reader.stop();
        EXPECT_EQ(reader.errors(), 0u);
        std::vector<char> got(file_lines * line);
        ASSERT_EQ(tier->pread(h, got.data(), got.size(), 0), static_cast<ssize_t>(got.size()));
        EXPECT_TRUE(std::equal(data.begin(), data.begin() + kept, got.begin()))
            << "round " << round;
        EXPECT_TRUE(all_zero({got.begin() + kept, got.end()}))
            << "round " << round << ": old bytes came back from the cache";
        ASSERT_EQ(tier->close(h), 0);
        EXPECT_EQ(read_file(home), got) << "round " << round;
    }
    if (truncates_during_fills == 0)
        GTEST_SKIP() << "every fill was done before its truncate (a loaded machine): no race";
}

// A writer streams lines 0 and 1 of an empty file with a 1-line cutoff, so line 1 goes home past
// the cache, slowly (4 ms); the file is truncated to 0 meanwhile. The write is wholly before the
// truncate (the file is empty) or wholly after it (two lines, line 1 the writer's): never a file
// whose size counts line 1 while its bytes read as zeros. Here the write is usually under way
// when the truncate begins, and the truncate must wait for it.
TEST(TruncateRace, AWriteHomePastTheCacheIsWhollyBeforeOrAfterTheTruncate) {
    for (unsigned round = 0; round < 12; ++round) {
        ScratchDir dir;
        // Each journal record takes 3 ms: a write home that starts as the truncate begins its
        // records lands between the truncate taking the new size and cutting the home file.
        const auto config = past_cache_config(dir, line, std::chrono::microseconds(4000),
                                              std::chrono::microseconds(3000));
        const auto home = dir / "streamed.dat";
        const auto data = pattern(2 * line, round + 300);
        std::vector<char> got;
        {
            auto tier = TierCache::open(config);
            const int h = tier->open_file(home, O_RDWR | O_CREAT);
            std::thread stream([&] {
                EXPECT_EQ(tier->pwrite(h, data.data(), line, 0), static_cast<ssize_t>(line));
                EXPECT_EQ(tier->pwrite(h, data.data() + line, line, line),
                          static_cast<ssize_t>(line));
            });
            usleep(300 + round * 350); // before, during and after line 0
            ASSERT_EQ(tier->ftruncate(h, 0), 0);
            stream.join();
            got.resize(static_cast<std::size_t>(tier->file_size(h)));
            ASSERT_EQ(tier->pread(h, got.data(), got.size(), 0), static_cast<ssize_t>(got.size()));
            ASSERT_EQ(tier->close(h), 0);
        }
        if (!got.empty()) { // the truncate came first
            ASSERT_EQ(got.size(), 2 * line) << "round " << round;
            EXPECT_TRUE(std::equal(got.begin() + line, got.end(), data.begin() + line))
                << "round " << round << ": line 1 lost the write";
        }
        EXPECT_EQ(read_file(home), got) << "round " << round;
    }
}

// The other order: a reader holds line 0 (slow cache reads keep its shared lock for 5 ms), so the
// truncate to 0 has begun and waits for that line when the writer's line 1 (past the cache, 4 ms)
// starts. The write must wait for the truncate: written meanwhile, it lands between the truncate
// taking the new size and cutting the home file (its records take 3 ms), and the file counted
// line 1 while its bytes read as zeros.
TEST(TruncateRace, AWriteHomePastTheCacheWaitsForATruncateUnderWay) {
    for (unsigned round = 0; round < 6; ++round) {
        ScratchDir dir;
        const auto config = past_cache_config(dir, line, std::chrono::microseconds(4000),
                                              std::chrono::microseconds(3000));
        config.faults->slow_down_reads(FileRole::cache, std::chrono::microseconds(5000));
        const auto home = dir / "held.dat";
        write_file(home, pattern(line, round + 400));
        const auto data = pattern(line, round + 500);
        std::vector<char> got;
        {
            auto tier = TierCache::open(config);
            const int writer = tier->open_file(home, O_RDWR);
            const int reader = tier->open_file(home, O_RDONLY);
            // The writer's stream reaches line 1 with 1 byte in line 0: line 1 is past the cutoff.
            ASSERT_EQ(tier->pwrite(writer, "x", 1, line - 1), 1);
            std::vector<char> held(line);
            std::thread hold([&] {
                EXPECT_GE(tier->pread(reader, held.data(), line, 0), 0); // 0 after the truncate
            });
            std::thread stream([&] {
                usleep(2000);
                EXPECT_EQ(tier->pwrite(writer, data.data(), line, line),
                          static_cast<ssize_t>(line));
            });
            usleep(1000);
            ASSERT_EQ(tier->ftruncate(writer, 0), 0);
            hold.join();
            stream.join();
            got.resize(static_cast<std::size_t>(tier->file_size(writer)));
            ASSERT_EQ(tier->pread(writer, got.data(), got.size(), 0),
                      static_cast<ssize_t>(got.size()));
            ASSERT_EQ(tier->close(writer), 0);
            ASSERT_EQ(tier->close(reader), 0);
        }
        // On a loaded machine the write may still start first; then it is wholly before.
        if (!got.empty()) {
            ASSERT_EQ(got.size(), 2 * line) << "round " << round;
            EXPECT_TRUE(
                std::all_of(got.begin(), got.begin() + line, [](char c) { return c == 0; }));
            EXPECT_TRUE(std::equal(got.begin() + line, got.end(), data.begin()))
                << "round " << round << ": line 1 lost the write";
        }
        EXPECT_EQ(read_file(home), got) << "round " << round;
    }
}

// An append goes at the end of the file as it is when the append happens: one that began before a
// truncate and wrote after it would leave a hole of zeros where the cut bytes were. The appender
// adds 100-byte records of non-zero bytes while the file is cut to 0 now and then; a reader holds
// line 0 meanwhile (5 ms cache reads), so each truncate is under way long enough for an append
// to begin. The file is whole records at every moment, so no byte of it is ever zero.
TEST(TruncateRace, AnAppendIsWhollyBeforeOrAfterATruncate) {
    ScratchDir dir;
    auto config = small_config(dir);
    config.faults = std::make_shared<IoFaults>();
    config.faults->slow_down_reads(FileRole::cache, std::chrono::microseconds(5000));
    auto tier = TierCache::open(config);
    const int h = tier->open_file(dir / "log.dat", O_RDWR | O_CREAT);
    const int reader = tier->open_file(dir / "log.dat", O_RDONLY);
    const std::vector<char> record(100, 'r');
    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> appended{0};
    std::thread appender([&] {
        while (!stop.load()) {
            EXPECT_EQ(tier->append(h, record.data(), record.size()), 100);
            appended.fetch_add(1);
            usleep(100);
        }
    });
    for (int cut = 0; cut < 8; ++cut) {
        usleep(3000);
        std::thread hold([&] {
            std::vector<char> buffer(line);
            EXPECT_GE(tier->pread(reader, buffer.data(), line, 0), 0);
        });
        usleep(500);
        ASSERT_EQ(tier->ftruncate(h, 0), 0);
        hold.join();
    }
    usleep(3000);
    stop = true;
    appender.join();
    EXPECT_GT(appended.load(), 8u);
    std::vector<char> got(static_cast<std::size_t>(tier->file_size(h)));
    ASSERT_EQ(tier->pread(h, got.data(), got.size(), 0), static_cast<ssize_t>(got.size()));
    EXPECT_EQ(got.size() % 100, 0u);
    EXPECT_EQ(std::count(got.begin(), got.end(), 0), 0) << "a hole where cut bytes were";
    ASSERT_EQ(tier->close(h), 0);
    ASSERT_EQ(tier->close(reader), 0);
    EXPECT_EQ(read_file(dir / "log.dat"), got);
}

// Who writes the dirty lines home while the file is truncated.
enum class WriteBack { flusher, fsync_thread };

// The file is cut to half a line while its lines are written back: by the flusher (due after
// 1 ms) or by another thread's fsync, 2 ms a home write. In every other round a reader reads the
// half of line 0 that is kept, over and over (slow cache reads keep its shared lock for 5 ms): a
// call on bytes the truncate does not cut goes on beside it, so the truncate waits for line 0's
// data lock with the lines after it still dirty, and write-backs may start meanwhile; in the other
// rounds the truncate may begin with a write-back under way. No write-back of a line the truncate
// removes may reach the home file after it, and the engine's count of dirty lines must stay exact
// (a line cleaned twice wraps it around).
void truncate_while_written_back(WriteBack who) {
    constexpr std::size_t file_lines = 16, kept = line / 2;
    for (unsigned round = 0; round < 12; ++round) {
        ScratchDir dir;
        auto config = small_config(dir, 32);
        if (who == WriteBack::flusher) config.writeback_delay = 0.001;
        config.max_dirty_lines = 32; // no pressure: the lines wait for their delay
        config.faults = std::make_shared<IoFaults>();
        config.faults->slow_down_reads(FileRole::cache, std::chrono::microseconds(5000));
        config.faults->slow_down(FileRole::home, std::chrono::microseconds(2000));
        const auto home = dir / "flushed.dat";
        const auto data = pattern(file_lines * line, round + 7);
        {
            auto tier = TierCache::open(config);
            const int h = tier->open_file(home, O_RDWR | O_CREAT);
            ASSERT_EQ(tier->pwrite(h, data.data(), data.size(), 0),
                      static_cast<ssize_t>(data.size()));
            std::optional<RandomReader> reader;
            if (round % 2 == 0) reader.emplace(*tier, h, 1, round + 200, kept);
            std::atomic<bool> stop{false};
            std::atomic<int> fsync_errors{0};
            std::thread syncer;
            if (who == WriteBack::fsync_thread)
                syncer = std::thread([&] {
                    usleep(500 + (round % 4) * 500);
                    while (!stop.load())
                        if (tier->fsync(h) < 0) fsync_errors.fetch_add(1);
                });
            usleep(1000 + (round % 4) * 700); // before, during and after the first write-back
            ASSERT_EQ(tier->ftruncate(h, kept), 0);
            EXPECT_LE(tier->stats().dirty_lines, 1u) << "round " << round;
            ASSERT_EQ(tier->ftruncate(h, static_cast<off_t>(file_lines * line)), 0);
            stop = true;
            if (syncer.joinable()) syncer.join();
            if (reader) {
                reader->stop();
                EXPECT_EQ(reader->errors(), 0u);
            }
            EXPECT_EQ(fsync_errors.load(), 0);
            ASSERT_EQ(tier->close(h), 0);
            EXPECT_EQ(tier->stats().dirty_lines, 0u) << "round " << round;
        } // the engine is gone: no write-back can still be on its way
        const auto bytes = read_file(home);
        ASSERT_EQ(bytes.size(), file_lines * line) << "round " << round;
        EXPECT_TRUE(std::equal(data.begin(), data.begin() + kept, bytes.begin()))
            << "round " << round << ": the kept half line lost its bytes";
        EXPECT_TRUE(all_zero({bytes.begin() + kept, bytes.end()}))
            << "round " << round << ": a write-back brought data back";
    }
}

TEST(TruncateRace, NoWriteBackByTheFlusherLandsAfterTheTruncate) {
    truncate_while_written_back(WriteBack::flusher);
}

TEST(TruncateRace, NoWriteBackByAnotherThreadsFsyncLandsAfterTheTruncate) {
    truncate_while_written_back(WriteBack::fsync_thread);
}

// A write beyond a truncate's new end, begun once the truncate has taken the new size (it waits
// for the truncate's range hold) and while it zeroes the rest of the line the new end falls in (a
// 20 ms write to the cache file), while the truncate fails at the home file's cut. The write must
// not land beyond the unfinished cut: the next fsync makes the cut again, which would drop the
// write after it was acknowledged. So it fails with EIO, or, had the truncate already failed when
// it began, makes the cut first and stays.
TEST(TruncateRace, AWriteWaitingForATruncateThatFailsDoesNotLandBeyondItsCut) {
    for (int round = 0; round < 4; ++round) {
        ScratchDir dir;
        const auto home = dir / "race.dat";
        write_file(home, pattern(4 * line, 30));
        TierConfig config = small_config(dir);
        config.faults = std::make_shared<IoFaults>();
        auto tier = TierCache::open(config);
        const int h = tier->open_file(home, O_RDWR);
        ASSERT_GE(h, 0);
        char first = 0;
        ASSERT_EQ(tier->pread(h, &first, 1, 0), 1); // line 0 cached: the end falls in it
        config.faults->slow_down(FileRole::cache, std::chrono::milliseconds(20));
        config.faults->fail_one_write(1, {FileRole::home});
        std::atomic<ssize_t> written{0};
        std::thread writer([&] {
            while (tier->file_size(h) != 100)
                std::this_thread::yield();
            written = tier->pwrite(h, "w", 1, 3 * line);
        });
        EXPECT_EQ(tier->ftruncate(h, 100), -EIO);
        writer.join();
        config.faults->slow_down(FileRole::cache, std::chrono::microseconds(0));
        ASSERT_EQ(tier->fsync(h), 0);
        char got = 0;
        const ssize_t n = tier->pread(h, &got, 1, 3 * line);
        if (written.load() == 1) {
            EXPECT_EQ(n, 1) << "round " << round << ": the acknowledged write was cut";
            EXPECT_EQ(got, 'w');
        } else {
            EXPECT_EQ(written.load(), -EIO);
        }
    }
}

} // namespace
} // namespace iosig::tier
