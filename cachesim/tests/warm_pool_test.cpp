// The harness's warm memory (validate/warm_pool.hpp): the pool is resident once made, and it gives
// back whole 2 MiB pages exactly as fast as writes ask for memory.
#include "warm_pool.hpp"

#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

using iosig::cachesim::validate::WarmPool;

namespace {

constexpr std::uint64_t MiB = 1024 * 1024;

// Resident set of this process in bytes (/proc/self/statm, second field, in pages).
std::uint64_t resident_bytes() {
    std::ifstream statm("/proc/self/statm");
    std::uint64_t size = 0, resident = 0;
    statm >> size >> resident;
    return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

} // namespace

TEST(WarmPool, HoldsWholeHugePagesCoveringTheRequest) {
    const WarmPool pool(5 * MiB);
    EXPECT_EQ(pool.held_bytes(), 6 * MiB);
}

TEST(WarmPool, EmptyRequestHoldsNothingAndReleasesNothing) {
    WarmPool pool(0);
    EXPECT_EQ(pool.held_bytes(), 0u);
    pool.release_for(MiB);
    EXPECT_EQ(pool.held_bytes(), 0u);
}

TEST(WarmPool, ReleasesAPageOnlyWhenTheWritesSoFarNeedIt) {
    WarmPool pool(6 * MiB);
    pool.release_for(1); // the first byte needs a page
    EXPECT_EQ(pool.held_bytes(), 4 * MiB);
    pool.release_for(2 * MiB - 1); // still covered by that page
    EXPECT_EQ(pool.held_bytes(), 4 * MiB);
    pool.release_for(1);
    EXPECT_EQ(pool.held_bytes(), 2 * MiB);
    pool.release_for(64 * MiB); // more than the pool: everything goes, nothing breaks
    EXPECT_EQ(pool.held_bytes(), 0u);
}

TEST(WarmPool, MemoryIsTouchedWhenMadeAndReturnedWhenReleased) {
    const std::uint64_t before = resident_bytes();
    WarmPool pool(64 * MiB);
    const std::uint64_t made = resident_bytes();
    EXPECT_GE(made, before + 60 * MiB) << "the pool's pages are resident before the first write";
    pool.release_for(32 * MiB);
    EXPECT_LE(resident_bytes(), made - 30 * MiB) << "released pages leave the process";
}
