// The bytes of a cache line that writes changed since it was last clean, which are all a write-back
// puts home (Engine::flush_slots): the rest of the line is what its fill read, and another writer
// of the file (another process with an engine of its own) may have changed those bytes at home
// since. Most dirty lines have one part (whole-line writes, appends), kept in LineMeta as
// [dirty_begin, dirty_end); a line written in separate places keeps its parts in
// Engine::dirty_parts_ (docs/tier.md, "Several writers of one file").
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace iosig::tier::detail {

struct ByteRange {
    std::uint32_t begin = 0, end = 0; // [begin, end) within a line
    bool operator==(const ByteRange&) const = default;
};

// At most this many parts per line: past it the two closest merge, and the bytes between them go
// home too (as they did from every line before session 36).
inline constexpr std::size_t most_dirty_parts = 64;

// Adds `range` to `parts` (in order, disjoint, none touching another), merging what it overlaps or
// touches; past `most` parts, merges the two separated by the smallest gap.
void add_dirty_part(std::vector<ByteRange>& parts, ByteRange range,
                    std::size_t most = most_dirty_parts);

} // namespace iosig::tier::detail
