#include "journal_format.hpp"

#include <charconv>
#include <cstring>

namespace iosig::preload {
namespace {

constexpr std::string_view magic = "iosig1";
constexpr char hex_digits[] = "0123456789abcdef";

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

std::optional<std::string> unescape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '%') {
            out.push_back(text[i]);
            continue;
        }
        if (i + 2 >= text.size()) return std::nullopt;
        const int hi = hex_value(text[i + 1]);
        const int lo = hex_value(text[i + 2]);
        if (hi < 0 || lo < 0) return std::nullopt;
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
    }
    return out;
}

template <class T>
bool parse_integer(std::string_view text, T& value) {
    const auto* end = text.data() + text.size();
    const auto result = std::from_chars(text.data(), end, value);
    return result.ec == std::errc{} && result.ptr == end;
}

} // namespace

std::uint64_t fnv1a64(std::string_view data) {
    std::uint64_t hash = 0xcbf29ce484222325ULL;
    for (const char c : data) {
        hash ^= static_cast<unsigned char>(c);
        hash *= 0x100000001b3ULL;
    }
    return hash;
}

void RecordWriter::raw(std::string_view text) {
    if (size_ + text.size() > capacity_) {
        overflow_ = true;
        return;
    }
    std::memcpy(buffer_ + size_, text.data(), text.size());
    size_ += text.size();
}

void RecordWriter::begin(RecordType type, std::int64_t time_ns, long pid, std::string_view run) {
    size_ = 0;
    overflow_ = false;
    raw(magic);
    const char type_text[2] = {'\t', static_cast<char>(type)};
    raw({type_text, 2});
    field(time_ns);
    field(static_cast<std::int64_t>(pid));
    field(run);
}

void RecordWriter::field(std::string_view value) {
    raw("\t");
    for (const char raw_char : value) {
        const auto c = static_cast<unsigned char>(raw_char);
        if (c < 0x20 || c == 0x7f || c == '%') {
            const char escaped[3] = {'%', hex_digits[c >> 4], hex_digits[c & 15]};
            raw({escaped, 3});
        } else {
            raw({&raw_char, 1});
        }
    }
}

void RecordWriter::field(std::int64_t value) {
    char digits[24];
    const auto result = std::to_chars(digits, digits + sizeof digits, value);
    raw("\t");
    raw({digits, static_cast<std::size_t>(result.ptr - digits)});
}

bool RecordWriter::finish() {
    const std::uint64_t sum = fnv1a64({buffer_, size_});
    char text[18];
    text[0] = '\t';
    for (int i = 0; i < 16; ++i)
        text[1 + i] = hex_digits[(sum >> (60 - 4 * i)) & 15];
    text[17] = '\n';
    raw({text, sizeof text});
    return !overflow_;
}

const std::string& JournalRecord::at(std::size_t i) const {
    static const std::string empty;
    return i < fields.size() ? fields[i] : empty;
}

std::optional<JournalRecord> parse_record(std::string_view line) {
    const auto last_tab = line.rfind('\t');
    if (last_tab == std::string_view::npos || line.size() - last_tab != 17) return std::nullopt;
    std::uint64_t stored = 0;
    for (std::size_t i = last_tab + 1; i < line.size(); ++i) {
        const int v = hex_value(line[i]);
        if (v < 0) return std::nullopt;
        stored = stored * 16 + static_cast<std::uint64_t>(v);
    }
    const std::string_view body = line.substr(0, last_tab);
    if (fnv1a64(body) != stored) return std::nullopt;

    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (true) {
        const auto tab = body.find('\t', start);
        parts.push_back(body.substr(start, tab == std::string_view::npos ? std::string_view::npos
                                                                         : tab - start));
        if (tab == std::string_view::npos) break;
        start = tab + 1;
    }
    if (parts.size() < 5 || parts[0] != magic || parts[1].size() != 1) return std::nullopt;
    JournalRecord record;
    record.type = static_cast<RecordType>(parts[1][0]);
    if (!parse_integer(parts[2], record.time_ns) || !parse_integer(parts[3], record.pid))
        return std::nullopt;
    auto run = unescape(parts[4]);
    if (!run) return std::nullopt;
    record.run = std::move(*run);
    for (std::size_t i = 5; i < parts.size(); ++i) {
        auto value = unescape(parts[i]);
        if (!value) return std::nullopt;
        record.fields.push_back(std::move(*value));
    }
    return record;
}

JournalContents parse_journal(std::string_view text) {
    JournalContents contents;
    std::size_t start = 0;
    while (start < text.size()) {
        const auto newline = text.find('\n', start);
        if (newline == std::string_view::npos) {
            ++contents
                  .damaged_lines; // torn tail: the write that would have ended it never completed
            break;
        }
        if (auto record = parse_record(text.substr(start, newline - start)))
            contents.records.push_back(std::move(*record));
        else
            ++contents.damaged_lines;
        start = newline + 1;
    }
    return contents;
}

} // namespace iosig::preload
