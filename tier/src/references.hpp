// What a cache sees of a trace: an object per request (object mode), or each fixed-size line a
// block request touches (block mode). Shared by the simulator and the hindsight analysis.
#pragma once

#include "iosig/tier/policy.hpp"
#include "iosig/tier/simulator.hpp"
#include "iosig/tier/trace.hpp"

#include <cstdint>
#include <vector>

namespace iosig::tier::detail {

struct Reference {
    Key key = 0;
    std::uint64_t size = 1;  // capacity units
    std::uint32_t bytes = 0; // requested bytes inside it
    bool write = false;
};

// The mode `config` asks for (default: object for object traces, block for block traces).
// Throws std::invalid_argument for block mode on an object trace, a line size that is not a power
// of two between 512 B and 1 GiB, or a zero cache size.
SimMode checked_mode(const Trace& trace, const SimConfig& config);

// The requests from `first` on as references, whole requests only, into `refs` (cleared first) and,
// when given, each reference's request index into `request_of`: no more than `max_refs`
// references, unless request `first` alone has more. Returns the index of the first request left
// out (trace.requests.size() at the end). The replay expands a trace a chunk at a time, so that a
// simulation's memory does not grow with the trace's length.
std::size_t expand_requests(const Trace& trace, SimMode mode, std::uint64_t line_size,
                            std::size_t first, std::size_t max_refs, std::vector<Reference>& refs,
                            std::vector<std::uint32_t>* request_of);

// How many references and requested bytes the whole trace makes, without expanding it.
struct ReferenceTotals {
    std::uint64_t references = 0, bytes = 0;
};
ReferenceTotals reference_totals(const Trace& trace, SimMode mode, std::uint64_t line_size);

} // namespace iosig::tier::detail
