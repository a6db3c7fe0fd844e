// The iosig-tiersim command as a user runs it: JSON results on the shared trace (the golden LRU row
// at 128 and 1024 MiB, with the fields docs/tier.md promises), and exit status 2 with a message
// naming the file and line for bad input.
#include "engine_fixture.hpp"
#include "iosig/tier/simulator.hpp"
#include "iosig/tier/trace.hpp"
#include "tool_run.hpp"
#include "trace_fixture.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <set>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using iosig::tier::test_support::ToolRun;

ToolRun tiersim(const std::string& arguments) {
    return iosig::tier::test_support::run_tool(std::string(IOSIG_BINARY_DIR) +
                                               "/bin/iosig-tiersim " + arguments + " 2>&1");
}

TEST(Tiersim, JsonReportsTheGoldenLruMissesAndEveryPromisedField) {
    const auto trace = iosig::tier::test_support::shared_trace("cloudPhysicsIO.oracleGeneral.bin");
    if (!std::filesystem::exists(trace)) GTEST_SKIP() << "shared trace missing: " << trace;
    const ToolRun run =
        tiersim("--trace " + trace.string() +
                " --format oracleGeneral --policy lru,ws --cache-size 128M,1G --json");
    ASSERT_EQ(run.status, 0) << run.output;
    const auto results = nlohmann::json::parse(run.output).at("results");
    ASSERT_EQ(results.size(), 4u);
    EXPECT_EQ(results[0]["policy"], "lru");
    EXPECT_EQ(results[0]["misses"], 93374);
    EXPECT_EQ(results[1]["misses"], 71704);
    for (const auto& r : results) {
        for (const char* field : {"misses", "miss_ratio", "byte_miss_ratio", "requests_per_second"})
            EXPECT_TRUE(r.contains(field)) << field << " missing in " << r.dump();
        EXPECT_EQ(r["requests"], 113872);
    }
    EXPECT_TRUE(results[2].contains("learner"));
}

TEST(Tiersim, HindsightReportsTheSchedulesPerCacheSize) {
    const ToolRun run = tiersim("--synthetic switching --line-size 4K --cache-size 256K,1M "
                                "--hindsight --window 1000 --json");
    ASSERT_EQ(run.status, 0) << run.output;
    const auto rows = nlohmann::json::parse(run.output).at("hindsight");
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0]["capacity"], 64);
    EXPECT_EQ(rows[1]["capacity"], 256);
    for (const auto& r : rows) {
        for (const char* field : {"lru_misses", "lfu_misses", "free_switching_misses",
                                  "charged_switching_misses", "charged_switches", "windows"})
            EXPECT_TRUE(r.contains(field)) << field << " missing in " << r.dump();
        EXPECT_LE(r["charged_switching_misses"].get<double>(),
                  std::min(r["lru_misses"].get<double>(), r["lfu_misses"].get<double>()));
    }
    EXPECT_EQ(tiersim("--synthetic irm --cache-size 1M --hindsight --window 0").status, 2);
}

TEST(Tiersim, PrefetchAccuracyIsReportedForAStridedTrace) {
    const ToolRun run =
        tiersim("--synthetic strided --policy lru --cache-size 16M --prefetch stream --json");
    ASSERT_EQ(run.status, 0) << run.output;
    const auto r = nlohmann::json::parse(run.output).at("results").at(0);
    EXPECT_LT(r["misses"].get<double>(), 0.01 * 200000) << r.dump();
    EXPECT_GT(r["prefetch"]["accuracy"].get<double>(), 0.9) << r.dump();
    // The buffer (a 32nd of the cache) is memory beside it: the cache keeps all 4,096 lines.
    EXPECT_EQ(r["prefetch"]["buffer"].get<std::uint64_t>(), 512u << 10) << r.dump();
    EXPECT_EQ(r["capacity"].get<std::uint64_t>(), 4096u) << r.dump();
}

// --prefetch-window: the lines an adjacent stream's window grows to. 8 keeps the first window, a
// read per 4 lines on a scan (session 16's prefetcher: 50,000 reads for 200,160 lines); the default
// grows to 64 and reads fewer, larger runs. It needs --prefetch and at least one line.
TEST(Tiersim, ThePrefetchWindowIsAnOption) {
    const auto strided = [](const std::string& extra) {
        const ToolRun run = tiersim(
            "--synthetic strided --policy lru --cache-size 16M --prefetch stream --json " + extra);
        EXPECT_EQ(run.status, 0) << run.output;
        return nlohmann::json::parse(run.output).at("results").at(0).at("prefetch");
    };
    const auto fixed = strided("--prefetch-window 8"), grown = strided("");
    EXPECT_NEAR(fixed["issued"].get<double>() / fixed["reads"].get<double>(), 4.0, 0.05)
        << "refills of 4 lines (and each stream's first window of 8): " << fixed.dump();
    EXPECT_LT(grown["reads"].get<int>() * 3, fixed["reads"].get<int>()) << grown.dump();
    const ToolRun zero = tiersim("--synthetic strided --cache-size 16M --prefetch stream "
                                 "--prefetch-window 0");
    EXPECT_EQ(zero.status, 2);
    EXPECT_NE(zero.output.find("--prefetch-window"), std::string::npos) << zero.output;
    const ToolRun alone = tiersim("--synthetic strided --cache-size 16M --prefetch-window 8");
    EXPECT_EQ(alone.status, 2);
    EXPECT_NE(alone.output.find("requires --prefetch"), std::string::npos) << alone.output;
}

