// The requests iosig-tierbench issues: a synthetic access pattern, or the first requests of a block
// trace (or of an object trace given offsets) laid out on a file of just the lines they touch.
#pragma once

#include "iosig/tier/trace.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace iosig::tier::bench {

struct Op {
    off_t offset = 0;
    std::uint32_t size = 0;
    bool write = false;

    // The request widened to whole 4 KiB blocks, as O_DIRECT on the home file issues it.
    off_t block_begin() const { return offset / 4096 * 4096; }
    std::uint64_t block_bytes() const {
        return static_cast<std::uint64_t>((offset + size + 4095) / 4096 * 4096 - block_begin());
    }
};

struct Workload {
    std::vector<Op> ops;
    std::uint64_t file_size = 0;  // bytes the home file needs
    std::uint64_t largest_op = 0; // bytes
    bool sequential = false;      // most requests start where the previous one ended
    std::uint64_t reads = 0, writes = 0;

    // The requests as a block trace, for the simulator and the write-back model.
    Trace as_trace() const;
};

// `count` requests of `io_size` bytes over `working_set` bytes: "random" (uniform), "zipf"
// (exponent 0.9) or "sequential" (wrapping), each a write with probability `write_ratio`. Throws
// std::invalid_argument for another pattern.
Workload synthetic_workload(const std::string& pattern, std::uint64_t working_set,
                            std::uint64_t io_size, std::uint64_t count, double write_ratio,
                            std::uint64_t seed);

// `trace` with byte offsets to replay on a file: a block trace as it is; an object trace through
// object_ids_as_offsets when the unit of its ids is given (they are block addresses), else
// objects_end_to_end (trace.hpp). Throws std::invalid_argument for a unit given to a block trace.
Trace with_offsets(const Trace& trace, std::optional<std::uint64_t> id_unit);

// The first `count` requests of `trace` (kind blocks) with their sizes and directions. The lines
// they touch keep their order by address with the gaps between them removed, so the home file
// holds only those lines, a request keeps its offset inside its first line, and requests that
// were adjacent stay adjacent. Throws std::invalid_argument for an object trace or no requests.
Workload trace_workload(const Trace& trace, std::uint64_t line_size, std::uint64_t count);

// Throws std::invalid_argument unless the file system of `file` has room for it to hold `bytes`
// (its free space plus what `file`, if it exists, already holds): `what` names the option that
// asked for it. So a run fails before it starts, not after a long direct run.
void require_room(const std::filesystem::path& file, std::uint64_t bytes, const std::string& what);

// The home file: `size` bytes of pseudo-random data, written buffered and synced (fast even on the
// throttled disk, whose limit applies to direct and synchronous IO of the cgroup's processes), or
// the one there already if it has that size; either way not in the page cache afterwards.
void prepare_home(const std::filesystem::path& path, std::uint64_t size);

} // namespace iosig::tier::bench
