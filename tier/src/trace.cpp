// Trace readers and writer (trace.hpp): the text formats (csv, txt); oracleGeneral in
// trace_oracle_general.cpp.
#include "iosig/tier/trace.hpp"

#include "trace_input.hpp"
#include "trace_readers.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <optional>

namespace iosig::tier {
namespace {

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

// The lines of a text trace that hold records, trimmed: empty lines and # comments are skipped;
// number() is the last line's number in the file, for error messages.
class RecordLines {
public:
    explicit RecordLines(std::string_view text, std::size_t lines_before = 0)
        : text_(text), number_(lines_before) {}
    bool next(std::string_view& line) {
        while (pos_ < text_.size()) {
            std::size_t eol = text_.find('\n', pos_);
            if (eol == std::string_view::npos) eol = text_.size();
            line = trim(text_.substr(pos_, eol - pos_));
            pos_ = eol + 1;
            ++number_;
            if (!line.empty() && line.front() != '#') return true;
        }
        return false;
    }
    std::size_t number() const { return number_; }

private:
    std::string_view text_;
    std::size_t pos_ = 0, number_;
};

std::vector<std::string_view> split_fields(std::string_view line) {
    std::vector<std::string_view> fields;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = line.find(',', start);
        fields.push_back(trim(line.substr(start, comma - start)));
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    return fields;
}

template <class T>
bool parse_number(std::string_view text, T& value, int base = 10) {
    if (base == 16 && text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
        text.remove_prefix(2);
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
    return ec == std::errc() && end == text.data() + text.size();
}

// true = write; throws on an operation that is neither.
bool parse_op(std::string_view text, std::string_view name, std::size_t line) {
    const std::string op = lower(text);
    // 0 and 1: the Tencent CBS traces' ioType (no SCSI opcode reads or writes).
    if (op == "r" || op == "read" || op == "get" || op == "gets" || op == "0") return false;
    if (op == "1") return true;
    if (op == "w" || op == "write" || op == "set" || op == "put" || op == "add" ||
        op == "replace" || op == "cas" || op == "append" || op == "prepend" || op == "incr" ||
        op == "decr")
        return true;
    unsigned code = 0;
    if (parse_number(op, code, 16)) {
        // SCSI READ(6/10/12/16) and WRITE(6/10/12/16).
        if (code == 0x08 || code == 0x28 || code == 0xa8 || code == 0x88) return false;
        if (code == 0x0a || code == 0x2a || code == 0xaa || code == 0x8a) return true;
    }
    throw TraceError(
        fmt::format("{}:{}: unknown operation '{}' (expected a SCSI read/write opcode in hex "
                    "such as 28 or 2a, r/w, 0/1 (read/write), or a key-value get/set)",
                    name, line, text));
}

} // namespace

TraceFormat parse_trace_format(std::string_view text) {
    const std::string f = lower(text);
    if (f == "csv") return TraceFormat::csv;
    if (f == "oraclegeneral" || f == "oracle" || f == "oracle_general")
        return TraceFormat::oracle_general;
    if (f == "txt" || f == "text") return TraceFormat::txt;
    throw std::invalid_argument(
        fmt::format("unknown trace format '{}' (expected csv, oracleGeneral or txt)", text));
}

TraceFormat guess_trace_format(const std::filesystem::path& file) {
    const std::string name =
        std::string(detail::strip_compression_suffix(lower(file.filename().string())));
    if (name.ends_with(".csv")) return TraceFormat::csv;
    if (name.find("oraclegeneral") != std::string::npos || name.ends_with(".bin"))
        return TraceFormat::oracle_general;
    if (name.ends_with(".txt") || name.ends_with(".trc")) return TraceFormat::txt;
    throw std::invalid_argument(fmt::format(
        "{}: cannot tell the trace format from the name; pass --format csv|oracleGeneral|txt",
        file.string()));
}

namespace {

// The columns a header line names (case-insensitive); the other columns are ignored.
CsvColumns columns_from_header(const std::vector<std::string_view>& fields) {
    CsvColumns c;
    for (std::size_t i = 0; i < fields.size(); ++i) {
        const std::string f = lower(fields[i]);
        const int col = static_cast<int>(i);
        if (f == "op" || f == "opcode" || f == "operation" || f == "type")
            c.op = col;
        else if (f == "size" || f == "length" || f == "bytes" || f == "obj_size")
            c.size = col;
        else if (f == "lbn" || f == "lba" || f == "sector" || f == "block")
            c.lbn = col;
        else if (f == "offset" || f == "byte_offset")
            c.offset = col;
        else if (f == "obj_id" || f == "key" || f == "object" || f == "object_id")
            c.object = col;
    }
    return c;
}

bool block_trace(const CsvColumns& c) {
    return c.size >= 0 && (c.lbn >= 0 || c.offset >= 0);
}
// The size column is optional: without it every object counts one byte, so that a cache size
// in bytes is a number of objects.
bool object_trace(const CsvColumns& c) {
    return c.object >= 0;
}

bool is_decimal(std::string_view text) {
    std::uint64_t value = 0;
    return parse_number(text, value);
}

// MSR Cambridge's block traces (SNIA IOTTA), the most replayed public block traces, come without
// a header: Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime, Type Read or Write,
// Offset and Size in bytes. A first line of exactly that shape is read as such (and the trace's
// source says so); anything else still needs a header or --csv-columns.
std::optional<CsvColumns> msr_cambridge_columns(const std::vector<std::string_view>& fields) {
    if (fields.size() != 7) return std::nullopt;
    const std::string type = lower(fields[3]);
    if ((type != "read" && type != "write") || !is_decimal(fields[0]) || !is_decimal(fields[2]) ||
        !is_decimal(fields[4]) || !is_decimal(fields[5]) || !is_decimal(fields[6]))
        return std::nullopt;
    CsvColumns c;
    c.op = 3;
    c.offset = 4;
    c.size = 5;
    return c;
}

// Object ids that are not numbers (hashed keys in key-value traces): FNV-1a, stable across builds.
std::uint64_t object_id(std::string_view text) {
    std::uint64_t id = 0;
    if (parse_number(text, id)) return id;
    std::uint64_t hash = 0xcbf29ce484222325ull;
    for (const char c : text)
        hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    return hash;
}

} // namespace

CsvColumns parse_csv_columns(std::string_view spec) {
    CsvColumns c;
    // What each name gives (sizes in bytes or sectors, and addresses as lbn or offset, are one
    // thing each): naming one twice leaves it unclear which column is meant.
    std::vector<std::string_view> given;
    const auto name_once = [&](std::string_view what, std::string_view item) {
        if (std::find(given.begin(), given.end(), what) != given.end())
            throw std::invalid_argument(fmt::format(
                "--csv-columns '{}': the {} is named twice (at '{}')", spec, what, item));
        given.push_back(what);
    };
    std::size_t start = 0;
    while (start <= spec.size()) {
        const std::size_t comma = std::min(spec.find(',', start), spec.size());
        const std::string_view item = trim(spec.substr(start, comma - start));
        start = comma + 1;
        if (item.empty()) continue;
        if (lower(item) == "header") {
            c.header = true;
            continue;
        }
        const std::size_t eq = item.find('=');
        const std::string key = lower(trim(item.substr(0, eq)));
        unsigned column = 0;
        if (eq == std::string_view::npos || !parse_number(trim(item.substr(eq + 1)), column) ||
            column == 0 || column > 1024)
            throw std::invalid_argument(fmt::format(
                "--csv-columns: '{}' is not NAME=COLUMN with a column number from 1", item));
        const int index = static_cast<int>(column) - 1;
        if (key == "op") {
            name_once("operation", item);
            c.op = index;
        } else if (key == "size" || key == "obj_size" || key == "sectors") {
            name_once("size", item);
            c.size = index;
            c.size_in_sectors = key == "sectors";
        } else if (key == "lbn" || key == "offset") {
            name_once("address (lbn or offset)", item);
            (key == "lbn" ? c.lbn : c.offset) = index;
        } else if (key == "obj_id" || key == "key") {
            name_once("object id", item);
            c.object = index;
        } else
            throw std::invalid_argument(fmt::format(
                "--csv-columns: unknown column name '{}' (expected op, size, sectors, lbn, offset, "
                "obj_id or header)",
                key));
    }
    if (!block_trace(c) && !object_trace(c))
        throw std::invalid_argument(
            fmt::format("--csv-columns '{}': name size and lbn or offset (a block trace), or "
                        "obj_id and optionally size (an object trace)",
                        spec));
    if (block_trace(c) && object_trace(c))
        throw std::invalid_argument(fmt::format(
            "--csv-columns '{}': either lbn/offset (a block trace) or obj_id, not both", spec));
    return c;
}

namespace detail {

CsvTraceReader::CsvTraceReader(std::string_view name, const std::optional<CsvColumns>& given)
    : TraceReaderBase(name, given && block_trace(*given) ? TraceKind::blocks : TraceKind::objects),
      name_(name), columns_(given), skip_header_(given && given->header) {}

void CsvTraceReader::feed(std::string_view text) {
    RecordLines lines(text, lines_);
    std::string_view line;
    while (!full() && lines.next(line)) {
        const std::size_t line_no = lines.number();
        const auto fields = split_fields(line);
        if (skip_header_) {
            skip_header_ = false;
            continue;
        }
        if (!columns_) {
            if (auto msr = msr_cambridge_columns(fields)) {
                // Not a header: this line is the first request.
                columns_ = msr;
                trace_.kind = TraceKind::blocks;
                trace_.source += " (no header: MSR Cambridge's columns op=4,offset=5,size=6)";
            } else {
                columns_ = columns_from_header(fields);
                header_fields_ = fields.size();
                if (block_trace(*columns_))
                    trace_.kind = TraceKind::blocks;
                else if (object_trace(*columns_))
                    trace_.kind = TraceKind::objects;
                else
                    throw TraceError(fmt::format(
                        "{}:{}: expected a header naming the columns size and lbn or offset (a "
                        "block trace, e.g. 'version,time,op,size,lbn') or obj_id and optionally "
                        "obj_size (an object trace), got '{}'; for a trace without a header, name "
                        "the columns with --csv-columns",
                        name_, line_no, line));
                continue;
            }
        }
        if (header_fields_ > 0 && fields.size() != header_fields_)
            throw TraceError(fmt::format("{}:{}: {} fields, the header has {}", name_, line_no,
                                         fields.size(), header_fields_));
        const int last = std::max(
            {columns_->op, columns_->size, columns_->lbn, columns_->offset, columns_->object});
        if (static_cast<std::size_t>(last) >= fields.size())
            throw TraceError(fmt::format("{}:{}: {} fields, but column {} is named", name_, line_no,
                                         fields.size(), last + 1));
        const auto field = [&](int col) { return fields[static_cast<std::size_t>(col)]; };
        Request r;
        if (columns_->op >= 0) r.write = parse_op(field(columns_->op), name_, line_no);
        std::uint64_t size = 1; // an object trace without sizes counts objects
        if (columns_->size >= 0 && (!parse_number(field(columns_->size), size) ||
                                    size > (columns_->size_in_sectors ? 0x7fffffu : 0xffffffffu)))
            throw TraceError(fmt::format("{}:{}: size '{}' is not a {} count below 4 GiB", name_,
                                         line_no, field(columns_->size),
                                         columns_->size_in_sectors ? "sector" : "byte"));
        if (columns_->size_in_sectors) size *= 512;
        if (trace_.kind == TraceKind::blocks && columns_->lbn >= 0) {
            std::uint64_t lbn = 0;
            if (!parse_number(field(columns_->lbn), lbn) || lbn > (~0ull >> 9))
                throw TraceError(fmt::format("{}:{}: lbn '{}' is not a sector number", name_,
                                             line_no, field(columns_->lbn)));
            r.id = lbn * 512;
        } else if (trace_.kind == TraceKind::blocks) {
            if (!parse_number(field(columns_->offset), r.id))
                throw TraceError(fmt::format("{}:{}: offset '{}' is not a byte offset", name_,
                                             line_no, field(columns_->offset)));
        } else {
            if (field(columns_->object).empty())
                throw TraceError(fmt::format("{}:{}: empty object id", name_, line_no));
            r.id = object_id(field(columns_->object));
        }
        // A block request covers [offset, offset + size); an end past 2^64 - 1 would wrap around
        // to the start of the address space and split into billions of lines.
        if (trace_.kind == TraceKind::blocks && r.id > ~0ull - size)
            throw TraceError(fmt::format("{}:{}: the request from byte {} for {} bytes ends past "
                                         "the largest byte offset (2^64 - 1)",
                                         name_, line_no, r.id, size));
        if (size == 0) { // touches no data; libCacheSim skips these too
            ++trace_.skipped_zero_size;
            continue;
        }
        r.size = static_cast<std::uint32_t>(size);
        trace_.requests.push_back(r);
    }
    lines_ = lines.number();
}

Trace CsvTraceReader::finish() {
    if (!columns_) throw TraceError(fmt::format("{}: empty trace (no header)", name_));
    // A trace that replays nothing would report a cache without misses; say why instead.
    if (trace_.requests.empty() && trace_.skipped_zero_size > 0)
        throw TraceError(
            fmt::format("{}: all {} requests have size 0", name_, trace_.skipped_zero_size));
    if (trace_.requests.empty())
        throw TraceError(fmt::format("{}: empty trace (no requests after the header)", name_));
    return std::move(trace_);
}

void TxtTraceReader::feed(std::string_view text) {
    RecordLines lines(text, lines_);
    std::string_view line;
    while (!full() && lines.next(line)) {
        const std::string_view id = line.substr(0, line.find_first_of(" \t"));
        trace_.requests.push_back(Request{object_id(id), 1, false});
    }
    lines_ = lines.number();
}

Trace TxtTraceReader::finish() {
    if (trace_.requests.empty())
        throw TraceError(fmt::format("{}: empty trace (no object ids)", trace_.source));
    return std::move(trace_);
}

} // namespace detail

Trace parse_csv_trace(std::string_view text, std::string_view name,
                      const std::optional<CsvColumns>& columns) {
    detail::CsvTraceReader reader(name, columns);
    reader.feed(text);
    return reader.finish();
}

Trace parse_txt_trace(std::string_view text, std::string_view name) {
    detail::TxtTraceReader reader(name);
    reader.feed(text);
    return reader.finish();
}

void write_csv_trace(const Trace& trace, const std::filesystem::path& file) {
    if (trace.kind != TraceKind::blocks)
        throw std::invalid_argument("only block traces can be written as csv");
    std::ofstream out(file);
    if (!out)
        throw TraceError(fmt::format("{}: cannot create: {}", file.string(), std::strerror(errno)));
    out << "version,time,op,size,lbn\n";
    std::uint64_t time = 0;
    for (const Request& r : trace.requests)
        out << "1," << time++ << ',' << (r.write ? "2a" : "28") << ',' << r.size << ','
            << r.id / 512 << '\n';
    if (!out) throw TraceError(fmt::format("{}: write error", file.string()));
}

} // namespace iosig::tier