// --sequential-cutoff: a scan past the cutoff goes by the cache (as the engine's bypass), reported
// apart from hits and misses, with the home reads the page cache's readahead makes for it
// (--readahead: the window). A second scan finds the page cache. Block mode only.
TEST(Tiersim, TheSequentialBypassIsReportedApartFromHitsAndMisses) {
    iosig::tier::test_support::ScratchDir dir;
    iosig::tier::Trace scan;
    scan.kind = iosig::tier::TraceKind::blocks;
    for (int pass = 0; pass < 2; ++pass)
        for (std::uint64_t at = 0; at < (8u << 20); at += 4096)
            scan.requests.push_back(iosig::tier::Request{at, 4096, false});
    iosig::tier::write_csv_trace(scan, dir / "scan.csv");
    const std::string args = "--trace " + (dir / "scan.csv").string() +
                             " --policy lru --cache-size 16M --sequential-cutoff 1M --readahead "
                             "2560K";
    const ToolRun run = tiersim(args + " --json");
    ASSERT_EQ(run.status, 0) << run.output;
    const auto r = nlohmann::json::parse(run.output).at("results").at(0);
    EXPECT_EQ(r["misses"], 256) << "the first MiB, once";
    EXPECT_EQ(r["hits"], 256) << "the first MiB, again";
    EXPECT_EQ(r["bypass"]["references"], 2 * 1792);
    EXPECT_EQ(r["bypass"]["home_read_bytes"], 7u << 20) << "the second scan finds the page cache";
    EXPECT_GT(r["bypass"]["home_reads"].get<int>(), 5);
    EXPECT_LT(r["bypass"]["home_reads"].get<int>(), 20);
    const ToolRun table = tiersim(args);
    ASSERT_EQ(table.status, 0) << table.output;
    EXPECT_NE(table.output.find("3584 references (14M) bypassed the cache"), std::string::npos)
        << table.output;
    const ToolRun objects = tiersim("--trace " + (dir / "scan.csv").string() +
                                    " --mode object --cache-size 1M --sequential-cutoff 1M");
    EXPECT_EQ(objects.status, 2) << objects.output;
    EXPECT_NE(objects.output.find("needs block mode"), std::string::npos) << objects.output;
}

// Caches sized as a share of the trace's footprint, as libCacheSim's tools take them: the shared
// trace's distinct objects add up to the working set, and 10% and 0.1 are the same cache.
TEST(Tiersim, CacheSizesAsAShareOfTheWorkingSet) {
    const iosig::tier::Trace* oracle = iosig::tier::test_support::cloud_physics_oracle();
    IOSIG_REQUIRE_TRACE(oracle, "cloudPhysicsIO.oracleGeneral.bin");
    std::set<std::uint64_t> seen;
    std::uint64_t footprint = 0;
    for (const auto& r : oracle->requests)
        if (seen.insert(r.id).second) footprint += r.size;
    const auto trace = iosig::tier::test_support::shared_trace("cloudPhysicsIO.oracleGeneral.bin");
    const ToolRun run =
        tiersim("--trace " + trace.string() + " --policy lru --cache-size 10%,0.1,100% --json");
    ASSERT_EQ(run.status, 0) << run.output;
    const auto out = nlohmann::json::parse(run.output);
    EXPECT_EQ(out["working_set_bytes"].get<std::uint64_t>(), footprint);
    const auto results = out.at("results");
    ASSERT_EQ(results.size(), 3u);
    EXPECT_EQ(results[0]["cache_size"].get<std::uint64_t>(),
              static_cast<std::uint64_t>(std::llround(0.1 * double(footprint))));
    EXPECT_EQ(results[0]["misses"], results[1]["misses"]);
    EXPECT_EQ(results[2]["misses"].get<std::uint64_t>(), seen.size())
        << "a cache of the whole working set misses only on first references";
    for (const std::string bad : {"1.5", "0%", "ten%"}) {
        const ToolRun rejected =
            tiersim("--trace " + trace.string() + " --policy lru --cache-size " + bad);
        EXPECT_EQ(rejected.status, 2) << bad;
        EXPECT_NE(rejected.output.find("--cache-size '" + bad + "'"), std::string::npos)
            << rejected.output;
    }
}

