// A miss that needs a slot while the policy holds none (engine_lines.cpp, take_slot): every slot
// can be between lines at once, and then there is no victim to ask the policy for.
#include "engine_fixture.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <thread>

namespace iosig::tier {
namespace {

using test_support::pattern;
using test_support::ScratchDir;
using test_support::small_config;
using test_support::write_file;

// Waits up to 10 s for `done`.
template <typename Done>
bool wait_until(Done done) {
    for (int waited_ms = 0; waited_ms < 10'000; ++waited_ms) {
        if (done()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return done();
}

// A four-line cache holds four lines of one file, and a truncate of that file to 0 drops them: the
// truncate keeps their slots pinned until its journal sync and the home file's cut are done, and
// here the journal's sync is held. For that while no slot is in the policy or free. A read of
// another file misses then: it waits for a slot and reads its bytes once the truncate is done. On
// the engine before session 42 it asked the policy for a victim anyway; ARC and LRU answered nil
// and the engine read its line table at slot 2^32 - 1, a crash (found by
// EngineAgainstTheKernelFromTwoThreads); LFU read past its buckets, Random divided by zero.
TEST(SlotTaking, AMissWhileATruncateHoldsEverySlotWaitsForOne) {
    for (const char* policy : {"arc", "lru", "lfu", "random", "ws", "lecar"}) {
        SCOPED_TRACE(policy);
        ScratchDir dir;
        TierConfig config = small_config(dir, 4);
        config.policy = policy;
        config.faults = std::make_shared<IoFaults>();
        const auto cut = dir / "cut", other = dir / "other";
        write_file(cut, pattern(4 * 4096, 1));
        write_file(other, pattern(4096, 2));
        auto tier = TierCache::open(config);
        const int c = tier->open_file(cut, O_RDWR), o = tier->open_file(other, O_RDONLY);
        ASSERT_GE(c, 0);
        ASSERT_GE(o, 0);
        std::vector<char> bytes(4 * 4096);
        ASSERT_EQ(tier->pread(c, bytes.data(), bytes.size(), 0), 4 * 4096); // every slot
        const std::uint64_t syncs_before = config.faults->syncs(FileRole::journal);
        config.faults->hold_syncs(FileRole::journal);
        int truncated = 1;
        std::thread truncate([&] { truncated = tier->ftruncate(c, 0); });
        ASSERT_TRUE(wait_until([&] {
            return config.faults->syncs(FileRole::journal) > syncs_before;
        })) << "the truncate never synced the journal";
        std::atomic<bool> read_done{false};
        ssize_t got = 0;
        char byte = 0;
        std::thread read([&] {
            got = tier->pread(o, &byte, 1, 0);
            read_done = true;
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        EXPECT_FALSE(read_done.load()) << "the read found a slot while the truncate held them all";
        config.faults->let_syncs_go();
        truncate.join();
        read.join();
        EXPECT_EQ(truncated, 0);
        EXPECT_EQ(got, 1);
        EXPECT_EQ(byte, pattern(4096, 2)[0]);
        EXPECT_EQ(tier->file_size(c), 0);
        EXPECT_EQ(tier->close(c), 0);
        EXPECT_EQ(tier->close(o), 0);
    }
}

} // namespace
} // namespace iosig::tier
