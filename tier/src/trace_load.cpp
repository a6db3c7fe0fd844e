// load_trace (trace.hpp): the file is read and parsed a block at a time, so that loading a trace
// holds its requests (16 bytes each) and one block, not the file's bytes as well.
#include "iosig/tier/trace.hpp"
#include "trace_input.hpp"
#include "trace_readers.hpp"

#include <algorithm>
#include <exception>
#include <string>

namespace iosig::tier {
namespace {

constexpr std::size_t block_bytes = std::size_t{16} << 20;

template <class Reader>
Trace load_lines(detail::TraceInput& input, Reader& reader, std::uint64_t max_requests) {
    reader.stop_after(max_requests);
    std::string buffer;
    while (!reader.full() && input.read(buffer, block_bytes) > 0) {
        // Whole lines go to the parser; the part after the last newline waits for the next block.
        const std::size_t end = buffer.rfind('\n');
        if (end == std::string::npos) continue;
        reader.feed(std::string_view(buffer).substr(0, end + 1));
        buffer.erase(0, end + 1);
    }
    if (!reader.full()) reader.feed(buffer); // the last line, if it has no newline
    return reader.finish();
}

Trace load_records(detail::TraceInput& input, detail::OracleGeneralReader& reader,
                   std::uint64_t max_requests) {
    constexpr std::size_t record = detail::OracleGeneralReader::record_bytes;
    // Requests grow by doubling otherwise: up to half again the memory they need, at the end.
    if (auto records = input.content_size_hint()) {
        *records /= record;
        if (max_requests > 0) *records = std::min(*records, max_requests);
        try {
            reader.reserve(static_cast<std::size_t>(*records));
        } catch (const std::exception&) { // a header that claims too much: only a hint
        }
    }
    reader.stop_after(max_requests);
    std::string buffer;
    while (!reader.full() && input.read(buffer, block_bytes) > 0) {
        const std::size_t whole = buffer.size() / record * record;
        reader.feed(std::string_view(buffer).substr(0, whole));
        buffer.erase(0, whole);
    }
    // Stopped early, the file's end (and a record it cuts) was not read.
    return reader.finish(reader.full() ? 0 : buffer.size());
}

} // namespace

Trace load_trace(const std::filesystem::path& file, TraceFormat format,
                 const std::optional<CsvColumns>& columns, std::uint64_t max_requests) {
    detail::TraceInput input(file);
    const std::string name = file.string();
    switch (format) {
    case TraceFormat::csv: {
        detail::CsvTraceReader reader(name, columns);
        return load_lines(input, reader, max_requests);
    }
    case TraceFormat::txt: {
        detail::TxtTraceReader reader(name);
        return load_lines(input, reader, max_requests);
    }
    case TraceFormat::oracle_general:
        break;
    }
    detail::OracleGeneralReader reader(name);
    return load_records(input, reader, max_requests);
}

Trace load_trace(const std::filesystem::path& file, std::string_view format_text,
                 std::string_view csv_columns_text, std::uint64_t max_requests) {
    const TraceFormat format =
        format_text.empty() ? guess_trace_format(file) : parse_trace_format(format_text);
    std::optional<CsvColumns> columns;
    if (!csv_columns_text.empty()) {
        if (format != TraceFormat::csv)
            throw std::invalid_argument("--csv-columns applies to csv traces only");
        columns = parse_csv_columns(csv_columns_text);
    }
    return load_trace(file, format, columns, max_requests);
}

} // namespace iosig::tier
