// The iosig-tierbench command on a block trace, as a user runs it (no lab: both directories in a
// scratch directory, the tier run only): the trace's requests reach the engine with their sizes and
// directions, the model counts the same fills and misses, and bad input exits 2 naming the file.
#include "engine_fixture.hpp"
#include "iosig/tier/trace.hpp"
#include "tool_run.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <nlohmann/json.hpp>

namespace {

using iosig::tier::Request;
using iosig::tier::Trace;
using iosig::tier::TraceKind;
using iosig::tier::test_support::ScratchDir;

using iosig::tier::test_support::ToolRun;

ToolRun tierbench(const ScratchDir& dir, const std::string& arguments) {
    return iosig::tier::test_support::run_tool(std::string(IOSIG_BINARY_DIR) +
                                               "/bin/iosig-tierbench --cache-dir " +
                                               (dir / "cache").string() + " --home-dir " +
                                               (dir / "home").string() + " " + arguments + " 2>&1");
}

// A fast and a slow device with one mount each, on the scratch directory's two folders; their
// performance figures as given (YAML flow maps).
constexpr const char* fast_figures = "{seq_read_bw: 4G/s, seq_write_bw: 4G/s, op_latency: 2us}";
constexpr const char* slow_figures = "{seq_read_bw: 20M/s, seq_write_bw: 20M/s, max_iops: 200}";
void write_node(const ScratchDir& dir, const std::string& fast = fast_figures,
                const std::string& slow = slow_figures) {
    std::ofstream(dir / "node.yaml")
        << "devices:\n"
           "  fast: {media: ram, capacity: 1G, performance: "
        << fast
        << "}\n"
           "  slow: {media: hdd, rotational: true, capacity: 1G, performance: "
        << slow
        << "}\n"
           "mounts:\n"
           "  - {path: "
        << (dir / "cache").string()
        << ", device: fast, capacity: 1G, free: 1G}\n"
           "  - {path: "
        << (dir / "home").string() << ", device: slow, capacity: 1G, free: 1G}\n";
}

TEST(Tierbench, ReplaysATraceThroughTheTierAndCountsWhatTheModelCounts) {
    ScratchDir dir;
    std::filesystem::create_directories(dir / "cache");
    std::filesystem::create_directories(dir / "home");
    write_node(dir);
    // 100 lines far apart, each first written in part (512 bytes: the engine must read the line
    // before writing it), then read twice; and 50 requests beyond the replayed 350.
    Trace t;
    t.kind = TraceKind::blocks;
    for (std::uint64_t i = 0; i < 100; ++i)
        t.requests.push_back(Request{i * 1000 * 4096 + 512, 512, true});
    for (int round = 0; round < 2; ++round)
        for (std::uint64_t i = 0; i < 100; ++i)
            t.requests.push_back(Request{i * 1000 * 4096, 4096, false});
    for (std::uint64_t i = 0; i < 50; ++i)
        t.requests.push_back(Request{(5000 + i) * 1000 * 4096, 4096, false});
    iosig::tier::write_csv_trace(t, dir / "trace.csv");

    const ToolRun run = tierbench(dir, "--trace " + (dir / "trace.csv").string() +
                                           " --requests 300 --mode tier --policy lru --node " +
                                           (dir / "node.yaml").string() + " --json");
    ASSERT_EQ(run.status, 0) << run.output;
    const auto out = nlohmann::json::parse(run.output);
    EXPECT_EQ(out["pattern"], "trace");
    EXPECT_EQ(out["requests"], 300);
    EXPECT_EQ(out["reads"], 200);
    EXPECT_EQ(out["writes"], 100);
    EXPECT_EQ(out["working_set"], 100 * 4096) << "only the lines the 300 requests touch";
    const auto& stats = out["measured"]["stats"];
    EXPECT_EQ(stats["write_misses"], 100);
    EXPECT_EQ(stats["fills"], 100) << "a partial write of a missing line reads it first";
    EXPECT_EQ(stats["read_hits"], 200);
    EXPECT_EQ(stats["writebacks"], 100) << "close writes every dirty line home";
    EXPECT_EQ(out["model"]["misses"], 100);
    EXPECT_EQ(out["model"]["fills"], 100);
    EXPECT_EQ(out["model"]["writebacks"], 100);
    // 100 fills at 200 IOPS and 100 write-backs with their syncs: at least half a second.
    EXPECT_GT(out["model"]["tier_seconds"].get<double>(), 0.5);
    EXPECT_TRUE(out.contains("model_error"));

    // --requests 0 replays the whole trace: all 350 requests, 150 lines.
    const ToolRun all = tierbench(dir, "--trace " + (dir / "trace.csv").string() +
                                           " --requests 0 --mode model --policy lru --json");
    ASSERT_EQ(all.status, 0) << all.output;
    const auto whole = nlohmann::json::parse(all.output);
    EXPECT_EQ(whole["requests"], 350);
    EXPECT_EQ(whole["working_set"], 150 * 4096);
    const ToolRun none = tierbench(dir, "--requests 0 --mode model");
    EXPECT_EQ(none.status, 2) << none.output;
    EXPECT_NE(none.output.find("--requests must be at least 1"), std::string::npos) << none.output;
}

// The model's times follow the node YAML's figures; the ones tagged !default (or inferred by the
// loader) are guesses, and the report names those the rates of this run came from.
TEST(Tierbench, TheModelNamesTheFiguresThatAreDefaultsNotMeasurements) {
    ScratchDir dir;
    std::filesystem::create_directories(dir / "cache");
    std::filesystem::create_directories(dir / "home");
    write_node(dir); // no tags: every figure as the user gave it
    const std::string model_only =
        "--working-set 64K --requests 10 --mode model --node " + (dir / "node.yaml").string();
    ToolRun run = tierbench(dir, model_only + " --pattern sequential --json");
    ASSERT_EQ(run.status, 0) << run.output;
    EXPECT_EQ(nlohmann::json::parse(run.output)["model"]["default_figures"],
              nlohmann::json::array());
    run = tierbench(dir, model_only + " --pattern sequential");
    EXPECT_EQ(run.output.find("model figures"), std::string::npos) << run.output;

    write_node(dir, "{seq_read_bw: !measured 4G/s, seq_write_bw: 4G/s, op_latency: !default 2us}",
               "{seq_read_bw: 20M/s, seq_write_bw: 20M/s, max_iops: !default 200}");
    run = tierbench(dir, model_only + " --pattern sequential --json");
    ASSERT_EQ(run.status, 0) << run.output;
    EXPECT_EQ(nlohmann::json::parse(run.output)["model"]["default_figures"],
              nlohmann::json::parse(R"(["devices.fast.performance.op_latency",
                                        "devices.slow.performance.max_iops"])"));
    run = tierbench(dir, model_only + " --pattern sequential");
    EXPECT_NE(run.output.find("defaults, not measurements, in the node YAML: fast: op_latency; "
                              "slow: max_iops"),
              std::string::npos)
        << run.output;
    // Random IO takes the random bandwidths, which the loader inferred from the sequential ones.
    run = tierbench(dir, model_only + " --pattern random --json");
    ASSERT_EQ(run.status, 0) << run.output;
    const auto figures = nlohmann::json::parse(run.output)["model"]["default_figures"];
    EXPECT_NE(std::find(figures.begin(), figures.end(), "devices.slow.performance.rand_read_bw"),
              figures.end())
        << figures.dump();
}

// An oracleGeneral record: u32 time, u64 object id, u32 size, i64 next access (libCacheSim).
void append_record(std::string& bytes, std::uint64_t id, std::uint32_t size) {
    const std::uint32_t time = 0;
    const std::int64_t next = -1;
    bytes.append(reinterpret_cast<const char*>(&time), 4);
    bytes.append(reinterpret_cast<const char*>(&id), 8);
    bytes.append(reinterpret_cast<const char*>(&size), 4);
    bytes.append(reinterpret_cast<const char*>(&next), 8);
}

// An object trace has no offsets of its own: its objects are laid end to end in id order, or,
// when the ids are block addresses, placed at id x unit.
TEST(Tierbench, ReplaysAnObjectTraceEndToEndOrAtItsBlockAddresses) {
    ScratchDir dir;
    std::filesystem::create_directories(dir / "cache");
    std::filesystem::create_directories(dir / "home");
    std::string bytes;
    for (const std::uint64_t id : {7, 3, 7, 3})
        append_record(bytes, id, id == 3 ? 8192 : 4096);
    std::ofstream(dir / "objects.oracleGeneral.bin", std::ios::binary) << bytes;
    const std::string trace = (dir / "objects.oracleGeneral.bin").string();

    const ToolRun end_to_end =
        tierbench(dir, "--trace " + trace + " --mode tier --policy lru --json");
    ASSERT_EQ(end_to_end.status, 0) << end_to_end.output;
    auto out = nlohmann::json::parse(end_to_end.output);
    EXPECT_NE(out["trace"].get<std::string>().find("(objects end to end)"), std::string::npos);
    EXPECT_EQ(out["working_set"], 3 * 4096) << "object 3 in lines 0-1, object 7 in line 2";
    EXPECT_EQ(out["measured"]["stats"]["fills"], 3);
    EXPECT_EQ(out["reads"], 4);

    // Ids in 4 KiB units: object 3 is lines 3-4, object 7 line 7; the gap between goes.
    const ToolRun addresses =
        tierbench(dir, "--trace " + trace + " --id-unit 4K --mode tier --policy lru --json");
    ASSERT_EQ(addresses.status, 0) << addresses.output;
    out = nlohmann::json::parse(addresses.output);
    EXPECT_NE(out["trace"].get<std::string>().find("(ids x 4096 B)"), std::string::npos);
    EXPECT_EQ(out["working_set"], 3 * 4096);
    EXPECT_EQ(out["measured"]["stats"]["fills"], 3);

    const ToolRun unit_zero = tierbench(dir, "--trace " + trace + " --id-unit 0 --mode tier");
    EXPECT_EQ(unit_zero.status, 2) << unit_zero.output;
    EXPECT_NE(unit_zero.output.find("at least 1 byte"), std::string::npos) << unit_zero.output;
}

// A cache or home file too large for its directory's file system is refused before anything runs
// (before, the direct run went first and the tier run failed with ENOSPC minutes later).
// A scan through the engine with the stream prefetcher reads fewer, larger runs when its window
// may grow (the default) than with --prefetch-window 8.
TEST(Tierbench, APrefetchedScanReadsLargerRunsWithAGrowingWindow) {
    ScratchDir dir;
    std::filesystem::create_directories(dir / "cache");
    std::filesystem::create_directories(dir / "home");
    const auto scan = [&](const std::string& extra) {
        const ToolRun run = tierbench(dir, "--working-set 4M --requests 1024 --pattern sequential "
                                           "--policy lru --prefetch stream --mode tier --json " +
                                               extra);
        EXPECT_EQ(run.status, 0) << run.output;
        return nlohmann::json::parse(run.output)["measured"]["stats"];
    };
    const auto reads = [](const nlohmann::json& stats) {
        return stats["fill_reads"].get<int>() + stats["prefetch_reads"].get<int>();
    };
    const nlohmann::json fixed = scan("--prefetch-window 8"), grown = scan("");
    EXPECT_EQ(grown["fills"].get<int>() + grown["prefetch_hits"].get<int>(), 1024);
    EXPECT_EQ(fixed["fills"].get<int>() + fixed["prefetch_hits"].get<int>(), 1024);
    EXPECT_LT(3 * reads(grown), reads(fixed)) << grown.dump() << "\n" << fixed.dump();
}

// With --sequential-cutoff the model predicts a bypassed scan's reads through the page cache: its
// reads, bytes and time, with the readahead it assumed and where that came from (on tmpfs, no
// block device: the kernel's default). Bypassed writes go to the page cache, and the flusher's
// sync of the home file writes them: in the model's time too.
TEST(Tierbench, TheModelReadsABypassedScanThroughTheReadahead) {
    ScratchDir dir;
    std::filesystem::create_directories(dir / "cache");
    std::filesystem::create_directories(dir / "home");
    write_node(dir);
    const std::string common = "--working-set 8M --requests 2048 --pattern sequential --policy lru "
                               "--mode model --sequential-cutoff 1M --json --node " +
                               (dir / "node.yaml").string();
    const ToolRun reads = tierbench(dir, common);
    ASSERT_EQ(reads.status, 0) << reads.output;
    const auto model = nlohmann::json::parse(reads.output)["model"];
    EXPECT_EQ(model["bypassed_bytes"], 7u << 20);
    EXPECT_EQ(model["bypass_read_bytes"], 7u << 20);
    EXPECT_EQ(model["fill_reads"], 256);
    EXPECT_GT(model["bypass_reads"].get<int>(), 7 * 1024 / 128) << "IOs of a window at most";
    EXPECT_GT(model["bypass_seconds"].get<double>(), 0.3) << "7 MiB at 20 MiB/s";
    EXPECT_GT(model["tier_seconds"].get<double>(), model["bypass_seconds"].get<double>());
    EXPECT_FALSE(model.contains("not_modelled")) << model.dump();
    // No readahead in the node YAML: the home directory's device (none on tmpfs: the default).
    const std::string from = model["readahead"]["from"];
    EXPECT_TRUE(from.find("kernel's default") != std::string::npos ||
                from.find("/queue") != std::string::npos)
        << model.dump();
    // The node YAML's readahead for the home device comes first: a page at a time, a read a page.
    std::string node_text;
    {
        std::ifstream in(dir / "node.yaml");
        node_text.assign(std::istreambuf_iterator<char>(in), {});
    }
    const std::string limit = "max_iops: 200}";
    ASSERT_NE(node_text.find(limit), std::string::npos) << node_text;
    node_text.replace(node_text.find(limit), limit.size(),
                      "max_iops: 200, read_ahead: 4K, max_io: 4K}");
    std::ofstream(dir / "node.yaml") << node_text;
    const ToolRun paged = tierbench(dir, common);
    ASSERT_EQ(paged.status, 0) << paged.output;
    const auto page_model = nlohmann::json::parse(paged.output)["model"];
    EXPECT_EQ(page_model["bypass_reads"], 1792) << page_model.dump();
    EXPECT_EQ(page_model["readahead"]["window"], 4096);
    EXPECT_NE(page_model["readahead"]["from"].get<std::string>().find("node YAML"),
              std::string::npos)
        << page_model.dump();
    const ToolRun writes = tierbench(dir, common + " --write-ratio 1");
    ASSERT_EQ(writes.status, 0) << writes.output;
    const auto written = nlohmann::json::parse(writes.output)["model"];
    EXPECT_EQ(written["bypass_write_bytes"], 7u << 20) << written.dump();
    EXPECT_EQ(written["writebacks"], 256) << "the first MiB's lines, not the bypassed ones";
    // The first MiB is still dirty at close (written in milliseconds, ripe after 0.5 s): close's
    // first batch syncs the home file and so writes the 7 MiB, in IOs of the node YAML's max_io
    // (4K, above): 1,792 writes at 200 a second.
    EXPECT_EQ(written["bypass_synced_bytes"], 7u << 20);
    EXPECT_EQ(written["bypass_deferred_bytes"], 0);
    EXPECT_EQ(written["bypass_writes"], 1792);
    EXPECT_GT(written["tier_seconds"].get<double>(), 1792 / 200.0) << written.dump();
    EXPECT_LT(written["tier_seconds"].get<double>(), 1.1 * 1792 / 200.0) << written.dump();
}

TEST(Tierbench, SizesTheFileSystemsCannotHoldExitTwoBeforeAnyRun) {
    ScratchDir dir;
    std::filesystem::create_directories(dir / "cache");
    std::filesystem::create_directories(dir / "home");
    const ToolRun cache = tierbench(dir, "--working-set 1M --requests 10 --cache-size 1024P");
    EXPECT_EQ(cache.status, 2) << cache.output;
    EXPECT_NE(cache.output.find("--cache-size"), std::string::npos) << cache.output;
    EXPECT_NE(cache.output.find("needs"), std::string::npos) << cache.output;
    EXPECT_NE(cache.output.find((dir / "cache").string() + ", which has"), std::string::npos)
        << cache.output;
    EXPECT_FALSE(std::filesystem::exists(dir / "home" / "iosig-tierbench.dat"))
        << "no home file written, no run made";

    const ToolRun home =
        tierbench(dir, "--working-set 1024P --io-size 4K --requests 10 --mode direct");
    EXPECT_EQ(home.status, 2) << home.output;
    EXPECT_NE(home.output.find("the home file needs"), std::string::npos) << home.output;
    // The model alone needs no files at all.
    const ToolRun model =
        tierbench(dir, "--working-set 1024P --io-size 4K --requests 10 --mode model");
    EXPECT_EQ(model.status, 0) << model.output;
    EXPECT_FALSE(std::filesystem::exists(dir / "home" / "iosig-tierbench.dat"));
    // A line size the engine cannot take is named as such, before any other size is checked in
    // lines, and also when only the model would run.
    for (const char* mode : {"tier", "model"})
        for (const char* size : {"2K", "2M", "3K"}) {
            const ToolRun line =
                tierbench(dir, fmt::format("--requests 10 --line-size {} --mode {}", size, mode));
            EXPECT_EQ(line.status, 2) << line.output;
            EXPECT_NE(
                line.output.find(fmt::format(
                    "--line-size {}: the engine's lines are a power of two from 4K to 1M", size)),
                std::string::npos)
                << line.output;
        }
}

TEST(Tierbench, BadTraceInputExitsTwoNamingTheFileAndLine) {
    ScratchDir dir;
    std::filesystem::create_directories(dir / "cache");
    std::filesystem::create_directories(dir / "home");
    std::ofstream(dir / "bad.csv") << "version,time,op,size,lbn\n1,0,28,4096,12\n1,1,28,many,13\n";
    const ToolRun bad = tierbench(dir, "--trace " + (dir / "bad.csv").string() + " --mode tier");
    EXPECT_EQ(bad.status, 2) << bad.output;
    EXPECT_NE(bad.output.find("bad.csv:3"), std::string::npos) << bad.output;

    const ToolRun both =
        tierbench(dir, "--trace " + (dir / "bad.csv").string() + " --pattern zipf --mode tier");
    EXPECT_EQ(both.status, 2) << both.output;
    EXPECT_NE(both.output.find("--trace excludes --pattern"), std::string::npos) << both.output;

    const ToolRun missing = tierbench(dir, "--trace " + (dir / "none.csv").string());
    EXPECT_EQ(missing.status, 2) << missing.output;
    EXPECT_NE(missing.output.find("none.csv"), std::string::npos) << missing.output;
}

} // namespace
