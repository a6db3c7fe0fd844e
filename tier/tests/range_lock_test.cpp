// The per-file range lock (src/engine/range_lock.hpp): byte ranges held for a whole call, shared
// for reads and exclusive for writes and truncates, granted in arrival order. These also run under
// ThreadSanitizer (scripts/dev.sh).
#include "engine/range_lock.hpp"

#include <chrono>
#include <future>
#include <gtest/gtest.h>
#include <limits>
#include <optional>

namespace iosig::tier::detail {
namespace {

using namespace std::chrono_literals;
using Hold = RangeLock::Hold;

// Takes [begin, end) on another thread and holds it until let go (or destroyed); `in` is ready
// once the range is held.
struct Taker {
    Taker(RangeLock& lock, std::int64_t begin, std::int64_t end, bool exclusive)
        : thread([&lock, begin, end, exclusive, this] {
              const Hold hold(lock, begin, end, exclusive);
              held.set_value();
              release.get_future().wait();
          }),
          in(held.get_future()) {}
    ~Taker() {
        let_go();
        thread.join();
    }
    void let_go() {
        if (!let_go_) release.set_value();
        let_go_ = true;
    }
    bool kept_out() const { return in.wait_for(100ms) == std::future_status::timeout; }
    bool got_in() const { return in.wait_for(10s) == std::future_status::ready; }

    std::promise<void> held, release;
    std::thread thread;
    std::future<void> in;
    bool let_go_ = false;
};

TEST(RangeLock, WritesOfDisjointRangesGoOnTogether) {
    RangeLock lock;
    const Hold first(lock, 0, 4096, true);
    Taker second(lock, 4096, 8192, true); // adjacent: [0, 4096) and [4096, 8192) share no byte
    EXPECT_TRUE(second.got_in());
}

TEST(RangeLock, ReadsOfOneRangeGoOnTogether) {
    RangeLock lock;
    const Hold first(lock, 0, 100, false);
    Taker second(lock, 50, 150, false);
    EXPECT_TRUE(second.got_in());
}

TEST(RangeLock, AWriteWaitsForTheReadsAndWritesItOverlaps) {
    RangeLock lock;
    for (const bool first_exclusive : {false, true}) {
        std::optional<Hold> first;
        first.emplace(lock, 100, 200, first_exclusive);
        Taker write(lock, 199, 300, true); // one byte in common
        EXPECT_TRUE(write.kept_out()) << "beside a " << (first_exclusive ? "write" : "read");
        first.reset();
        EXPECT_TRUE(write.got_in());
    }
}

TEST(RangeLock, AReadWaitsForAWriteItOverlaps) {
    RangeLock lock;
    std::optional<Hold> write;
    write.emplace(lock, 0, std::numeric_limits<std::int64_t>::max(), true); // a truncate to 0
    Taker read(lock, 1 << 20, (1 << 20) + 10, false);
    EXPECT_TRUE(read.kept_out());
    write.reset();
    EXPECT_TRUE(read.got_in());
}

// A write waiting for a read holds back the reads that come after it on the same bytes, so a
// stream of overlapping reads cannot keep it out for ever; reads elsewhere are not held back.
TEST(RangeLock, AWaitingWriteHoldsBackLaterReadsOfItsBytesOnly) {
    RangeLock lock;
    std::optional<Hold> reading;
    reading.emplace(lock, 0, 100, false);
    Taker write(lock, 50, 150, true);
    ASSERT_TRUE(write.kept_out());
    Taker later_read(lock, 120, 130, false); // overlaps the write, not the read
    Taker elsewhere(lock, 500, 600, false);
    EXPECT_TRUE(later_read.kept_out()) << "a later read overtook the waiting write";
    EXPECT_TRUE(elsewhere.got_in());
    reading.reset();
    EXPECT_TRUE(write.got_in());
    EXPECT_TRUE(later_read.kept_out()) << "in beside the write";
    write.let_go();
    EXPECT_TRUE(later_read.got_in());
}

} // namespace
} // namespace iosig::tier::detail
