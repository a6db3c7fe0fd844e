// The open-addressing map under the simulator's, the ghost lists' and the engine's lookups
// (tier/src/flat_map.hpp): it must agree with std::unordered_map on any sequence of puts and
// erases, including erases inside probe runs that wrap around the end of the table (the
// backward-shift deletion), and a map made for N keys must hold them without growing.
#include "flat_map.hpp"

#include <cstdint>
#include <gtest/gtest.h>
#include <random>
#include <unordered_map>
#include <vector>

namespace iosig::tier::detail {
namespace {

// Every key of the reference is found with its value, and no other key of `universe` is.
void expect_same(const FlatMap& map, const std::unordered_map<std::uint64_t, std::uint32_t>& ref,
                 std::uint64_t universe) {
    ASSERT_EQ(map.size(), ref.size());
    for (std::uint64_t key = 0; key < universe; ++key) {
        const std::uint32_t* found = map.find(key);
        const auto it = ref.find(key);
        if (it == ref.end()) {
            ASSERT_EQ(found, nullptr) << "key " << key << " was erased or never put";
        } else {
            ASSERT_NE(found, nullptr) << "key " << key << " was put and not erased";
            ASSERT_EQ(*found, it->second) << "key " << key;
        }
    }
}

TEST(FlatMap, AgreesWithAReferenceMapOverRandomPutsAndErases) {
    // A small key universe keeps the table dense and the probe runs long, so erases move entries
    // back across the table's end as well as within it.
    for (const std::uint64_t universe : {24u, 200u, 5000u}) {
        std::mt19937_64 rng(universe);
        FlatMap map;
        std::unordered_map<std::uint64_t, std::uint32_t> ref;
        for (int step = 0; step < 20000; ++step) {
            const std::uint64_t key = rng() % universe;
            if (rng() % 3 == 0) {
                const auto erased = map.erase(key);
                const auto it = ref.find(key);
                ASSERT_EQ(erased.has_value(), it != ref.end()) << "erase of key " << key;
                if (it != ref.end()) {
                    ASSERT_EQ(*erased, it->second);
                    ref.erase(it);
                }
            } else {
                const auto value = static_cast<std::uint32_t>(rng());
                map.put(key, value);
                ref[key] = value;
            }
            if (step % 997 == 0) expect_same(map, ref, universe);
        }
        expect_same(map, ref, universe);
    }
}

TEST(FlatMap, KeysThatShareAHomeBucketStayReachableAfterAnyOneIsErased) {
    // Eight keys whose home is the last bucket of a 16-bucket table form one probe run that wraps
    // around the table's end; erasing any one of them must leave the other seven reachable.
    // (The home bucket is the top 4 bits of the Fibonacci hash, as in FlatMap::home.)
    const auto home_in_16 = [](std::uint64_t key) { return (key * 0x9E3779B97F4A7C15ull) >> 60; };
    std::vector<std::uint64_t> colliding;
    for (std::uint64_t key = 1; colliding.size() < 8; ++key)
        if (home_in_16(key) == 15) colliding.push_back(key);
    for (std::size_t gone = 0; gone < colliding.size(); ++gone) {
        FlatMap map(8); // 16 buckets: room for 12 keys before it grows
        for (std::size_t i = 0; i < colliding.size(); ++i)
            map.put(colliding[i], static_cast<std::uint32_t>(i));
        ASSERT_EQ(map.table_bytes(), 16 * 16u) << "the test needs the 16-bucket table";
        ASSERT_TRUE(map.erase(colliding[gone]).has_value());
        for (std::size_t i = 0; i < colliding.size(); ++i) {
            if (i == gone) {
                EXPECT_FALSE(map.contains(colliding[i]));
            } else {
                const std::uint32_t* found = map.find(colliding[i]);
                ASSERT_NE(found, nullptr)
                    << "key " << i << " lost when key " << gone << " was erased";
                EXPECT_EQ(*found, i);
            }
        }
    }
}

TEST(FlatMap, AMapMadeForNKeysHoldsThemWithoutGrowing) {
    // The engine makes its line index for the cache's line count, so that no lookup ever waits
    // for a rehash of the whole index in the middle of a fill.
    for (const std::size_t n : {1u, 12u, 13u, 1000u, 262144u}) {
        FlatMap map(n);
        const std::size_t bytes = map.table_bytes();
        for (std::uint64_t key = 0; key < n; ++key)
            map.put(key * 7919, static_cast<std::uint32_t>(key));
        EXPECT_EQ(map.table_bytes(), bytes) << n << " keys";
        EXPECT_EQ(map.size(), n);
        // ... and at most twice the table that n keys need at the 3/4 load limit.
        EXPECT_LE(bytes, 2 * (n * 4 / 3 + 16) * 16) << n << " keys";
    }
}

TEST(FlatMap, GrowsPastWhatItWasMadeForAndClearKeepsTheTable) {
    FlatMap map(4);
    for (std::uint64_t key = 0; key < 10000; ++key)
        map.put(key, static_cast<std::uint32_t>(key + 1));
    EXPECT_EQ(map.size(), 10000u);
    for (std::uint64_t key = 0; key < 10000; ++key)
        ASSERT_EQ(*map.find(key), key + 1);
    const std::size_t bytes = map.table_bytes();
    map.clear();
    EXPECT_TRUE(map.empty());
    EXPECT_FALSE(map.contains(0));
    EXPECT_EQ(map.table_bytes(), bytes);
}

TEST(FlatMap, AMovedFromMapIsEmptyAndUsable) {
    // The engine replaces its index by one made for its line count (index_ = FlatMap(lines)).
    FlatMap from(100);
    from.put(7, 70);
    FlatMap to;
    to.put(1, 10);
    to = std::move(from);
    EXPECT_EQ(*to.find(7), 70u);
    EXPECT_FALSE(to.contains(1)) << "what the target held is gone";
    EXPECT_TRUE(
        from.empty()); // NOLINT(bugprone-use-after-move): the state after a move is specified
    EXPECT_FALSE(from.contains(7));
    from.put(8, 80);
    EXPECT_EQ(*from.find(8), 80u);
    FlatMap built(std::move(to));
    EXPECT_EQ(*built.find(7), 70u);
    EXPECT_TRUE(to.empty()); // NOLINT(bugprone-use-after-move)
    to.put(9, 90);
    EXPECT_EQ(to.size(), 1u);
}

} // namespace
} // namespace iosig::tier::detail
