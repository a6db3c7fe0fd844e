// Trace requests as cache references (references.hpp).
#include "references.hpp"

#include <algorithm>
#include <bit>
#include <fmt/format.h>
#include <stdexcept>

namespace iosig::tier::detail {

SimMode checked_mode(const Trace& trace, const SimConfig& config) {
    const SimMode mode =
        config.mode.value_or(trace.kind == TraceKind::objects ? SimMode::object : SimMode::block);
    if (mode == SimMode::block && trace.kind == TraceKind::objects)
        throw std::invalid_argument(
            fmt::format("{}: block mode needs a block trace (byte offsets); this trace "
                        "holds object ids (if they are block addresses, give their unit: "
                        "iosig-tiersim --id-unit 512 for sectors)",
                        trace.source));
    if (mode == SimMode::block && (!std::has_single_bit(config.line_size) ||
                                   config.line_size < 512 || config.line_size > (1ull << 30)))
        throw std::invalid_argument(fmt::format(
            "line size {} is not a power of two between 512 B and 1 GiB", config.line_size));
    if (config.cache_size == 0) throw std::invalid_argument("cache size must be > 0");
    return mode;
}

bool ReferenceChunks::next() {
    base_ += refs_.size();
    refs_.clear();
    request_of_.clear();
    if (next_request_ >= trace_.requests.size()) return false;
    for (; next_request_ < trace_.requests.size(); ++next_request_) {
        const Request& r = trace_.requests[next_request_];
        const LineSpan span =
            mode_ == SimMode::object ? LineSpan{r.id, 1} : line_span(r, line_size_);
        if (!refs_.empty() && refs_.size() + span.count > chunk_) break;
        if (with_requests_)
            request_of_.insert(request_of_.end(), span.count,
                               static_cast<std::uint32_t>(next_request_));
        if (mode_ == SimMode::object) {
            refs_.push_back(Reference{r.id, r.size, r.size, r.write});
            continue;
        }
        for (std::uint64_t line = span.first; line < span.first + span.count; ++line) {
            const ByteRange part = line_part(r, line, line_size_);
            refs_.push_back(
                Reference{line, 1, static_cast<std::uint32_t>(part.end - part.begin), r.write});
        }
    }
    return true;
}

ReferenceTotals reference_totals(const Trace& trace, SimMode mode, std::uint64_t line_size) {
    ReferenceTotals totals;
    for (const Request& r : trace.requests) {
        totals.references += mode == SimMode::object ? 1 : line_span(r, line_size).count;
        totals.bytes += r.size; // a block request's lines hold its bytes between them
    }
    return totals;
}

} // namespace iosig::tier::detail
