// The engine's line index (tier/src/flat_map.hpp) while a cache fills: the longest single insert
// of an index that grows as it fills (it rehashes, copying the whole table, while the engine's lock
// is held and every reader waits) against one made for the cache's line count when the engine
// opens (engine_open.cpp), which never rehashes. docs/performance.md, "Memory per cache line".
#define CATCH_CONFIG_MAIN
#include "flat_map.hpp"
#include "iosig/tier/cache_model.hpp"
#include "iosig/tier/policy.hpp"

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <fmt/format.h>
#include <string>

using iosig::tier::detail::FlatMap;

namespace {

struct Fill {
    double longest_insert_ms = 0;
    double all_inserts_ms = 0;
};

// Inserts `lines` keys as the engine does (file id in the high bits, line numbers in order).
Fill fill(FlatMap& index, std::uint64_t lines) {
    Fill result;
    for (std::uint64_t line = 0; line < lines; ++line) {
        const auto start = std::chrono::steady_clock::now();
        index.put((std::uint64_t{1} << 40) | line, static_cast<std::uint32_t>(line));
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
        result.all_inserts_ms += ms;
        result.longest_insert_ms = std::max(result.longest_insert_ms, ms);
    }
    return result;
}

} // namespace

TEST_CASE("an index made for the line count never stalls an insert") {
    for (const std::uint64_t lines :
         {std::uint64_t{1} << 18, std::uint64_t{1} << 20, std::uint64_t{1} << 24}) {
        FlatMap grown;
        const Fill growing = fill(grown, lines);
        FlatMap made(lines);
        const Fill presized = fill(made, lines);
        fmt::print("{:>9} lines: longest insert {:7.2f} ms grown, {:5.2f} ms made for them; all "
                   "inserts {:6.0f} / {:6.0f} ms; table {} / {} MiB\n",
                   lines, growing.longest_insert_ms, presized.longest_insert_ms,
                   growing.all_inserts_ms, presized.all_inserts_ms, grown.table_bytes() >> 20,
                   made.table_bytes() >> 20);
        CHECK(made.table_bytes() == grown.table_bytes());
        // A rehash copies every entry; an insert into a table made for them copies none. At 16 M
        // lines that is ~200 ms against well under 1 ms here; the factor leaves room for a busy
        // machine.
        if (lines >= (std::uint64_t{1} << 24))
            CHECK(presized.longest_insert_ms * 20 < growing.longest_insert_ms);
    }
}

namespace {

// The longest single request while a cache of `lines` lines (every entry one line, as in the
// engine) takes `lines` new keys and then as many again (the second half evicts, which fills the
// ghost lists and the learner's outside lists).
double longest_request_ms(const std::string& policy, std::uint64_t lines, bool made_for_lines) {
    iosig::tier::PolicyConfig config;
    config.capacity = lines;
    config.expected_entries = made_for_lines ? lines : 0;
    iosig::tier::CacheModel cache(lines, iosig::tier::make_policy(policy, config),
                                  config.expected_entries);
    double longest = 0;
    for (std::uint64_t key = 0; key < 2 * lines; ++key) {
        iosig::tier::Access access;
        access.key = key;
        access.size = 1;
        const auto start = std::chrono::steady_clock::now();
        cache.access(access);
        longest = std::max(longest, std::chrono::duration<double, std::milli>(
                                        std::chrono::steady_clock::now() - start)
                                        .count());
    }
    return longest;
}

} // namespace

TEST_CASE("policies made for the line count never stall a request") {
    const std::uint64_t lines = std::uint64_t{1} << 22;
    for (const std::string policy : {"lru", "arc", "lecar", "ws"}) {
        const double grown = longest_request_ms(policy, lines, false);
        const double made = longest_request_ms(policy, lines, true);
        fmt::print("{:>6}, {} lines: longest request {:7.2f} ms growing, {:7.2f} ms made for "
                   "them\n",
                   policy, lines, grown, made);
        CHECK(made * 5 < grown);
    }
}

// Made for every line when the engine opens, the tables must not make opening slow: their empty
// buckets are zero pages the kernel hands out as keys land on them (flat_map.hpp), not memory
// written when they are made.
TEST_CASE("making a policy for 16 M lines takes well under a second") {
    for (const std::string policy : {"lru", "lecar", "ws"}) {
        iosig::tier::PolicyConfig config;
        config.capacity = config.expected_entries = std::uint64_t{1} << 24;
        const auto start = std::chrono::steady_clock::now();
        const auto made = iosig::tier::make_policy(policy, config);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        fmt::print("{:>6}, {} lines: made in {:.3f} s\n", policy, config.capacity, seconds);
        CHECK(seconds < 2.0);
    }
}
