// Workload CSV (offset,size,delay_s) parsing and the paper's scenario generators.
#include "iosig/cachesim/workload.hpp"

#include "iosig/units.hpp"

#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

namespace iosig::cachesim {
namespace {

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
    for (;;) {
        const std::size_t comma = line.find(',', start);
        fields.push_back(
            trim(line.substr(start, comma == std::string_view::npos ? line.npos : comma - start)));
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    return fields;
}

} // namespace

WorkloadResult parse_workload(std::string_view text, std::string_view name) {
    WorkloadResult result;
    auto fail = [&](int line, const std::string& message) {
        result.writes.clear();
        result.error = fmt::format("{}:{}: {}", name, line, message);
        return result;
    };
    int line_number = 0;
    bool header_seen = false;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const std::size_t nl = text.find('\n', pos);
        std::string_view line =
            text.substr(pos, nl == std::string_view::npos ? text.npos : nl - pos);
        pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
        ++line_number;
        line = trim(line);
        if (line.empty() || line.front() == '#') continue;
        const auto fields = split_fields(line);
        if (!header_seen) {
            if (fields.size() != 3 || fields[0] != "offset" || fields[1] != "size" ||
                fields[2] != "delay_s")
                return fail(
                    line_number,
                    fmt::format("expected the header `offset,size,delay_s`, found `{}`", line));
            header_seen = true;
            continue;
        }
        if (fields.size() != 3)
            return fail(
                line_number,
                fmt::format("expected 3 fields (offset,size,delay_s), found {}", fields.size()));
        const auto offset = parse_size(fields[0]);
        if (!offset)
            return fail(line_number,
                        fmt::format("offset `{}`: {}", fields[0], offset.error.message));
        const auto size = parse_size(fields[1]);
        if (!size)
            return fail(line_number, fmt::format("size `{}`: {}", fields[1], size.error.message));
        if (*size.value == 0) return fail(line_number, "size must be positive");
        const auto delay = parse_duration_seconds(fields[2]);
        if (!delay)
            return fail(line_number,
                        fmt::format("delay_s `{}`: {}", fields[2], delay.error.message));
        if (!std::isfinite(*delay.value) || *delay.value < 0)
            return fail(line_number, "delay_s must be a non-negative number of seconds");
        result.writes.push_back({*offset.value, *size.value, *delay.value, line_number});
    }
    if (!header_seen)
        return fail(std::max(line_number, 1),
                    "empty workload: expected the header `offset,size,delay_s`");
    return result;
}

WorkloadResult load_workload(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
        WorkloadResult result;
        result.error = fmt::format("{}: cannot open the workload file", file.string());
        return result;
    }
    std::ostringstream text;
    text << in.rdbuf();
    return parse_workload(text.str(), file.string());
}

std::string to_csv(const std::vector<WriteRequest>& writes) {
    std::string out = "offset,size,delay_s\n";
    for (const WriteRequest& w : writes)
        out += fmt::format("{},{},{}\n", w.offset, w.size, w.delay);
    return out;
}

std::vector<WriteRequest> sequential_workload(std::uint64_t total, std::uint64_t chunk,
                                              double delay) {
    std::vector<WriteRequest> out;
    if (chunk == 0) return out;
    for (std::uint64_t offset = 0; offset < total; offset += chunk)
        out.push_back({offset, std::min(chunk, total - offset), delay, 0});
    return out;
}

std::vector<WriteRequest> rewrite_workload(std::uint64_t total_new, std::uint64_t chunk,
                                           double rewrite_fraction, double delay) {
    std::vector<WriteRequest> out;
    if (chunk == 0) return out;
    const auto back =
        static_cast<std::uint64_t>(std::llround(static_cast<double>(chunk) * rewrite_fraction));
    const std::uint64_t advance = chunk - std::min(back, chunk - 1);
    std::uint64_t offset = 0;
    for (std::uint64_t written_new = 0; written_new < total_new; written_new += advance) {
        out.push_back({offset, chunk, delay, 0});
        offset += advance;
    }
    return out;
}

} // namespace iosig::cachesim