// An object trace whose ids are block addresses (the shared oracleGeneral file: 512-byte sectors)
// runs in block mode once the ids' unit is given, as the library's conversion makes it.
TEST(Tiersim, IdUnitReplaysAnObjectTraceOfBlockAddressesLineByLine) {
    const iosig::tier::Trace* oracle = iosig::tier::test_support::cloud_physics_oracle();
    IOSIG_REQUIRE_TRACE(oracle, "cloudPhysicsIO.oracleGeneral.bin");
    iosig::tier::SimConfig config;
    config.policy = "lru";
    config.cache_size = 256 << 20;
    const iosig::tier::SimResult expected =
        iosig::tier::simulate(iosig::tier::object_ids_as_offsets(*oracle, 512), config);
    const auto trace = iosig::tier::test_support::shared_trace("cloudPhysicsIO.oracleGeneral.bin");
    const ToolRun run = tiersim("--trace " + trace.string() +
                                " --id-unit 512 --policy lru --cache-size 256M --json");
    ASSERT_EQ(run.status, 0) << run.output;
    const auto r = nlohmann::json::parse(run.output).at("results").at(0);
    EXPECT_EQ(r["mode"], "block");
    EXPECT_EQ(r["references"].get<std::uint64_t>(), expected.references);
    EXPECT_GT(expected.references, oracle->requests.size()) << "requests split into 4 KiB lines";
    EXPECT_EQ(r["misses"].get<std::uint64_t>(), expected.misses);

    const ToolRun no_unit =
        tiersim("--trace " + trace.string() + " --mode block --policy lru --cache-size 256M");
    EXPECT_EQ(no_unit.status, 2);
    EXPECT_NE(no_unit.output.find("--id-unit 512"), std::string::npos) << no_unit.output;
    const auto csv = iosig::tier::test_support::shared_trace("cloudPhysicsIO.csv");
    const ToolRun block_trace =
        tiersim("--trace " + csv.string() + " --id-unit 512 --policy lru --cache-size 256M");
    EXPECT_EQ(block_trace.status, 2);
    EXPECT_NE(block_trace.output.find("cloudPhysicsIO.csv: the trace already has byte offsets"),
              std::string::npos)
        << block_trace.output;
}

// Published traces in other shapes run as they come: a LIRS-style text trace (one block number per
// line) counts objects, or lines once --id-unit says the numbers are 4 KiB blocks; a headerless MSR
// Cambridge csv is recognised and the output says which columns were assumed.
TEST(Tiersim, TextTracesAndHeaderlessMsrTracesRunAsTheyArePublished) {
    const auto dir = std::filesystem::temp_directory_path();
    const auto trc = dir / ("iosig-tiersim-" + std::to_string(::getpid()) + ".trc");
    std::ofstream(trc) << "1\n2\n3\n1\n2\n3\n1\n";
    // LRU with room for 2 of the 3 blocks misses every time; with 3, only the first three.
    const ToolRun objects =
        tiersim("--trace " + trc.string() + " --policy lru --cache-size 2,3 --json");
    ASSERT_EQ(objects.status, 0) << objects.output;
    const auto by_count = nlohmann::json::parse(objects.output).at("results");
    EXPECT_EQ(by_count[0]["mode"], "object");
    EXPECT_EQ(by_count[0]["misses"], 7);
    EXPECT_EQ(by_count[1]["misses"], 3);
    const ToolRun blocks = tiersim("--trace " + trc.string() +
                                   " --id-unit 4K --policy lru --cache-size 8K,12K --json");
    ASSERT_EQ(blocks.status, 0) << blocks.output;
    const auto by_line = nlohmann::json::parse(blocks.output).at("results");
    EXPECT_EQ(by_line[0]["mode"], "block");
    EXPECT_EQ(by_line[0]["misses"], 7);
    EXPECT_EQ(by_line[1]["misses"], 3);
    std::filesystem::remove(trc);

    const auto msr = dir / ("iosig-tiersim-msr-" + std::to_string(::getpid()) + ".csv");
    std::ofstream(msr) << "128166372003061629,hm,0,Read,0,8192,1331\n"
                          "128166372003061700,hm,0,Write,4096,4096,1331\n";
    const ToolRun msr_run =
        tiersim("--trace " + msr.string() + " --policy lru --cache-size 1M --json");
    ASSERT_EQ(msr_run.status, 0) << msr_run.output;
    const auto out = nlohmann::json::parse(msr_run.output);
    EXPECT_NE(out["trace"].get<std::string>().find("MSR Cambridge's columns op=4,offset=5,size=6"),
              std::string::npos)
        << out.dump();
    EXPECT_EQ(out["results"][0]["references"], 3); // two lines, then the second one again
    EXPECT_EQ(out["results"][0]["misses"], 2);
    std::filesystem::remove(msr);
}

