// A cache slot's metadata (Engine::meta_ in engine_impl.hpp) and the key that names a line.
#pragma once

#include "iosig/tier/policy.hpp"

#include <cstdint>

namespace iosig::tier::detail {

inline constexpr unsigned line_bits = 40; // key = file id << 40 | line number

// One per slot, so its size is paid per cache line: the 8-byte fields first, so that no padding
// sits between the small ones.
struct LineMeta {
    Key key = 0;
    std::uint64_t generation = 0;         // bumped by every write
    std::uint64_t flushed_generation = 0; // generation contained in the last completed write-back
    std::uint64_t dirty_token = 0;        // identifies this dirty period in the flusher's FIFO
    double dirty_since = 0;               // steady-clock seconds
    // The journal sequence of its CLEAN record (must be durable before reuse).
    std::int64_t clean_record = 0;
    std::uint32_t file = 0;
    std::uint32_t pins = 0;
    // While dirty: the bytes writes changed, [dirty_begin, dirty_end) within the line, or the span
    // of its parts when they are more than one (Engine::dirty_parts_, dirty_parts.hpp). Only
    // these go home.
    std::uint32_t dirty_begin = 0;
    std::uint32_t dirty_end = 0;
    bool valid = false; // holds the line's data (fill finished)
    bool dirty = false;
    bool flushing = false; // a write-back has claimed it
    bool in_free_list = true;
    // While dirty (TierConfig::dirty_bytes_only): the journal refused a DIRTY_PART record of it,
    // so the parts it names may miss bytes the line holds; the next write records the whole line.
    bool parts_unrecorded = false;
};
static_assert(sizeof(LineMeta) == 72);

// The line number of the line `key` names (key = file id << line_bits | line number).
inline std::uint64_t line_of(Key key) {
    return key & ((Key{1} << line_bits) - 1);
}

} // namespace iosig::tier::detail
