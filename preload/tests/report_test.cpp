// The report: per-process JSON lines (the shim's format, docs/report.md) merged per file with the
// journal, rendered as a table, and `--suggest` signatures inferred from the observations.
// Suggestions must be right on known access patterns and must parse back with the core parser
// (rules file and pragma).
#include "common/rules.hpp"
#include "iosig/signature.hpp"
#include "scratch.hpp"
#include "tools/report_model.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace iosig;
using namespace iosig::preload;
using namespace iosig::preload::testing;
using json = nlohmann::json;

namespace {

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB;

// `calls` writes of `size` bytes through `family`, a fraction `sequential` of them sequential.
FileSummary observed(const std::string& path, const std::string& family, std::uint64_t calls,
                     std::uint64_t size, double sequential, std::uint64_t final_size) {
    FileSummary f;
    f.path = path;
    f.ops[family] = calls;
    f.bytes[family] = calls * size;
    std::uint64_t bucket = 1;
    while (bucket * 2 <= size)
        bucket *= 2;
    f.histogram[bucket] = calls;
    f.sequential = static_cast<std::uint64_t>(static_cast<double>(calls) * sequential);
    f.nonsequential = calls - f.sequential;
    f.final_size = final_size;
    f.max_extent = final_size;
    return f;
}

Signature parsed(const std::string& text) {
    auto result = parse_signature(text);
    EXPECT_TRUE(result.value) << "does not parse: " << text;
    return result.value.value_or(Signature{});
}

TEST(Suggest, SequentialOneMiBWritesGiveSequentialOneMiBPerIOAndTheTotalSize) {
    const auto s = infer_signature(observed("/scratch/ckpt.h5", "write", 640, MiB, 1.0, 640 * MiB));
    EXPECT_EQ(to_canonical(s),
              to_canonical(parsed("sequential persist size-per-IO(1M) totalsize(1G)")));
    EXPECT_EQ(s.pattern, AccessPattern::sequential);
    EXPECT_EQ(s.size_per_io, MiB);
    EXPECT_EQ(s.total_size, 1024 * MiB) << "640 MiB rounded up to a power of two";
    EXPECT_EQ(s.persistence, Persistence::persist);
}

TEST(Suggest, Random4KiBWritesGiveRandom4K) {
    const auto s =
        infer_signature(observed("/scratch/db.sqlite", "pwrite", 100000, 4 * KiB, 0.1, 256 * MiB));
    EXPECT_EQ(s.pattern, AccessPattern::random);
    EXPECT_EQ(s.size_per_io, 4 * KiB);
    EXPECT_EQ(s.total_size, 256 * MiB);
    EXPECT_EQ(to_canonical(s),
              to_canonical(parsed("random persist size-per-IO(4K) totalsize(256M)")));
}

TEST(Suggest, AFileDeletedBeforeExitIsTemp) {
    auto f = observed("/scratch/sort.run1", "write", 100, 64 * KiB, 1.0, 0);
    f.deleted = true;
    const auto s = infer_signature(f);
    EXPECT_EQ(s.persistence, Persistence::temp);
    EXPECT_EQ(s.total_size, 8 * MiB) << "deleted files have no final size: the bytes written count";
}

TEST(Suggest, TheIOSizeCarryingMostBytesWinsOverTheMostFrequentOne) {
    auto f = observed("/scratch/out.dat", "write", 1000, 100, 1.0, 0); // 1000 tiny header writes
    f.histogram[8 * MiB] = 100; // ... and 800 MiB in 8 MiB writes
    f.ops["write"] += 100;
    f.bytes["write"] += 100 * 8 * MiB;
    f.sequential += 100;
    EXPECT_EQ(infer_signature(f).size_per_io, 8 * MiB);
}

TEST(Suggest, TotalSizeIsTheFinalSizeNotTheBytesOverwritten) {
    const auto s =
        infer_signature(observed("/scratch/db.sqlite", "pwrite", 4096, 4 * KiB, 0.0, 4 * MiB));
    EXPECT_EQ(s.total_size, 4 * MiB) << "16 MiB written over a 4 MiB file";
}

TEST(Suggest, SmallStdioWritesReachTheFileInBufferSizedIOs) {
    const auto s = infer_signature(observed("/scratch/log.txt", "stdio", 100000, 64, 1.0, 6400000));
    EXPECT_EQ(s.size_per_io, 4 * KiB);
}

TEST(Suggest, GroupsSimilarFilesOfADirectoryIntoOneGlob) {
    JobReport report;
    for (int i = 0; i < 3; ++i)
        report.files.push_back(observed("/scratch/run/part-" + std::to_string(i) + ".dat", "write",
                                        64, MiB, 1.0,
                                        (64 + 100 * static_cast<std::uint64_t>(i)) * MiB));
    report.files.push_back(
        observed("/scratch/run/index.db", "pwrite", 5000, 4 * KiB, 0.0, 20 * MiB));
    const auto suggestions = suggest(report);
    ASSERT_EQ(suggestions.size(), 2u);
    EXPECT_EQ(suggestions[0].match, "/scratch/run/*.dat");
    EXPECT_EQ(suggestions[0].files.size(), 3u);
    EXPECT_EQ(suggestions[0].signature.total_size, 512 * MiB)
        << "the largest of the group (264 MiB) rounded up";
    EXPECT_EQ(suggestions[1].match, "/scratch/run/index.db");
    EXPECT_EQ(suggestions[1].signature.pattern, AccessPattern::random);
}

TEST(Suggest, OutputIsARulesFileAndPragmasTheCoreParserAccepts) {
    JobReport report;
    report.files.push_back(observed("/scratch/ckpt.h5", "write", 640, MiB, 1.0, 640 * MiB));
    report.files.push_back(
        observed("/scratch/db.sqlite", "pwrite", 10000, 4 * KiB, 0.1, 256 * MiB));
    auto temp = observed("/scratch/odd \"[name]*.tmp", "write", 10, 64 * KiB, 1.0, 0);
    temp.deleted = true;
    report.files.push_back(temp);
    const auto suggestions = suggest(report);
    ASSERT_EQ(suggestions.size(), 3u);
    const std::string text = render_suggestions(suggestions);

    const auto rules = load_rules_text(text, "suggested.yaml");
    ASSERT_TRUE(rules.ok()) << rules.message() << "\n" << text;
    ASSERT_EQ(rules.rules->rules().size(), 3u);
    for (const auto& s : suggestions) {
        const auto& f = s.files.front();
        const Rule* rule = rules.rules->match(f);
        ASSERT_NE(rule, nullptr) << "no suggested rule matches " << f << "\n" << text;
        ASSERT_TRUE(rule->signature);
        EXPECT_EQ(to_canonical(*rule->signature), to_canonical(s.signature)) << f;
    }
    EXPECT_EQ(rules.rules->match("/scratch/odd \"nfoo.tmp"), nullptr)
        << "the literal path's [ ] must be escaped";

    std::size_t pragmas = 0;
    for (std::size_t at = text.find("#pragma "); at != std::string::npos;
         at = text.find("#pragma ", at + 1)) {
        const auto end = text.find('\n', at);
        const std::string line = text.substr(at + 8, end - at - 8);
        const auto directive = parse_directive(line);
        ASSERT_TRUE(directive.value) << "pragma does not parse: " << line;
        EXPECT_EQ(directive.value->kind, DirectiveKind::sig);
        EXPECT_EQ(to_canonical(directive.value->params),
                  to_canonical(suggestions[pragmas].signature));
        ++pragmas;
    }
    EXPECT_EQ(pragmas, 3u);
}

// --- merging the shim's per-process reports ----------------------------------------------------

json file_entry(const std::string& path, const std::string& staged, bool created, bool inherited,
                std::uint64_t writes, std::uint64_t bytes, std::int64_t open_ns) {
    return {{"path", path},
            {"staged", staged},
            {"mount", staged.empty() ? "" : "/mnt/ramdisk"},
            {"rule", staged.empty() ? "" : "*.dat"},
            {"rule_where", staged.empty() ? "" : "rules.yaml:3:12"},
            {"signature", staged.empty() ? "" : "sequential persist"},
            {"source", inherited ? "inherited" : "rule"},
            {"placement", staged.empty() ? "not redirected: already on the best mount"
                                         : "redirected to /mnt/ramdisk"},
            {"api", "open"},
            {"redirected", !staged.empty()},
            {"created", created},
            {"inherited", inherited},
            {"deleted", false},
            {"renamed_to", nullptr},
            {"relocated", false},
            {"open_ns", open_ns},
            {"close_ns", open_ns + 2000000000},
            {"open_at_exit", false},
            {"ops", {{"write", writes}}},
            {"bytes", {{"write", bytes}}},
            {"histogram", {{std::to_string(bytes / writes), writes}}},
            {"sequential", writes},
            {"nonsequential", 0},
            {"errors", 0},
            {"write_ns", 1000000000},
            {"sampled_calls", writes},
            {"fsyncs", 1},
            {"fsync_ns", 5000000},
            {"flushes", 0},
            {"flush_ns", 0},
            {"max_extent", bytes},
            {"final_size", bytes},
            {"several_writers", false}};
}

json process(long pid, json files) {
    return {{"iosig_report", 1},
            {"job", "job-9"},
            {"run", "run-1"},
            {"pid", pid},
            {"ppid", 1},
            {"exe", "/usr/bin/dd"},
            {"argv", json::array({"dd"})},
            {"start_ns", 1},
            {"end_ns", 2},
            {"exec", false},
            {"files", std::move(files)}};
}

TEST(Report, MergesProcessesOfOneFileAndAddsTheJournalsView) {
    ScratchDir dir;
    const std::string staged = "/mnt/ramdisk/.iosig-0/job-9/out.dat";
    const std::string lines =
        process(100,
                json::array({file_entry("/home/u/out.dat", staged, true, false, 4, 4 * MiB, 1000)}))
            .dump() +
        "\n" +
        process(101, json::array({file_entry(staged, staged, false, true, 4, 4 * MiB, 2000),
                                  file_entry("/home/u/other.log", "", true, false, 10, 1000, 500)}))
            .dump() +
        "\n";
    write_file(dir.path() / "report.jsonl", lines);
    const auto processes = read_process_reports(dir.path() / "report.jsonl");
    ASSERT_EQ(processes.size(), 2u);

    JobJournal journal;
    Redirection r;
    r.staged = staged;
    r.original = "/home/u/out.dat";
    r.current = "/home/u/final.dat"; // renamed by the program
    r.mount = "/mnt/ramdisk";
    r.source = "rule";
    r.finalized = "home";
    journal.redirections.push_back(r);
    const JobReport report = build_report(processes, &journal);

    ASSERT_EQ(report.files.size(), 2u);
    EXPECT_EQ(report.files[0].path, "/home/u/other.log") << "first-open order";
    const FileSummary& out = report.files[1];
    EXPECT_EQ(out.path, "/home/u/final.dat");
    EXPECT_EQ(out.total_bytes(), 8 * MiB) << "both processes' writes";
    EXPECT_EQ(out.total_ops(), 8u);
    EXPECT_EQ(out.pids, (std::vector<long>{100, 101}));
    EXPECT_EQ(out.finalized, "home");
    EXPECT_EQ(out.placement, "redirected to /mnt/ramdisk");

    const std::string table = render_table(report);
    EXPECT_NE(table.find("/home/u/final.dat"), std::string::npos) << table;
    EXPECT_NE(table.find("redirected to /mnt/ramdisk"), std::string::npos) << table;
    EXPECT_NE(table.find("rule *.dat (rules.yaml:3:12): sequential persist"), std::string::npos)
        << table;
    EXPECT_NE(table.find("4 MiB/s"), std::string::npos) << "8 MiB in 2 s of write calls\n" << table;
    EXPECT_NE(table.find("finalize: home"), std::string::npos) << table;

    const json merged = to_json(report);
    EXPECT_EQ(merged["files"][1]["total_bytes"], 8 * MiB);
    write_file(dir.path() / "merged.json", merged.dump());
    auto reread = build_report(read_process_reports(dir.path() / "merged.json"), nullptr);
    EXPECT_EQ(reread.files.size(), 2u) << "a merged report reads back";
    EXPECT_EQ(reread.files[1].finalized, "");
    add_recorded_outcomes(reread, dir.path() / "merged.json");
    EXPECT_EQ(reread.files[1].finalized, "home")
        << "finalize's outcome kept in the merged document";
}

TEST(Report, ABadLineNamesTheFileAndLine) {
    ScratchDir dir;
    write_file(dir.path() / "r.jsonl", process(1, json::array()).dump() + "\n{not json\n");
    try {
        read_process_reports(dir.path() / "r.jsonl");
        FAIL() << "no error";
    } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find("r.jsonl:2:"), std::string::npos) << e.what();
    }
}

} // namespace
