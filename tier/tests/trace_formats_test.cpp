// Traces as they are published: compressed with zstd (cacheMon's cache_dataset) or gzip,
// oracleGeneral files with size-0 records (libCacheSim skips them), and object traces in csv with
// hashed keys.
#include "iosig/tier/simulator.hpp"
#include "trace_files.hpp"
#include "trace_fixture.hpp"

#include <gtest/gtest.h>

namespace iosig::tier {
namespace {

using test_support::error_of;
using namespace test_support::files;

TEST(TraceFormats, ZstdCompressedSharedTraceGivesTheGoldenLruMisses) {
    const Trace* plain = test_support::cloud_physics_oracle();
    IOSIG_REQUIRE_TRACE(plain, "cloudPhysicsIO.oracleGeneral.bin");
    const TempFile zst(
        "cloudPhysicsIO.oracleGeneral.bin.zst",
        zstd_compress(read_file(test_support::shared_trace("cloudPhysicsIO.oracleGeneral.bin"))));
    EXPECT_EQ(guess_trace_format(zst.path()), TraceFormat::oracle_general);
    const Trace t = load_trace(zst.path(), TraceFormat::oracle_general);
    expect_same_requests(t, *plain);
    SimConfig config;
    config.cache_size = 128ull << 20;
    EXPECT_EQ(simulate(t, config).misses, 93374u); // NOTES.md, libCacheSim LRU at 128 MiB
}

TEST(TraceFormats, GzipCompressedCsvReadsLikeThePlainOne) {
    const Trace* plain = test_support::cloud_physics_csv();
    IOSIG_REQUIRE_TRACE(plain, "cloudPhysicsIO.csv");
    const TempFile gz("cloudPhysicsIO.csv.gz",
                      gzip_compress(read_file(test_support::shared_trace("cloudPhysicsIO.csv"))));
    EXPECT_EQ(guess_trace_format(gz.path()), TraceFormat::csv);
    expect_same_requests(load_trace(gz.path(), TraceFormat::csv), *plain);
}

TEST(TraceFormats, ConcatenatedFramesAreOneTrace) {
    const std::string first = oracle_record(0, 1, 100) + oracle_record(1, 2, 200);
    const std::string second = oracle_record(2, 3, 300);
    const TempFile zst("two-frames.bin.zst", zstd_compress(first) + zstd_compress(second));
    const Trace z = load_trace(zst.path(), TraceFormat::oracle_general);
    ASSERT_EQ(z.requests.size(), 3u);
    EXPECT_EQ(z.requests[2].id, 3u);
    const TempFile gz("two-members.bin.gz", gzip_compress(first) + gzip_compress(second));
    const Trace g = load_trace(gz.path(), TraceFormat::oracle_general);
    ASSERT_EQ(g.requests.size(), 3u);
    EXPECT_EQ(g.requests[2].size, 300u);
}

TEST(TraceFormats, TruncatedOrCorruptCompressedTracesNameTheFile) {
    std::string records;
    for (std::uint32_t i = 0; i < 5000; ++i)
        records += oracle_record(i, i * 7919 % 1000, 4096);
    const std::string zst = zstd_compress(records);
    const TempFile truncated("truncated.bin.zst", zst.substr(0, zst.size() / 2));
    EXPECT_EQ(error_of([&] { load_trace(truncated.path(), TraceFormat::oracle_general); }),
              truncated.path().string() + ": the zstd stream is truncated (ends inside a frame)");
    std::string broken = zst;
    for (std::size_t i = 8; i < broken.size(); i += 3)
        broken[i] = static_cast<char>(broken[i] ^ 0x5a);
    const TempFile corrupt("corrupt.bin.zst", broken);
    EXPECT_EQ(error_of([&] {
                  load_trace(corrupt.path(), TraceFormat::oracle_general);
              }).rfind(corrupt.path().string() + ": corrupt zstd data near compressed byte", 0),
              0u);
    const std::string gz = gzip_compress(records);
    const TempFile gz_truncated("truncated.bin.gz", gz.substr(0, gz.size() / 2));
    EXPECT_EQ(error_of([&] { load_trace(gz_truncated.path(), TraceFormat::oracle_general); }),
              gz_truncated.path().string() + ": the gzip stream is truncated");
}

TEST(TraceFormats, OracleGeneralSkipsAndCountsSizeZeroRecordsAsLibCacheSimDoes) {
    const std::string bytes = oracle_record(0, 5, 100) + oracle_record(1, 6, 0) +
                              oracle_record(2, 5, 100) + oracle_record(3, 7, 0);
    const Trace t = parse_oracle_general(bytes, "t.bin");
    ASSERT_EQ(t.requests.size(), 2u);
    EXPECT_EQ(t.skipped_zero_size, 2u);
    EXPECT_EQ(t.requests[1].id, 5u);
    EXPECT_EQ(error_of([] { parse_oracle_general(oracle_record(0, 1, 0), "z.bin"); }),
              "z.bin: all 1 records have size 0");
}

TEST(TraceFormats, CsvObjectTracesWithHashedKeys) {
    const Trace t = parse_csv_trace("timestamp,key,obj_size,op\n"
                                    "0,a1b2c3,120,get\n"
                                    "1,a1b2c3,120,set\n"
                                    "2,42,64,get\n"
                                    "3,zz,0,get\n",
                                    "kv.csv");
    EXPECT_EQ(t.kind, TraceKind::objects);
    ASSERT_EQ(t.requests.size(), 3u);
    EXPECT_EQ(t.skipped_zero_size, 1u);
    EXPECT_EQ(t.requests[0].id, t.requests[1].id); // the same key, the same object
    EXPECT_FALSE(t.requests[0].write);
    EXPECT_TRUE(t.requests[1].write);
    EXPECT_EQ(t.requests[2].id, 42u); // decimal ids are kept as they are
    EXPECT_EQ(t.requests[2].size, 64u);
    SimConfig config;
    config.cache_size = 1000;
    const SimResult r = simulate(t, config);
    EXPECT_EQ(r.misses, 2u); // a1b2c3 once, 42 once
    EXPECT_EQ(error_of([] { parse_csv_trace("obj_id,obj_size\n,5\n", "kv.csv"); }),
              "kv.csv:2: empty object id");
    EXPECT_EQ(error_of([] { parse_csv_trace("time,op\n1,get\n", "kv.csv"); }).substr(0, 40),
              "kv.csv:1: expected a header naming the c");
    EXPECT_EQ(
        error_of([] { parse_csv_trace("key,size,op\nk,10,delete\n", "kv.csv"); }).substr(0, 43),
        "kv.csv:2: unknown operation 'delete' (expec");
}

// MSR Cambridge's layout (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime) comes
// without a header and with byte offsets: the columns are named on the command line, as with
// libCacheSim.
TEST(TraceFormats, HeaderlessCsvWithNamedColumnsAndByteOffsets) {
    const std::string msr = "128166372003061629,hm,0,Read,8192,4096,1331\n"
                            "128166372016382155,hm,0,Write,1073741824,8192,1536\n";
    const Trace t = parse_csv_trace(msr, "hm_0.csv", parse_csv_columns("op=4,offset=5,size=6"));
    EXPECT_EQ(t.kind, TraceKind::blocks);
    ASSERT_EQ(t.requests.size(), 2u);
    EXPECT_EQ(t.requests[0].id, 8192u); // bytes, not sectors
    EXPECT_FALSE(t.requests[0].write);
    EXPECT_EQ(t.requests[1].id, 1073741824u);
    EXPECT_EQ(t.requests[1].size, 8192u);
    EXPECT_TRUE(t.requests[1].write);
    // The same with a header line to skip, and a header naming `offset` read without help.
    const Trace skipped = parse_csv_trace("ts,host,disk,type,offset,size,rt\n" + msr, "hm_0.csv",
                                          parse_csv_columns("op=4,offset=5,size=6,header"));
    EXPECT_EQ(skipped.requests.size(), 2u);
    const Trace named = parse_csv_trace("ts,host,disk,type,offset,size,rt\n" + msr, "hm_0.csv");
    ASSERT_EQ(named.requests.size(), 2u);
    EXPECT_EQ(named.requests[1].id, 1073741824u);
    // An object trace without a header.
    const Trace objects = parse_csv_trace("1,k1,10\n2,k2,20\n3,k1,10\n", "kv.csv",
                                          parse_csv_columns("obj_id=2,size=3"));
    EXPECT_EQ(objects.kind, TraceKind::objects);
    EXPECT_EQ(objects.requests[0].id, objects.requests[2].id);
    EXPECT_EQ(error_of([&] {
                  parse_csv_trace("1,2\n", "short.csv", parse_csv_columns("offset=1,size=3"));
              }),
              "short.csv:1: 2 fields, but column 3 is named");
    // One column per thing: a second name for the same thing is an error, not the last one wins.
    EXPECT_EQ(error_of([] { parse_csv_columns("offset=1,offset=2,size=3"); }),
              "--csv-columns 'offset=1,offset=2,size=3': the address (lbn or offset) is named "
              "twice (at 'offset=2')");
    EXPECT_EQ(error_of([] { parse_csv_columns("lbn=1,size=2,sectors=3"); }),
              "--csv-columns 'lbn=1,size=2,sectors=3': the size is named twice (at 'sectors=3')");
    EXPECT_EQ(error_of([] { parse_csv_columns("obj_id=1,key=2"); }),
              "--csv-columns 'obj_id=1,key=2': the object id is named twice (at 'key=2')");
}

// A headerless first line of exactly MSR Cambridge's shape is read as that layout, and is the
// first request, not a header; the source says which columns were assumed.
TEST(TraceFormats, HeaderlessMsrCambridgeTracesAreRecognised) {
    const std::string msr = "128166372003061629,hm,0,Read,8192,4096,1331\n"
                            "128166372016382155,hm,0,Write,1073741824,8192,1536\n";
    const Trace t = parse_csv_trace(msr, "hm_0.csv");
    EXPECT_EQ(t.kind, TraceKind::blocks);
    EXPECT_EQ(t.source, "hm_0.csv (no header: MSR Cambridge's columns op=4,offset=5,size=6)");
    ASSERT_EQ(t.requests.size(), 2u);
    EXPECT_EQ(t.requests[0].id, 8192u);
    EXPECT_EQ(t.requests[0].size, 4096u);
    EXPECT_FALSE(t.requests[0].write);
    EXPECT_EQ(t.requests[1].id, 1073741824u);
    EXPECT_TRUE(t.requests[1].write);
    // Named columns win over the recognition, and a later line of another shape is an error.
    const Trace named = parse_csv_trace(msr, "hm_0.csv", parse_csv_columns("op=4,lbn=3,size=6"));
    EXPECT_EQ(named.source, "hm_0.csv");
    EXPECT_EQ(named.requests[0].id, 0u); // disk 0 read as the sector
    EXPECT_EQ(error_of([&] { parse_csv_trace(msr + "1,hm,0,Read,0\n", "hm_0.csv"); }),
              "hm_0.csv:3: 5 fields, but column 6 is named");
    // Almost that shape is not guessed at: a type that is neither Read nor Write, a size that is
    // not a number.
    EXPECT_EQ(error_of([] { parse_csv_trace("1,hm,0,Trim,0,4096,1\n", "x.csv"); }).substr(0, 40),
              "x.csv:1: expected a header naming the co");
    EXPECT_EQ(error_of([] { parse_csv_trace("1,hm,0,Read,0,4k,1\n", "x.csv"); }).substr(0, 40),
              "x.csv:1: expected a header naming the co");
}

// Object traces without sizes (a csv with ids only, or txt: one id per line, as libCacheSim's
// plain text traces and the LIRS traces): every object counts one byte, so a cache size in bytes
// is a number of objects.
TEST(TraceFormats, ObjectTracesWithoutSizesCountObjects) {
    const Trace csv = parse_csv_trace("time,obj_id\n1,7\n2,8\n3,7\n", "ids.csv");
    EXPECT_EQ(csv.kind, TraceKind::objects);
    ASSERT_EQ(csv.requests.size(), 3u);
    EXPECT_EQ(csv.requests[0].size, 1u);
    EXPECT_EQ(csv.requests[2].id, 7u);
    const Trace given =
        parse_csv_trace("key\nk2\nkey\n", "keys.csv", parse_csv_columns("obj_id=1"));
    EXPECT_EQ(given.requests[0].id, given.requests[2].id);
    EXPECT_NE(given.requests[0].id, given.requests[1].id);

    const Trace txt = parse_txt_trace("# LIRS style\n5\n6 extra words\n\n5\nkey\r\n", "t.txt");
    EXPECT_EQ(txt.kind, TraceKind::objects);
    ASSERT_EQ(txt.requests.size(), 4u);
    EXPECT_EQ(txt.requests[0].id, 5u);
    EXPECT_EQ(txt.requests[1].id, 6u);
    EXPECT_EQ(txt.requests[2].id, 5u);
    EXPECT_EQ(txt.requests[3].size, 1u);
    EXPECT_EQ(txt.requests[3].id, given.requests[0].id); // keys hashed as in csv
    EXPECT_EQ(error_of([] { parse_txt_trace("# nothing\n\n", "e.txt"); }),
              "e.txt: empty trace (no object ids)");

    // Two objects of one byte each fit a cache of 2 bytes: 5, 6, 5 misses twice, then 'key'.
    SimConfig config;
    config.cache_size = 2;
    EXPECT_EQ(simulate(txt, config).misses, 3u);
    config.cache_size = 1;
    EXPECT_EQ(simulate(txt, config).misses, 4u);

    EXPECT_EQ(guess_trace_format("lirs/sprite.trc"), TraceFormat::txt);
    EXPECT_EQ(guess_trace_format("ids.txt.zst"), TraceFormat::txt);
    EXPECT_EQ(parse_trace_format("TXT"), TraceFormat::txt);
    EXPECT_EQ(error_of([] { parse_trace_format("parquet"); }),
              "unknown trace format 'parquet' (expected csv, oracleGeneral or txt)");
    EXPECT_EQ(error_of([] { guess_trace_format("trace.dat"); }),
              "trace.dat: cannot tell the trace format from the name; pass --format "
              "csv|oracleGeneral|txt");
}

// Two more published block-trace shapes through named columns: Alibaba's (device, R/W, byte
// offset, byte length, time) and Tencent CBS's (time, sector offset, size in sectors, ioType 0 for
// a read and 1 for a write, volume).
TEST(TraceFormats, AlibabaAndTencentBlockTracesThroughNamedColumns) {
    const Trace alibaba = parse_csv_trace("0,R,126703644672,4096,1577808000000047\n"
                                          "0,W,126703648768,8192,1577808000000090\n",
                                          "ali.csv", parse_csv_columns("op=2,offset=3,size=4"));
    ASSERT_EQ(alibaba.requests.size(), 2u);
    EXPECT_EQ(alibaba.requests[0].id, 126703644672u);
    EXPECT_FALSE(alibaba.requests[0].write);
    EXPECT_TRUE(alibaba.requests[1].write);
    EXPECT_EQ(alibaba.requests[1].size, 8192u);
    const Trace tencent = parse_csv_trace("1538323200,42637312,8,1,1283\n"
                                          "1538323200,42637320,16,0,1283\n",
                                          "cbs.csv", parse_csv_columns("lbn=2,sectors=3,op=4"));
    ASSERT_EQ(tencent.requests.size(), 2u);
    EXPECT_EQ(tencent.requests[0].id, 42637312ull * 512);
    EXPECT_EQ(tencent.requests[0].size, 4096u) << "8 sectors";
    EXPECT_TRUE(tencent.requests[0].write);
    EXPECT_EQ(tencent.requests[1].size, 8192u);
    EXPECT_FALSE(tencent.requests[1].write);
    EXPECT_EQ(error_of([] {
                  parse_csv_trace("1,42637312,8,2,1\n", "cbs.csv",
                                  parse_csv_columns("lbn=2,sectors=3,op=4"));
              }),
              "cbs.csv:1: unknown operation '2' (expected a SCSI read/write opcode in hex such as "
              "28 or 2a, r/w, 0/1 (read/write), or a key-value get/set)");
    EXPECT_EQ(error_of([] {
                  parse_csv_trace("1,42637312,8388608,0,1\n", "cbs.csv",
                                  parse_csv_columns("lbn=2,sectors=3,op=4"));
              }),
              "cbs.csv:1: size '8388608' is not a sector count below 4 GiB");
}

TEST(TraceFormats, BadColumnSpecsAreNamed) {
    EXPECT_EQ(
        error_of([] { parse_csv_columns("op=4,offst=5,size=6"); }),
        "--csv-columns: unknown column name 'offst' (expected op, size, sectors, lbn, offset, "
        "obj_id or header)");
    EXPECT_EQ(error_of([] { parse_csv_columns("op=0,offset=5,size=6"); }),
              "--csv-columns: 'op=0' is not NAME=COLUMN with a column number from 1");
    EXPECT_EQ(error_of([] { parse_csv_columns("op=4,size=6"); }),
              "--csv-columns 'op=4,size=6': name size and lbn or offset (a block trace), or "
              "obj_id and optionally size (an object trace)");
    EXPECT_EQ(error_of([] { parse_csv_columns("offset=1,obj_id=2,size=3"); }),
              "--csv-columns 'offset=1,obj_id=2,size=3': either lbn/offset (a block trace) or "
              "obj_id, not both");
}

} // namespace
} // namespace iosig::tier
