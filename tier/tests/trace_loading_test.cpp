// load_trace reads a file in blocks of 16 MiB (decompressing on the way) and parses each as it
// comes, so that a loaded trace holds its requests and not the file's bytes. A line or a record
// cut by a block's end, and the line numbers in error messages past the first block, must come
// out as if the whole file had been parsed at once.
#include "trace_files.hpp"
#include "trace_fixture.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace iosig::tier {
namespace {

using test_support::error_of;
using namespace test_support::files;

constexpr std::size_t read_block = std::size_t{16} << 20;

// A block trace of `lines` requests (over 16 MiB of text for 800,000), blank and comment lines
// among them; the last line has no newline.
std::string large_csv(std::size_t lines) {
    std::string text = "version,time,op,size,lbn\n";
    for (std::size_t i = 0; i < lines; ++i) {
        text += fmt::format("1,{},{},{},{}\n", i, i % 3 ? "28" : "2a", 512 * (1 + i % 16),
                            (i * 2654435761u) % 100'000'000);
        if (i % 100'000 == 0) text += "\n# a comment line\n";
    }
    text.pop_back();
    return text;
}

TEST(TraceLoading, CsvLinesAcrossReadBlocksLoadAsTheWholeText) {
    const std::string text = large_csv(800'000);
    ASSERT_GT(text.size(), read_block) << "the file must span more than one read block";
    const Trace expected = parse_csv_trace(text, "big.csv");
    ASSERT_EQ(expected.requests.size(), 800'000u);
    const TempFile plain("big.csv", text);
    expect_same_requests(load_trace(plain.path(), TraceFormat::csv), expected);
    const TempFile zst("big.csv.zst", zstd_compress(text));
    expect_same_requests(load_trace(zst.path(), TraceFormat::csv), expected);
    const TempFile gz("big.csv.gz", gzip_compress(text));
    expect_same_requests(load_trace(gz.path(), TraceFormat::csv), expected);
}

TEST(TraceLoading, ErrorsPastTheFirstBlockNameTheirLine) {
    // The header, 800,000 requests, 8 blank lines and 8 comments, then the bad line: line 800,018.
    const std::string text = large_csv(800'000) + "\n1,0,zz,512,7\n";
    const TempFile plain("bad.csv", text);
    const std::string message = error_of([&] { load_trace(plain.path(), TraceFormat::csv); });
    EXPECT_EQ(message.rfind(plain.path().string() + ":800018: unknown operation 'zz'", 0), 0u)
        << message
        << "\n(parse_csv_trace says: " << error_of([&] { parse_csv_trace(text, "bad.csv"); })
        << ")";
    const TempFile zst("bad.csv.zst", zstd_compress(text));
    EXPECT_EQ(error_of([&] {
                  load_trace(zst.path(), TraceFormat::csv);
              }).rfind(zst.path().string() + ":800018: unknown operation 'zz'", 0),
              0u);
}

TEST(TraceLoading, OracleGeneralRecordsAcrossReadBlocksLoadAsTheWholeFile) {
    // 24-byte records do not divide 16 MiB: records are cut by every block's end.
    std::string bytes;
    for (std::uint32_t i = 0; i < 1'500'000; ++i)
        bytes += oracle_record(i, (std::uint64_t{i} * 2654435761u) % 1'000'003,
                               i % 7 ? 4096 + i % 5 : 0);
    ASSERT_GT(bytes.size(), 2 * read_block);
    const Trace expected = parse_oracle_general(bytes, "big.bin");
    const TempFile plain("big.oracleGeneral.bin", bytes);
    const Trace loaded = load_trace(plain.path(), TraceFormat::oracle_general);
    expect_same_requests(loaded, expected);
    EXPECT_EQ(loaded.skipped_zero_size, expected.skipped_zero_size);
    EXPECT_GT(loaded.skipped_zero_size, 0u);
    const TempFile zst("big.oracleGeneral.bin.zst", zstd_compress(bytes));
    const Trace unpacked = load_trace(zst.path(), TraceFormat::oracle_general);
    expect_same_requests(unpacked, expected);
    const TempFile gz("big.oracleGeneral.bin.gz", gzip_compress(bytes));
    const Trace gunzipped = load_trace(gz.path(), TraceFormat::oracle_general);
    expect_same_requests(gunzipped, expected);
    // The requests' memory is reserved once, from the file's size, the zstd frame's content size
    // or the gzip trailer's, not grown by doubling (up to half again as much).
    EXPECT_EQ(loaded.requests.capacity(), 1'500'000u);
    EXPECT_EQ(unpacked.requests.capacity(), 1'500'000u);
    EXPECT_EQ(gunzipped.requests.capacity(), 1'500'000u);

    const std::string cut = bytes.substr(0, bytes.size() - 5);
    const TempFile truncated("cut.oracleGeneral.bin.zst", zstd_compress(cut));
    EXPECT_EQ(error_of([&] { load_trace(truncated.path(), TraceFormat::oracle_general); }),
              fmt::format("{}: {} bytes is not a whole number of 24-byte oracleGeneral records "
                          "(record 1499999 is truncated)",
                          truncated.path().string(), cut.size()));
}

// A trace that replays nothing would print a table of zeros and exit 0; it is an error instead.
TEST(TraceLoading, TracesWithoutRequestsAreErrorsNamingTheFile) {
    struct Case {
        const char* file;
        const char* content;
        TraceFormat format;
        const char* error;
    };
    for (const Case& c : {
             Case{"empty.oracleGeneral.bin", "", TraceFormat::oracle_general,
                  ": empty trace (no records)"},
             Case{"header.csv", "version,time,op,size,lbn\n", TraceFormat::csv,
                  ": empty trace (no requests after the header)"},
             Case{"zero.csv", "op,size,lbn\nr,0,1\nw,0,2\n", TraceFormat::csv,
                  ": all 2 requests have size 0"},
             Case{"empty.csv", "", TraceFormat::csv, ": empty trace (no header)"},
         }) {
        const TempFile file(c.file, c.content);
        EXPECT_EQ(error_of([&] { load_trace(file.path(), c.format); }),
                  file.path().string() + c.error);
    }
}

// max_requests: the first requests of a trace, without reading (or checking) the rest, so that a
// prefix of a huge trace loads in the prefix's time and memory.
TEST(TraceLoading, APrefixIsReadWithoutTheRest) {
    const std::string good = large_csv(800'000);
    const TempFile csv("prefix.csv", good + "\n1,0,zz,512,7\n");
    const Trace whole = parse_csv_trace(good, "prefix.csv");
    for (const std::uint64_t n : {1u, 1000u, 800'000u}) {
        const Trace prefix = load_trace(csv.path(), TraceFormat::csv, std::nullopt, n);
        ASSERT_EQ(prefix.requests.size(), n);
        for (std::size_t i = 0; i < n; ++i)
            ASSERT_EQ(prefix.requests[i].id, whole.requests[i].id) << i;
    }
    EXPECT_EQ(error_of([&] {
                  load_trace(csv.path(), TraceFormat::csv, std::nullopt, 800'001);
              }).rfind(csv.path().string() + ":800018: unknown operation 'zz'", 0),
              0u)
        << "one request more reaches the bad line";

    std::string bytes;
    for (std::uint32_t i = 0; i < 1'000'000; ++i)
        bytes += oracle_record(i, i, i % 7 ? 4096 : 0);
    const TempFile bin("prefix.oracleGeneral.bin.zst", zstd_compress(bytes + "junk!"));
    const Trace first = load_trace(bin.path(), TraceFormat::oracle_general, std::nullopt, 10);
    ASSERT_EQ(first.requests.size(), 10u);
    EXPECT_EQ(first.requests.front().id, 1u);
    EXPECT_EQ(first.requests.back().id, 11u);
    EXPECT_EQ(first.skipped_zero_size, 2u) << "records 0 and 7, none after the tenth request";
    EXPECT_NE(error_of([&] { load_trace(bin.path(), TraceFormat::oracle_general); }), "")
        << "the whole file ends inside a record";
}

} // namespace
} // namespace iosig::tier
