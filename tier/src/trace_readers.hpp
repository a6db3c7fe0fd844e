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

// What every reader keeps: the requests so far and where to stop.
class TraceReaderBase {
public:
    // Parses nothing past the `requests`-th request (0: no limit).
    void stop_after(std::uint64_t requests) { limit_ = requests ? requests : ~std::uint64_t{0}; }
    // The limit is reached: nothing more to feed.
    bool full() const { return trace_.requests.size() >= limit_; }

protected:
    TraceReaderBase(std::string_view name, TraceKind kind) {
        trace_.source = std::string(name);
        trace_.kind = kind;
    }
    Trace trace_;

private:
    std::uint64_t limit_ = ~std::uint64_t{0};
};

class CsvTraceReader : public TraceReaderBase {
public:
    CsvTraceReader(std::string_view name, const std::optional<CsvColumns>& given);
    // `lines`: whole lines (the last one may lack its newline only at the end of the file).
    void feed(std::string_view lines);
    Trace finish();

private:
    std::string name_; // for errors; trace_.source may say more (MSR Cambridge's columns)
    std::optional<CsvColumns> columns_;
    std::size_t header_fields_ = 0; // a header's field count, which every record must match
    bool skip_header_ = false;
    std::size_t lines_ = 0; // lines fed so far
};

class TxtTraceReader : public TraceReaderBase {
public:
    explicit TxtTraceReader(std::string_view name) : TraceReaderBase(name, TraceKind::objects) {}
    void feed(std::string_view lines);
    Trace finish();

private:
    std::size_t lines_ = 0;
};

class OracleGeneralReader : public TraceReaderBase {
public:
    static constexpr std::size_t record_bytes = 24;
    explicit OracleGeneralReader(std::string_view name)
        : TraceReaderBase(name, TraceKind::objects) {}
    void reserve(std::size_t records) { trace_.requests.reserve(records); }
    // `records`: a whole number of records.
    void feed(std::string_view records);
    // `leftover`: bytes after the last whole record (an error unless 0).
    Trace finish(std::size_t leftover);

private:
    std::uint64_t records_ = 0;
};

} // namespace iosig::tier::detail
