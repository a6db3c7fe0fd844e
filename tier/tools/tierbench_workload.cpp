// iosig-tierbench's requests (tierbench_workload.hpp).
#include "tierbench_workload.hpp"

#include "iosig/tier/io.hpp"
#include "iosig/units.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <random>
#include <stdexcept>
#include <unistd.h>
#include <unordered_map>

namespace iosig::tier::bench {
namespace {

// Counts, the largest request, and whether most requests continue the previous one.
void summarise(Workload& w) {
    std::uint64_t continued = 0;
    std::uint64_t previous_end = 0;
    for (const Op& op : w.ops) {
        ++(op.write ? w.writes : w.reads);
        w.largest_op = std::max<std::uint64_t>(w.largest_op, op.size);
        if (static_cast<std::uint64_t>(op.offset) == previous_end) ++continued;
        previous_end = static_cast<std::uint64_t>(op.offset) + op.size;
    }
    w.sequential = 2 * continued > w.ops.size();
}

} // namespace

Trace Workload::as_trace() const {
    Trace trace;
    trace.kind = TraceKind::blocks;
    trace.source = "iosig-tierbench";
    trace.requests.reserve(ops.size());
    for (const Op& op : ops)
        trace.requests.push_back(Request{static_cast<std::uint64_t>(op.offset), op.size, op.write});
    return trace;
}

Workload synthetic_workload(const std::string& pattern, std::uint64_t working_set,
                            std::uint64_t io_size, std::uint64_t count, double write_ratio,
                            std::uint64_t seed) {
    const std::uint64_t slots = working_set / io_size;
    std::mt19937_64 rng(seed);
    std::vector<double> zipf_cdf;
    if (pattern == "zipf") {
        double sum = 0;
        for (std::uint64_t i = 0; i < slots; ++i)
            zipf_cdf.push_back(sum += 1.0 / std::pow(double(i + 1), 0.9));
        for (double& c : zipf_cdf)
            c /= sum;
    } else if (pattern != "random" && pattern != "sequential") {
        throw std::invalid_argument(
            fmt::format("--pattern '{}': expected random, zipf or sequential", pattern));
    }
    Workload w;
    w.file_size = working_set;
    for (std::uint64_t i = 0; i < count; ++i) {
        std::uint64_t slot;
        const double u = double(rng() >> 11) * 0x1.0p-53;
        if (pattern == "sequential")
            slot = i % slots;
        else if (pattern == "zipf")
            slot = std::min<std::uint64_t>(std::lower_bound(zipf_cdf.begin(), zipf_cdf.end(), u) -
                                               zipf_cdf.begin(),
                                           slots - 1);
        else
            slot = rng() % slots;
        const bool write = double(rng() >> 11) * 0x1.0p-53 < write_ratio;
        w.ops.push_back(
            Op{static_cast<off_t>(slot * io_size), static_cast<std::uint32_t>(io_size), write});
    }
    summarise(w);
    // A wrapping scan is sequential whatever its first request says.
    w.sequential = pattern == "sequential";
    return w;
}

Trace with_offsets(const Trace& trace, std::optional<std::uint64_t> id_unit) {
    if (id_unit) return object_ids_as_offsets(trace, *id_unit);
    return trace.kind == TraceKind::blocks ? trace : objects_end_to_end(trace);
}

Workload trace_workload(const Trace& trace, std::uint64_t line_size, std::uint64_t count) {
    if (trace.kind != TraceKind::blocks)
        throw std::invalid_argument(
            fmt::format("{}: an object trace has no offsets to replay on a file", trace.source));
    if (line_size == 0) throw std::invalid_argument("line size must be > 0");
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>(count, trace.requests.size()));
    if (n == 0) throw std::invalid_argument(fmt::format("{}: no requests", trace.source));
    std::vector<std::uint64_t> lines;
    for (std::size_t i = 0; i < n; ++i) {
        const LineSpan span = line_span(trace.requests[i], line_size);
        for (std::uint64_t l = span.first; l < span.first + span.count; ++l)
            lines.push_back(l);
    }
    std::sort(lines.begin(), lines.end());
    lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
    std::unordered_map<std::uint64_t, std::uint64_t> dense;
    dense.reserve(lines.size());
    for (std::uint64_t i = 0; i < lines.size(); ++i)
        dense.emplace(lines[i], i);
    Workload w;
    w.file_size = lines.size() * line_size;
    w.ops.reserve(n);
    // All lines of one request are in `lines`, so their dense numbers are consecutive too.
    for (std::size_t i = 0; i < n; ++i) {
        const Request& r = trace.requests[i];
        if (r.size == 0) continue;
        const std::uint64_t offset = dense.at(r.id / line_size) * line_size + r.id % line_size;
        w.ops.push_back(Op{static_cast<off_t>(offset), r.size, r.write});
    }
    summarise(w);
    return w;
}

void require_room(const std::filesystem::path& file, std::uint64_t bytes, const std::string& what) {
    std::error_code error;
    const std::uint64_t room = room_for(file, error);
    if (error)
        throw std::invalid_argument(
            fmt::format("{}: {}", file.parent_path().string(), error.message()));
    if (bytes > room)
        throw std::invalid_argument(
            fmt::format("{} needs {} on {}, which has {} free", what, iosig::format_size(bytes),
                        file.parent_path().string(), iosig::format_size(room)));
}

void prepare_home(const std::filesystem::path& path, std::uint64_t size) {
    std::error_code ec;
    if (std::filesystem::exists(path, ec) && std::filesystem::file_size(path, ec) == size) {
        // Reused: drop what an earlier run left in the page cache (reads that bypassed the
        // cache go through it), so that every run starts from the device.
        if (const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {
            ::fdatasync(fd);
            ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
            ::close(fd);
        }
        return;
    }
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        throw std::runtime_error(fmt::format("{}: {}", path.string(), std::strerror(errno)));
    std::vector<char> block(1 << 20);
    std::mt19937_64 rng(1);
    for (std::uint64_t done = 0; done < size;) {
        for (auto& c : block)
            c = static_cast<char>(rng());
        const std::size_t n =
            static_cast<std::size_t>(std::min<std::uint64_t>(block.size(), size - done));
        if (const ssize_t written = ::write(fd, block.data(), n);
            written != static_cast<ssize_t>(n)) {
            const int error = written < 0 ? errno : ENOSPC; // a short write: the disk is full
            ::close(fd);
            throw std::runtime_error(fmt::format("{}: cannot write the {}-byte home file: {}",
                                                 path.string(), size, std::strerror(error)));
        }
        done += n;
    }
    ::fsync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
}

} // namespace iosig::tier::bench
