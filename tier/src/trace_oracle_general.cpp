// libCacheSim's oracleGeneral binary traces (trace.hpp): 24-byte little-endian records
// {u32 time, u64 object id, u32 size, i64 next access}.
#include "iosig/tier/trace.hpp"
#include "trace_readers.hpp"

#include <bit>
#include <cstring>
#include <fmt/format.h>

namespace iosig::tier {
namespace detail {

void OracleGeneralReader::feed(std::string_view bytes) {
    static_assert(std::endian::native == std::endian::little,
                  "oracleGeneral records are little-endian");
    for (std::size_t at = 0; at + record_bytes <= bytes.size() && !full(); at += record_bytes) {
        const char* p = bytes.data() + at;
        std::uint64_t id;
        std::uint32_t size;
        std::memcpy(&id, p + 4, 8);
        std::memcpy(&size, p + 12, 4);
        ++records_;
        if (size == 0) { // libCacheSim's readers skip these by default (ignore_size_zero_req)
            ++trace_.skipped_zero_size;
            continue;
        }
        trace_.requests.push_back(Request{id, size, false});
    }
}

Trace OracleGeneralReader::finish(std::size_t leftover) {
    if (leftover != 0)
        throw TraceError(
            fmt::format("{}: {} bytes is not a whole number of 24-byte oracleGeneral records "
                        "(record {} is truncated)",
                        trace_.source, records_ * record_bytes + leftover, records_));
    if (records_ == 0) throw TraceError(fmt::format("{}: empty trace (no records)", trace_.source));
    if (trace_.requests.empty())
        throw TraceError(
            fmt::format("{}: all {} records have size 0", trace_.source, trace_.skipped_zero_size));
    return std::move(trace_);
}

} // namespace detail

Trace parse_oracle_general(std::string_view bytes, std::string_view name) {
    detail::OracleGeneralReader reader(name);
    const std::size_t whole = bytes.size() / reader.record_bytes * reader.record_bytes;
    reader.reserve(whole / reader.record_bytes);
    reader.feed(bytes.substr(0, whole));
    return reader.finish(bytes.size() - whole);
}

} // namespace iosig::tier
