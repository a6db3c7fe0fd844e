// Request traces for the simulator: the two formats in ../shared/data/traces/ and synthetic ones.
//
// - csv (block trace): header naming at least op, size and lbn (e.g. `version,time,op,size,lbn`);
// op is
//   a SCSI opcode in hex (28/88 read, 2a/8a write, with or without 0x) or r/w/read/write; lbn
//   counts 512-byte sectors; size is in bytes. Requests are byte ranges of one device.
// - oracleGeneral (libCacheSim): little-endian 24-byte records {u32 time, u64 obj_id, u32 obj_size,
//   i64 next_access_vtime}. Requests are whole objects; reads and writes are not distinguished.
//   Records of size 0 are skipped and counted, as libCacheSim's readers do by default.
// - csv (object trace): a header naming an object column (obj_id, key or object) and a size column
//   (obj_size or size), optionally op; ids that are not decimal numbers (hashed keys) are hashed.
// load_trace also reads either format compressed with zstd or gzip (detected from the content;
// cacheMon's cache_dataset publishes *.oracleGeneral.zst).
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace iosig::tier {

enum class TraceFormat : std::uint8_t { csv, oracle_general };
enum class TraceKind : std::uint8_t {
    objects, // Request::id is an object id, size the object's size
    blocks,  // Request::id is a byte offset, size the length of the byte range
};

struct Request {
    std::uint64_t id = 0;
    std::uint32_t size = 0;
    bool write = false;
};

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

// "csv" or "oracleGeneral" (case-insensitive; "oracle" also accepted). Throws
// std::invalid_argument.
TraceFormat parse_trace_format(std::string_view text);
// From the file name, after dropping .zst/.zstd/.gz: *.csv -> csv, *oracleGeneral* / *.bin ->
// oracleGeneral; throws when unclear.
TraceFormat guess_trace_format(const std::filesystem::path& file);

Trace load_trace(const std::filesystem::path& file, TraceFormat format);
Trace parse_csv_trace(std::string_view text, std::string_view name);
Trace parse_oracle_general(std::string_view bytes, std::string_view name);

// Writes `trace` (kind blocks) as csv with the cloudPhysics header, so that generated traces can be
// replayed by iosig-tiersim and other simulators.
void write_csv_trace(const Trace& trace, const std::filesystem::path& file);

} // namespace iosig::tier
