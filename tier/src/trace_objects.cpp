// Object traces replayed as block traces (trace.hpp).
#include "iosig/tier/trace.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <stdexcept>

namespace iosig::tier {
namespace {

void require_objects(const Trace& trace) {
    if (trace.kind != TraceKind::objects)
        throw std::invalid_argument(
            fmt::format("{}: the trace already has byte offsets (a block trace)", trace.source));
}

Trace block_trace_like(const Trace& objects, std::string_view how) {
    Trace blocks;
    blocks.source = fmt::format("{} ({})", objects.source, how);
    blocks.kind = TraceKind::blocks;
    blocks.skipped_zero_size = objects.skipped_zero_size;
    blocks.requests.reserve(objects.requests.size());
    return blocks;
}

constexpr std::uint64_t last_byte = std::numeric_limits<std::uint64_t>::max();

} // namespace

Trace object_ids_as_offsets(const Trace& objects, std::uint64_t id_unit) {
    require_objects(objects);
    if (id_unit == 0)
        throw std::invalid_argument(
            fmt::format("{}: the unit of the object ids must be at least 1 byte", objects.source));
    Trace blocks = block_trace_like(objects, fmt::format("ids x {} B", id_unit));
    for (std::size_t i = 0; i < objects.requests.size(); ++i) {
        const Request& r = objects.requests[i];
        if (r.id > (last_byte - r.size) / id_unit)
            throw std::invalid_argument(
                fmt::format("{}: request {}: object id {} x {} B is past the largest byte offset",
                            objects.source, i + 1, r.id, id_unit));
        blocks.requests.push_back(Request{r.id * id_unit, r.size, r.write});
    }
    return blocks;
}

Trace objects_end_to_end(const Trace& objects) {
    require_objects(objects);
    std::map<std::uint64_t, std::uint64_t> extent; // id -> largest size, then offset (id order)
    for (const Request& r : objects.requests) {
        std::uint64_t& size = extent[r.id];
        size = std::max<std::uint64_t>(size, r.size);
    }
    std::uint64_t next = 0;
    for (auto& [id, slot] : extent) {
        const std::uint64_t size = slot;
        if (next > last_byte - size)
            throw std::invalid_argument(fmt::format(
                "{}: the objects laid end to end pass the largest byte offset", objects.source));
        slot = next;
        next += size;
    }
    Trace blocks = block_trace_like(objects, "objects end to end");
    for (const Request& r : objects.requests)
        blocks.requests.push_back(Request{extent.at(r.id), r.size, r.write});
    return blocks;
}

} // namespace iosig::tier
