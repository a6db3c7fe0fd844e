// The simulator's sequential bypass (sequential_bypass.hpp).
#include "sequential_bypass.hpp"

#include <algorithm>

namespace iosig::tier::detail {
namespace {

std::uint64_t trace_end(const Trace& trace) {
    std::uint64_t end = 0;
    for (const Request& r : trace.requests)
        end = std::max(end, r.id + r.size);
    return end;
}

} // namespace

SequentialBypass::SequentialBypass(const Trace& trace, const SimConfig& config)
    : trace_(trace), line_size_(config.line_size), bypassed_(trace.requests.size(), false),
      page_cache_(config.readahead,
                  config.home_file_size ? config.home_file_size : trace_end(trace)) {
    std::uint64_t stream_end = 0, stream_bytes = 0;
    for (std::size_t i = 0; i < trace.requests.size(); ++i) {
        const Request& r = trace.requests[i];
        if (r.size == 0) continue; // the engine returns before it looks at the stream
        stream_bytes = r.id == stream_end ? stream_bytes + r.size : r.size;
        stream_end = r.id + r.size;
        bypassed_[i] = stream_bytes > config.sequential_cutoff;
    }
}

void SequentialBypass::serve(const Reference& ref, std::uint32_t request, SimResult& result,
                             bool per_request) {
    ++result.bypassed_references;
    result.bypassed_bytes += ref.bytes;
    const Request& r = trace_.requests[request];
    // The part of the request in this line, as the engine reads or writes it: a line at a time.
    const std::uint64_t begin = line_part(r, ref.key, line_size_).begin;
    if (ref.write) {
        result.bypassed_write_bytes += ref.bytes;
        page_cache_.write(begin, ref.bytes);
        if (per_request) result.bypassed_write_lines.emplace_back(request, ref.key);
        return;
    }
    const HomeReads home = page_cache_.read(begin, ref.bytes);
    result.bypass_reads.ios += home.ios;
    result.bypass_reads.bytes += home.bytes;
    if (per_request) {
        result.request_bypass_ios[request] += static_cast<std::uint32_t>(home.ios);
        result.request_bypass_bytes[request] += home.bytes;
    }
}

} // namespace iosig::tier::detail
