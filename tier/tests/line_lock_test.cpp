// The engine's per-line data lock (src/engine/line_lock.hpp): many readers or one writer, a
// waiter woken when the lock frees, in 4 bytes. These also run under ThreadSanitizer
// (scripts/dev.sh), which checks that what a writer wrote is what the next holder reads.
#include "engine/line_lock.hpp"

#include <atomic>
#include <chrono>
#include <future>
#include <gtest/gtest.h>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

namespace iosig::tier::detail {
namespace {

using namespace std::chrono_literals;

TEST(LineLock, IsFourBytes) {
    EXPECT_EQ(sizeof(LineLock), 4u);
}

TEST(LineLock, ManyReadersHoldItAtOnce) {
    LineLock lock;
    constexpr int readers = 4;
    std::atomic<int> inside{0};
    std::atomic<int> most{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < readers; ++i)
        threads.emplace_back([&] {
            std::shared_lock hold(lock);
            const int now = ++inside;
            int seen = most.load();
            while (now > seen && !most.compare_exchange_weak(seen, now)) {
            }
            // Stay until every reader is in (or long enough to show that one could not get in).
            const auto give_up = std::chrono::steady_clock::now() + 10s;
            while (inside.load() < readers && std::chrono::steady_clock::now() < give_up)
                std::this_thread::yield();
        });
    for (std::thread& t : threads)
        t.join();
    EXPECT_EQ(most.load(), readers);
}

// A thread that asked for the lock (its future ready once it got it) is still kept out.
bool kept_out(const std::future<bool>& waiter) {
    return waiter.wait_for(100ms) == std::future_status::timeout;
}

// ... or got it once the lock was freed.
bool woken(const std::future<bool>& waiter) {
    return waiter.wait_for(10s) == std::future_status::ready;
}

TEST(LineLock, AWriterExcludesEveryoneElse) {
    LineLock lock;
    EXPECT_TRUE(lock.try_lock());
    EXPECT_FALSE(lock.try_lock()) << "a second writer";
    auto reader = std::async(std::launch::async, [&] {
        std::shared_lock hold(lock);
        return true;
    });
    EXPECT_TRUE(kept_out(reader)) << "a reader got in";
    lock.unlock();
    ASSERT_TRUE(woken(reader)) << "the reader was not woken";
    EXPECT_TRUE(reader.get());
    EXPECT_TRUE(lock.try_lock()) << "free again once the reader left";
    lock.unlock();
}

TEST(LineLock, AWriterWaitingForReadersGetsItWhenTheLastOneLeaves) {
    LineLock lock;
    lock.lock_shared();
    lock.lock_shared();
    EXPECT_FALSE(lock.try_lock());
    auto writer = std::async(std::launch::async, [&] {
        std::unique_lock hold(lock);
        return true;
    });
    EXPECT_TRUE(kept_out(writer)) << "in beside two readers";
    lock.unlock_shared();
    EXPECT_TRUE(kept_out(writer)) << "in beside one reader";
    lock.unlock_shared();
    ASSERT_TRUE(woken(writer)) << "the writer was not woken";
    EXPECT_TRUE(writer.get());
}

TEST(LineLock, ReadersNeverSeeAHalfDoneWriteAndNoWriteIsLost) {
    // Writers move a pair of counters forward together; readers check they are equal. As the
    // engine does with a line: fills and writes exclusive, reads and write-back snapshots shared.
    LineLock lock;
    std::uint64_t first = 0, second = 0;
    constexpr int writers = 3, readers = 3, rounds = 20000;
    std::atomic<int> torn{0};
    std::vector<std::thread> threads;
    for (int w = 0; w < writers; ++w)
        threads.emplace_back([&] {
            for (int i = 0; i < rounds; ++i) {
                std::unique_lock hold(lock);
                ++first;
                std::this_thread::yield();
                ++second;
            }
        });
    for (int r = 0; r < readers; ++r)
        threads.emplace_back([&] {
            for (int i = 0; i < rounds; ++i) {
                std::shared_lock hold(lock);
                if (first != second) ++torn;
            }
        });
    for (std::thread& t : threads)
        t.join();
    EXPECT_EQ(torn.load(), 0);
    EXPECT_EQ(first, std::uint64_t{writers} * rounds);
    EXPECT_EQ(second, first);
}

TEST(LineLock, AWriterCanStepDownToAReaderAfterAFill) {
    // engine_lines.cpp: a reader that filled the line holds it exclusively, then shares it.
    LineLock lock;
    lock.lock();
    lock.unlock();
    lock.lock_shared();
    auto reader = std::async(std::launch::async, [&] {
        lock.lock_shared();
        lock.unlock_shared();
        return true;
    });
    ASSERT_EQ(reader.wait_for(10s), std::future_status::ready);
    EXPECT_FALSE(lock.try_lock());
    lock.unlock_shared();
    EXPECT_TRUE(lock.try_lock());
    lock.unlock();
}

} // namespace
} // namespace iosig::tier::detail
