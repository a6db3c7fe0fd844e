// The dirty parts of a line (dirty_parts.hpp).
#include "dirty_parts.hpp"

#include <algorithm>

namespace iosig::tier::detail {

void add_dirty_part(std::vector<ByteRange>& parts, ByteRange range, std::size_t most) {
    // The first part that ends at or after the range's begin: every part before it lies wholly
    // before the range, with a gap between.
    auto first = std::lower_bound(parts.begin(), parts.end(), range.begin,
                                  [](const ByteRange& p, std::uint32_t at) { return p.end < at; });
    auto last = first;
    while (last != parts.end() && last->begin <= range.end) {
        range.begin = std::min(range.begin, last->begin);
        range.end = std::max(range.end, last->end);
        ++last;
    }
    first = parts.erase(first, last);
    parts.insert(first, range);
    if (parts.size() <= std::max<std::size_t>(most, 1)) return;
    std::size_t closest = 0;
    for (std::size_t i = 1; i + 1 < parts.size(); ++i)
        if (parts[i + 1].begin - parts[i].end < parts[closest + 1].begin - parts[closest].end)
            closest = i;
    parts[closest].end = parts[closest + 1].end;
    parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(closest) + 1);
}

} // namespace iosig::tier::detail
