// Request traces for the simulator: the two formats in ../shared/data/traces/ and synthetic ones.
//
// - csv (block trace): a header naming at least size and lbn or offset (e.g.
//   `version,time,op,size,lbn`), or the columns given (CsvColumns). op is a SCSI opcode in hex
//   (28/88 read, 2a/8a write, with or without 0x) or r/w/read/write; lbn counts 512-byte sectors,
//   offset bytes; size is in bytes. Requests are byte ranges of one device.
// - oracleGeneral (libCacheSim): little-endian 24-byte records {u32 time, u64 obj_id, u32 obj_size,
//   i64 next_access_vtime}. Requests are whole objects; reads and writes are not distinguished.
//   Records of size 0 are skipped and counted, as libCacheSim's readers do by default.
// - csv (object trace): a header naming an object column (obj_id, key or object), optionally a size
//   column (obj_size or size; without it every object counts one byte, so a cache size in bytes
//   is a number of objects) and op; ids that are not decimal numbers (hashed keys) are hashed.
// - csv without a header: the columns given (CsvColumns), or, when the first line has MSR
//   Cambridge's shape (Timestamp,Hostname,DiskNumber,Read|Write,Offset,Size,ResponseTime), those
//   columns; the trace's source then says so.
// - txt: one object id per line (the first word; libCacheSim's plain text traces, the LIRS
//   traces), every object one byte, all reads.
// load_trace also reads either format compressed with zstd or gzip (detected from the content;
// cacheMon's cache_dataset publishes *.oracleGeneral.zst).
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace iosig::tier {

enum class TraceFormat : std::uint8_t { csv, oracle_general, txt };
enum class TraceKind : std::uint8_t {
    objects, // Request::id is an object id, size the object's size
    blocks,  // Request::id is a byte offset, size the length of the byte range
};

struct Request {
    std::uint64_t id = 0;
    std::uint32_t size = 0;
    bool write = false;
};

// The cache lines of `line_size` bytes a block request's byte range touches: `count` lines from
// `first` (none for a request of size 0).
struct LineSpan {
    std::uint64_t first = 0, count = 0;
};
inline LineSpan line_span(const Request& r, std::uint64_t line_size) {
    if (r.size == 0) return {r.id / line_size, 0};
    return {r.id / line_size, (r.id + r.size - 1) / line_size - r.id / line_size + 1};
}

// The bytes [begin, end) of a block request that lie in `line` (one of its line_span): what the
// engine reads or writes of that line.
struct ByteRange {
    std::uint64_t begin = 0, end = 0;
};
inline ByteRange line_part(const Request& r, std::uint64_t line, std::uint64_t line_size) {
    return {std::max(r.id, line * line_size), std::min(r.id + r.size, (line + 1) * line_size)};
}

// Adjacent lines move between the home file and the cache in one IO of up to io_run_bytes (the
// engine's fill runs and write runs, TierConfig::io_run_bytes); the simulator and the write-back
// model count those IOs the same way. The most lines one such IO holds: at least one.
inline constexpr std::uint64_t default_io_run_bytes = 1ull << 20;
inline std::uint64_t io_run_lines(std::uint64_t io_run_bytes, std::uint64_t line_size) {
    return line_size == 0 ? 1 : std::max<std::uint64_t>(1, io_run_bytes / line_size);
}

struct Trace {
    std::string source; // file name or generator description
    TraceKind kind = TraceKind::objects;
    std::vector<Request> requests;
    std::uint64_t skipped_zero_size = 0; // records of size 0, not in `requests`
};

// A malformed trace; what() names the file and the line (csv) or record (binary) and the problem.
class TraceError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// "csv", "oracleGeneral" or "txt" (case-insensitive; "oracle" and "text" also accepted). Throws
// std::invalid_argument.
TraceFormat parse_trace_format(std::string_view text);
// From the file name, after dropping .zst/.zstd/.gz: *.csv -> csv, *oracleGeneral* / *.bin ->
// oracleGeneral, *.txt / *.trc -> txt; throws when unclear.
TraceFormat guess_trace_format(const std::filesystem::path& file);

// Which csv column holds what (0-based; -1: none). From the header line, or given for a trace
// without one. A block trace needs size and lbn (512-byte sectors) or offset (bytes); an object
// trace obj_id and optionally size; op is optional (all reads without it).
struct CsvColumns {
    int op = -1, size = -1, lbn = -1, offset = -1, object = -1;
    bool header = false;          // given columns: the first line is a header, skipped
    bool size_in_sectors = false; // the size column counts 512-byte sectors (`sectors=N`)
};

// "op=4,offset=5,size=6[,header]": column numbers from 1, names op, size, lbn, offset, obj_id (or
// key), as libCacheSim's csv reader takes them, and sectors (a size in 512-byte sectors, as in the
// Tencent CBS and FIU traces). Throws std::invalid_argument naming the bad item.
CsvColumns parse_csv_columns(std::string_view spec);

// `columns`: for csv, the layout to use instead of the header line. `max_requests` > 0: only the
// first that many requests (reading stops soon after them, so a prefix of a huge trace loads in
// the time and memory of the prefix; records of size 0 are counted up to there).
Trace load_trace(const std::filesystem::path& file, TraceFormat format,
                 const std::optional<CsvColumns>& columns = std::nullopt,
                 std::uint64_t max_requests = 0);
// A trace as the tools' options name it: `format_text` "csv" or "oracleGeneral" ("" = from the
// file name), `csv_columns_text` a parse_csv_columns spec ("" = the header line; csv only).
// Throws std::invalid_argument for bad options, TraceError for a bad file.
Trace load_trace(const std::filesystem::path& file, std::string_view format_text,
                 std::string_view csv_columns_text, std::uint64_t max_requests = 0);
Trace parse_csv_trace(std::string_view text, std::string_view name,
                      const std::optional<CsvColumns>& columns = std::nullopt);
Trace parse_oracle_general(std::string_view bytes, std::string_view name);
Trace parse_txt_trace(std::string_view text, std::string_view name);

// Object traces replayed as block traces (trace_objects.cpp), for block mode and for files:
// - object_ids_as_offsets: each request's byte offset is its object id times `id_unit` bytes. Block
//   traces converted to libCacheSim's oracleGeneral keep the block address as the object id (the
//   shared cloudPhysics trace: 512-byte sectors, so 512; byte offsets: 1).
// - objects_end_to_end: each distinct object gets an extent of its largest size, the extents one
//   after another in the order of the ids, and every request covers its object's extent from the
//   start; for traces whose ids are not addresses (hashed keys).
// Both throw std::invalid_argument naming the trace for a block trace, and the request for an
// offset past 2^64; object_ids_as_offsets also for a unit of 0.
Trace object_ids_as_offsets(const Trace& objects, std::uint64_t id_unit);
Trace objects_end_to_end(const Trace& objects);

// Writes `trace` (kind blocks) as csv with the cloudPhysics header, so that generated traces can be
// replayed by iosig-tiersim and other simulators.
void write_csv_trace(const Trace& trace, const std::filesystem::path& file);

} // namespace iosig::tier
