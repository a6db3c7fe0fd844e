// Object traces replayed as block traces (trace.hpp, trace_objects.cpp): ids read as block
// addresses of a given unit, or objects laid end to end when the ids are not addresses.
#include "iosig/tier/simulator.hpp"
#include "iosig/tier/trace.hpp"
#include "trace_fixture.hpp"

#include <gtest/gtest.h>
#include <stdexcept>

namespace iosig::tier {
namespace {

using test_support::error_of;

Trace object_trace(std::initializer_list<Request> requests) {
    return test_support::hand_made_trace(TraceKind::objects, requests, "objects.bin");
}

TEST(ObjectTrace, TheSharedOracleGeneralIdsAreTheCsvSectorsAndGiveItsByteOffsets) {
    const Trace* oracle = test_support::cloud_physics_oracle();
    IOSIG_REQUIRE_TRACE(oracle, "cloudPhysicsIO.oracleGeneral.bin");
    const Trace* csv = test_support::cloud_physics_csv();
    IOSIG_REQUIRE_TRACE(csv, "cloudPhysicsIO.csv");
    const Trace blocks = object_ids_as_offsets(*oracle, 512);
    EXPECT_EQ(blocks.kind, TraceKind::blocks);
    ASSERT_EQ(blocks.requests.size(), csv->requests.size());
    std::size_t same_offset = 0, same_size = 0;
    for (std::size_t i = 0; i < blocks.requests.size(); ++i) {
        same_offset += blocks.requests[i].id == csv->requests[i].id;
        same_size += blocks.requests[i].size == csv->requests[i].size;
        ASSERT_EQ(blocks.requests[i].size, oracle->requests[i].size) << "request " << i + 1;
    }
    EXPECT_EQ(same_offset, csv->requests.size()) << "every request starts where the csv's does";
    // libCacheSim's conversion keeps one size per object (the first one seen), so 12 % of the
    // requests are shorter or longer than in the csv.
    EXPECT_LT(same_size, csv->requests.size());
    EXPECT_GT(same_size, csv->requests.size() * 8 / 10);
}

TEST(ObjectTrace, AsABlockTraceItRunsInBlockModeLineByLine) {
    const Trace blocks = object_ids_as_offsets(
        object_trace({{8, 8192, false}, {16, 4096, true}, {8, 8192, false}}), 512);
    SimConfig config;
    config.policy = "lru";
    config.cache_size = 1 << 20;
    const SimResult r = simulate(blocks, config);
    EXPECT_EQ(r.mode, SimMode::block);
    // Sector 8 is byte 4096: lines 1 and 2; sector 16 is line 2 again.
    EXPECT_EQ(r.references, 5u);
    EXPECT_EQ(r.misses, 2u);
}

TEST(ObjectTrace, OffsetsPastTheLastByteAndBadUnitsAreErrorsNamingTheRequest) {
    const Trace t = object_trace({{1, 512, false}, {std::uint64_t{1} << 60, 512, false}});
    const std::string past = error_of([&] { object_ids_as_offsets(t, 4096); });
    EXPECT_NE(past.find("objects.bin: request 2"), std::string::npos) << past;
    EXPECT_EQ(object_ids_as_offsets(t, 8).requests[1].id, std::uint64_t{1} << 63);
    EXPECT_NE(error_of([&] { object_ids_as_offsets(t, 0); }).find("at least 1 byte"),
              std::string::npos);
    Trace blocks = t;
    blocks.kind = TraceKind::blocks;
    EXPECT_NE(
        error_of([&] { object_ids_as_offsets(blocks, 512); }).find("already has byte offsets"),
        std::string::npos);
    EXPECT_THROW(objects_end_to_end(blocks), std::invalid_argument);
}

TEST(ObjectTrace, EndToEndEachObjectGetsAnExtentOfItsLargestSizeInTheOrderOfTheIds) {
    Trace t = object_trace({{900, 100, false}, {3, 50, true}, {900, 300, false}, {5, 10, false}});
    t.skipped_zero_size = 2;
    const Trace blocks = objects_end_to_end(t);
    EXPECT_EQ(blocks.kind, TraceKind::blocks);
    EXPECT_EQ(blocks.skipped_zero_size, 2u);
    EXPECT_NE(blocks.source.find("objects.bin (objects end to end)"), std::string::npos);
    // Object 3 at 0 (50 bytes), 5 at 50 (10), 900 at 60 (300, its larger size).
    ASSERT_EQ(blocks.requests.size(), 4u);
    EXPECT_EQ(blocks.requests[0].id, 60u);
    EXPECT_EQ(blocks.requests[0].size, 100u) << "a request keeps its own size";
    EXPECT_EQ(blocks.requests[1].id, 0u);
    EXPECT_TRUE(blocks.requests[1].write);
    EXPECT_EQ(blocks.requests[2].id, 60u);
    EXPECT_EQ(blocks.requests[2].size, 300u);
    EXPECT_EQ(blocks.requests[3].id, 50u);
}

} // namespace
} // namespace iosig::tier
