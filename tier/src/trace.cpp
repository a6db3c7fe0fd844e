// Trace readers and writer (trace.hpp).
#include "iosig/tier/trace.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <fmt/format.h>
#include <fstream>

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
    if (op == "r" || op == "read") return false;
    if (op == "w" || op == "write") return true;
    unsigned code = 0;
    if (parse_number(op, code, 16)) {
        // SCSI READ(6/10/12/16) and WRITE(6/10/12/16).
        if (code == 0x08 || code == 0x28 || code == 0xa8 || code == 0x88) return false;
        if (code == 0x0a || code == 0x2a || code == 0xaa || code == 0x8a) return true;
    }
    throw TraceError(
        fmt::format("{}:{}: unknown operation '{}' (expected a SCSI read/write opcode in hex "
                    "such as 28 or 2a, or r/w)",
                    name, line, text));
}

} // namespace

TraceFormat parse_trace_format(std::string_view text) {
    const std::string f = lower(text);
    if (f == "csv") return TraceFormat::csv;
    if (f == "oraclegeneral" || f == "oracle" || f == "oracle_general")
        return TraceFormat::oracle_general;
    throw std::invalid_argument(
        fmt::format("unknown trace format '{}' (expected csv or oracleGeneral)", text));
}

TraceFormat guess_trace_format(const std::filesystem::path& file) {
    const std::string name = lower(file.filename().string());
    if (name.ends_with(".csv")) return TraceFormat::csv;
    if (name.find("oraclegeneral") != std::string::npos || name.ends_with(".bin"))
        return TraceFormat::oracle_general;
    throw std::invalid_argument(fmt::format(
        "{}: cannot tell the trace format from the name; pass --format csv|oracleGeneral",
        file.string()));
}

Trace load_trace(const std::filesystem::path& file, TraceFormat format) {
    std::ifstream in(file, std::ios::binary);
    if (!in)
        throw TraceError(fmt::format("{}: cannot open: {}", file.string(), std::strerror(errno)));
    std::error_code ec;
    const auto size = std::filesystem::file_size(file, ec);
    if (ec) throw TraceError(fmt::format("{}: {}", file.string(), ec.message()));
    std::string bytes(size, '\0');
    if (!in.read(bytes.data(), static_cast<std::streamsize>(size)))
        throw TraceError(fmt::format("{}: read error", file.string()));
    return format == TraceFormat::csv ? parse_csv_trace(bytes, file.string())
                                      : parse_oracle_general(bytes, file.string());
}

Trace parse_csv_trace(std::string_view text, std::string_view name) {
    Trace trace;
    trace.source = std::string(name);
    trace.kind = TraceKind::blocks;
    int op_col = -1, size_col = -1, lbn_col = -1;
    std::size_t line_no = 0, pos = 0;
    std::size_t columns = 0;
    while (pos < text.size()) {
        std::size_t eol = text.find('\n', pos);
        if (eol == std::string_view::npos) eol = text.size();
        const std::string_view line = trim(text.substr(pos, eol - pos));
        pos = eol + 1;
        ++line_no;
        if (line.empty() || line.front() == '#') continue;
        const auto fields = split_fields(line);
        if (op_col < 0) {
            for (std::size_t i = 0; i < fields.size(); ++i) {
                const std::string f = lower(fields[i]);
                if (f == "op" || f == "opcode" || f == "operation" || f == "type")
                    op_col = static_cast<int>(i);
                else if (f == "size" || f == "length" || f == "bytes")
                    size_col = static_cast<int>(i);
                else if (f == "lbn" || f == "lba" || f == "sector" || f == "block")
                    lbn_col = static_cast<int>(i);
            }
            if (op_col < 0 || size_col < 0 || lbn_col < 0)
                throw TraceError(
                    fmt::format("{}:{}: expected a header naming the columns op, size and lbn "
                                "(e.g. 'version,time,op,size,lbn'), got '{}'",
                                name, line_no, line));
            columns = fields.size();
            continue;
        }
        if (fields.size() != columns)
            throw TraceError(fmt::format("{}:{}: {} fields, the header has {}", name, line_no,
                                         fields.size(), columns));
        Request r;
        r.write = parse_op(fields[static_cast<std::size_t>(op_col)], name, line_no);
        std::uint64_t size = 0, lbn = 0;
        if (!parse_number(fields[static_cast<std::size_t>(size_col)], size) || size > 0xffffffffu)
            throw TraceError(fmt::format("{}:{}: size '{}' is not a byte count below 4 GiB", name,
                                         line_no, fields[static_cast<std::size_t>(size_col)]));
        if (!parse_number(fields[static_cast<std::size_t>(lbn_col)], lbn) || lbn > (~0ull >> 9))
            throw TraceError(fmt::format("{}:{}: lbn '{}' is not a sector number", name, line_no,
                                         fields[static_cast<std::size_t>(lbn_col)]));
        if (size == 0) continue; // a zero-length request touches no data
        r.id = lbn * 512;
        r.size = static_cast<std::uint32_t>(size);
        trace.requests.push_back(r);
    }
    if (op_col < 0) throw TraceError(fmt::format("{}: empty trace (no header)", name));
    return trace;
}

Trace parse_oracle_general(std::string_view bytes, std::string_view name) {
    static_assert(std::endian::native == std::endian::little,
                  "oracleGeneral records are little-endian");
    constexpr std::size_t record = 24;
    if (bytes.size() % record != 0)
        throw TraceError(
            fmt::format("{}: {} bytes is not a whole number of 24-byte oracleGeneral records "
                        "(record {} is truncated)",
                        name, bytes.size(), bytes.size() / record));
    Trace trace;
    trace.source = std::string(name);
    trace.kind = TraceKind::objects;
    trace.requests.reserve(bytes.size() / record);
    for (std::size_t i = 0; i < bytes.size() / record; ++i) {
        const char* p = bytes.data() + i * record;
        std::uint64_t id;
        std::uint32_t size;
        std::memcpy(&id, p + 4, 8);
        std::memcpy(&size, p + 12, 4);
        if (size == 0)
            throw TraceError(fmt::format("{}: record {} (byte {}): object {} has size 0", name, i,
                                         i * record, id));
        trace.requests.push_back(Request{id, size, false});
    }
    return trace;
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
