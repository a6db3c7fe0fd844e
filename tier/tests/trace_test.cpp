// Trace readers: both formats of the shared trace, and clear errors naming file and line/record.
#include "iosig/tier/simulator.hpp"
#include "iosig/tier/synthetic.hpp"
#include "trace_fixture.hpp"

#include <gtest/gtest.h>

namespace iosig::tier {
namespace {

using test_support::error_of;

TEST(TraceReader, ReadsTheSharedTraceInBothFormats) {
    const Trace* csv = test_support::cloud_physics_csv();
    const Trace* oracle = test_support::cloud_physics_oracle();
    IOSIG_REQUIRE_TRACE(csv, "cloudPhysicsIO.csv");
    IOSIG_REQUIRE_TRACE(oracle, "cloudPhysicsIO.oracleGeneral.bin");
    ASSERT_EQ(csv->requests.size(), 113872u);
    ASSERT_EQ(oracle->requests.size(), 113872u);
    std::size_t writes = 0;
    for (const Request& r : csv->requests)
        writes += r.write;
    EXPECT_EQ(writes, 66898u); // NOTES.md: 66,898 writes, 46,974 reads
    // The oracleGeneral ids are the csv's lbns; the first request is "2a,512,42932745".
    EXPECT_EQ(csv->requests[0].id, 42932745ull * 512);
    EXPECT_EQ(oracle->requests[0].id, 42932745ull);
    EXPECT_EQ(csv->requests[0].size, 512u);
    EXPECT_TRUE(csv->requests[0].write);
}

TEST(TraceReader, BlockModeSplitsRequestsIntoLines) {
    const Trace t =
        parse_csv_trace("version,time,op,size,lbn\n1,0,28,8192,7\n1,1,2a,512,7\n", "t.csv");
    SimConfig config;
    config.cache_size = 1 << 20;
    config.line_size = 4096;
    const SimResult r = simulate(t, config);
    // 8192 bytes from byte 3584 touch lines 0, 1, 2; the write of sector 7 hits line 0 again.
    EXPECT_EQ(r.references, 4u);
    EXPECT_EQ(r.misses, 3u);
    EXPECT_EQ(r.read_misses, 3u);
    EXPECT_EQ(r.bytes_requested, 8192u + 512u);
    EXPECT_EQ(r.bytes_missed, 8192u);
}

// What the engine must read from the slow tier per request: read misses and writes of part of a
// missing line; a write of a whole missing line reads nothing.
TEST(TraceReader, FillsAreCountedPerRequestWhenAsked) {
    Trace t;
    t.kind = TraceKind::blocks;
    t.requests = {{0, 4096, false},        // line 0: a read miss
                  {4096 + 512, 512, true}, // line 1: part of it written
                  {2 * 4096, 4096, true},  // line 2: written whole
                  {0, 8192, false},        // lines 0 and 1: hits
                  {3 * 4096, 8192, false}, // lines 3 and 4: two read misses
                  {5 * 4096, 0, true}};    // nothing
    SimConfig config;
    config.cache_size = 1 << 20;
    EXPECT_TRUE(simulate(t, config).request_fills.empty()) << "only when asked";
    config.fills_per_request = true;
    const SimResult r = simulate(t, config);
    EXPECT_EQ(r.request_fills, (std::vector<std::uint32_t>{1, 1, 0, 0, 2, 0}));
    EXPECT_EQ(r.read_misses, 3u);
    EXPECT_EQ(r.write_misses, 2u);
    EXPECT_EQ(r.partial_write_misses, 1u);
}

TEST(TraceReader, CsvErrorsNameFileAndLine) {
    EXPECT_EQ(
        error_of([] { parse_csv_trace("version,time,op,size,lbn\n1,0,zz,512,7\n", "bad.csv"); }),
        "bad.csv:2: unknown operation 'zz' (expected a SCSI read/write opcode in hex such as 28 or "
        "2a, r/w, 0/1 (read/write), or a key-value get/set)");
    EXPECT_EQ(
        error_of([] { parse_csv_trace("version,time,op,size,lbn\n\n1,0,28,-5,7\n", "bad.csv"); }),
        "bad.csv:3: size '-5' is not a byte count below 4 GiB");
    EXPECT_EQ(error_of([] { parse_csv_trace("1,0,28,512\n", "bad.csv"); }).substr(0, 60),
              "bad.csv:1: expected a header naming the columns size and lbn");
    EXPECT_EQ(error_of([] { parse_csv_trace("op,size,lbn\nr,512\n", "bad.csv"); }),
              "bad.csv:2: 2 fields, the header has 3");
    EXPECT_EQ(error_of([] {
                  parse_csv_trace("op,offset,size\nr,0,512\nr,18446744073709551615,4096\n",
                                  "bad.csv");
              }),
              "bad.csv:3: the request from byte 18446744073709551615 for 4096 bytes ends past the "
              "largest byte offset (2^64 - 1)");
    EXPECT_EQ(
        error_of([] { parse_csv_trace("op,size,lbn\nr,4096,36028797018963967\n", "bad.csv"); }),
        "bad.csv:2: the request from byte 18446744073709551104 for 4096 bytes ends past the "
        "largest byte offset (2^64 - 1)");
    // The last whole request that fits is fine.
    EXPECT_EQ(
        parse_csv_trace("op,offset,size\nr,18446744073709547519,4096\n", "ok.csv").requests.size(),
        1u);
}

TEST(TraceReader, OracleGeneralErrorsNameTheRecord) {
    const std::string truncated(24 * 2 + 5, '\0');
    EXPECT_EQ(error_of([&] { parse_oracle_general(truncated, "t.bin"); }),
              "t.bin: 53 bytes is not a whole number of 24-byte oracleGeneral records (record 2 is "
              "truncated)");
}

TEST(TraceReader, BadSimulatorConfigurationIsRejected) {
    const Trace blocks = parse_csv_trace("op,size,lbn\nr,512,0\n", "t.csv");
    SimConfig config;
    config.cache_size = 1 << 20;
    config.line_size = 3000;
    EXPECT_THROW(simulate(blocks, config), std::invalid_argument);
    config.line_size = 4096;
    config.policy = "mru";
    EXPECT_THROW(simulate(blocks, config), std::invalid_argument);
    Trace objects = blocks;
    objects.kind = TraceKind::objects;
    config.policy = "lru";
    config.mode = SimMode::block;
    EXPECT_THROW(simulate(objects, config), std::invalid_argument);
}

TEST(TraceReader, GeneratedTracesRoundTripThroughCsv) {
    const Trace t = generate(MarkovChain{500, 64, 0.9}, 3);
    const auto path = std::filesystem::temp_directory_path() / "iosig-tier-roundtrip.csv";
    write_csv_trace(t, path);
    const Trace back = load_trace(path, TraceFormat::csv);
    std::filesystem::remove(path);
    ASSERT_EQ(back.requests.size(), t.requests.size());
    for (std::size_t i = 0; i < t.requests.size(); ++i) {
        EXPECT_EQ(back.requests[i].id, t.requests[i].id);
        EXPECT_EQ(back.requests[i].size, t.requests[i].size);
    }
}

} // namespace
} // namespace iosig::tier
