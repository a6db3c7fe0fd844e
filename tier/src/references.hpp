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

// A trace's references a chunk of whole requests at a time, so that a replay's memory does not
// grow with the trace's length: no more than `chunk` references per chunk, unless one request
// alone has more. With `with_requests`, each reference's request index too.
inline constexpr std::size_t default_reference_chunk = std::size_t{1} << 16;
class ReferenceChunks {
public:
    ReferenceChunks(const Trace& trace, SimMode mode, std::uint64_t line_size,
                    std::size_t chunk = default_reference_chunk, bool with_requests = false)
        : trace_(trace), mode_(mode), line_size_(line_size), chunk_(chunk),
          with_requests_(with_requests) {}
    // Expands the next chunk; false after the last.
    bool next();
    const std::vector<Reference>& refs() const { return refs_; }
    // The request each reference of the chunk belongs to (with_requests only).
    const std::vector<std::uint32_t>& request_of() const { return request_of_; }
    // The trace-wide index of refs()[0].
    std::uint64_t base() const { return base_; }

private:
    const Trace& trace_;
    SimMode mode_;
    std::uint64_t line_size_;
    std::size_t chunk_;
    bool with_requests_;
    std::vector<Reference> refs_;
    std::vector<std::uint32_t> request_of_;
    std::uint64_t base_ = 0;
    std::size_t next_request_ = 0;
};

// How many references and requested bytes the whole trace makes, without expanding it.
struct ReferenceTotals {
    std::uint64_t references = 0, bytes = 0;
};
ReferenceTotals reference_totals(const Trace& trace, SimMode mode, std::uint64_t line_size);

} // namespace iosig::tier::detail