TEST(Tiersim, BadInputExitsTwoNamingTheFileAndLine) {
    const auto path = std::filesystem::temp_directory_path() /
                      ("iosig-tiersim-bad-" + std::to_string(::getpid()) + ".csv");
    std::ofstream(path) << "version,time,op,size,lbn\n1,2,0x28,4096,8\n1,3,0x28,zz,5\n";
    const ToolRun bad_size = tiersim("--trace " + path.string() + " --policy lru --cache-size 1M");
    EXPECT_EQ(bad_size.status, 2);
    EXPECT_NE(bad_size.output.find(path.string() + ":3:"), std::string::npos) << bad_size.output;
    const ToolRun prefix =
        tiersim("--trace " + path.string() + " --requests 1 --policy lru --cache-size 1M --json");
    ASSERT_EQ(prefix.status, 0) << "--requests 1 reads only the good first request: "
                                << prefix.output;
    EXPECT_EQ(nlohmann::json::parse(prefix.output).at("results").at(0).at("requests"), 1);
    const ToolRun bad_policy =
        tiersim("--trace " + path.string() + " --policy nope --cache-size 1M");
    EXPECT_EQ(bad_policy.status, 2);
    EXPECT_NE(bad_policy.output.find("nope"), std::string::npos) << bad_policy.output;
    const ToolRun bad_columns =
        tiersim("--trace " + path.string() + " --csv-columns op=3,offst=5 --cache-size 1M");
    EXPECT_EQ(bad_columns.status, 2);
    EXPECT_NE(bad_columns.output.find("unknown column name 'offst'"), std::string::npos)
        << bad_columns.output;
    std::filesystem::remove(path);
}

// Simulations run side by side (--jobs) report what one at a time does, in the same order: every
// field but the measured speed. A policy that fails fails the whole command as before.
TEST(Tiersim, SimulationsSideBySideReportWhatOneAtATimeDoes) {
    const std::string common = "--synthetic switching --requests 60000 --line-size 4K "
                               "--policy lru,ws,arc --cache-size 256K,1M,4M --json --jobs ";
    const ToolRun alone = tiersim(common + "1");
    const ToolRun side_by_side = tiersim(common + "4");
    ASSERT_EQ(alone.status, 0) << alone.output;
    ASSERT_EQ(side_by_side.status, 0) << side_by_side.output;
    auto results = [](const ToolRun& run) {
        auto rows = nlohmann::json::parse(run.output).at("results");
        for (auto& row : rows)
            for (const char* timed : {"seconds", "references_per_second", "requests_per_second"})
                row.erase(timed);
        return rows;
    };
    EXPECT_EQ(nlohmann::json::parse(alone.output).at("jobs"), 1);
    EXPECT_EQ(nlohmann::json::parse(side_by_side.output).at("jobs"), 4);
    const auto one = results(alone), four = results(side_by_side);
    ASSERT_EQ(one.size(), 9u);
    EXPECT_EQ(one, four);
    EXPECT_EQ(four[0]["policy"], "lru");
    EXPECT_EQ(four[3]["policy"], "ws");
    EXPECT_EQ(four[8]["policy"], "arc");
    EXPECT_LT(four[2]["misses"].get<long>(), four[0]["misses"].get<long>()); // 4M after 256K
    const ToolRun failing = tiersim("--synthetic poisson --policy lru,nope,lfu --cache-size "
                                    "1M,2M --jobs 3");
    EXPECT_EQ(failing.status, 2);
    EXPECT_NE(failing.output.find("nope"), std::string::npos) << failing.output;
    EXPECT_EQ(tiersim("--synthetic poisson --cache-size 1M --jobs 0").status, 2);
    const ToolRun table = tiersim("--synthetic poisson --policy lru,lfu --cache-size 1M --jobs 2");
    ASSERT_EQ(table.status, 0) << table.output;
    EXPECT_NE(table.output.find("Mref/s measured with 2 simulations at once"), std::string::npos)
        << table.output;
}

// A bad option is bad input too, with the option named; --help is not an error.
TEST(Tiersim, BadOptionsExitTwoNamingTheOption) {
    const ToolRun out_of_range =
        tiersim("--synthetic poisson --cache-size 1M --losing-switch-factor 0.5");
    EXPECT_EQ(out_of_range.status, 2);
    EXPECT_NE(out_of_range.output.find("--losing-switch-factor"), std::string::npos)
        << out_of_range.output;
    const ToolRun unknown = tiersim("--synthetic poisson --cache-size 1M --no-such-option");
    EXPECT_EQ(unknown.status, 2);
    EXPECT_NE(unknown.output.find("--no-such-option"), std::string::npos) << unknown.output;
    EXPECT_EQ(tiersim("--help").status, 0);
}

} // namespace
