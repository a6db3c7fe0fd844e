// The trace formats' parsers, fed a block of the file at a time (trace_load.cpp reads the file in
// blocks, trace.cpp's parse_* functions feed a whole text at once). Each one keeps what it needs
// across blocks (the csv header, line numbers for error messages) and throws TraceError naming the
// file and line or record.
#pragma once

#include "iosig/tier/trace.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace iosig::tier::detail {

inline constexpr std::uint64_t no_limit = ~std::uint64_t{0};

class CsvTraceReader {
public:
    CsvTraceReader(std::string_view name, const std::optional<CsvColumns>& given);
    // `lines`: whole lines (the last one may lack its newline only at the end of the file).
    void feed(std::string_view lines);
    std::size_t requests() const { return trace_.requests.size(); }
    // Parses nothing past the `requests`-th request (0: no limit).
    void stop_after(std::uint64_t requests) { limit_ = requests ? requests : no_limit; }
    Trace finish();

private:
    std::string name_; // for errors; trace_.source may say more (MSR Cambridge's columns)
    Trace trace_;
    std::uint64_t limit_ = no_limit;
    std::optional<CsvColumns> columns_;
    std::size_t header_fields_ = 0; // a header's field count, which every record must match
    bool skip_header_ = false;
    std::size_t lines_ = 0; // lines fed so far
};

class TxtTraceReader {
public:
    explicit TxtTraceReader(std::string_view name);
    void feed(std::string_view lines);
    std::size_t requests() const { return trace_.requests.size(); }
    // Parses nothing past the `requests`-th request (0: no limit).
    void stop_after(std::uint64_t requests) { limit_ = requests ? requests : no_limit; }
    Trace finish();

private:
    Trace trace_;
    std::uint64_t limit_ = no_limit;
    std::size_t lines_ = 0;
};

class OracleGeneralReader {
public:
    static constexpr std::size_t record_bytes = 24;
    explicit OracleGeneralReader(std::string_view name);
    void reserve(std::size_t records) { trace_.requests.reserve(records); }
    // `records`: a whole number of records.
    void feed(std::string_view records);
    std::size_t requests() const { return trace_.requests.size(); }
    // Parses nothing past the `requests`-th request (0: no limit).
    void stop_after(std::uint64_t requests) { limit_ = requests ? requests : no_limit; }
    // `leftover`: bytes after the last whole record (an error unless 0).
    Trace finish(std::size_t leftover);

private:
    Trace trace_;
    std::uint64_t limit_ = no_limit;
    std::uint64_t records_ = 0;
};

} // namespace iosig::tier::detail
