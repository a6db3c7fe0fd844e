// The engine configuration of the crash tests (crash_test.cpp, crash_cases_test.cpp): a cache a
// third of the workload's file, a low dirty bound and a short write-back delay, so that evictions
// and write-backs happen under pressure throughout.
#pragma once

#include "engine_fixture.hpp"
#include "iosig/tier/io.hpp"

#include <fcntl.h>
#include <memory>
#include <string>
#include <vector>

namespace iosig::tier::test_support {

inline TierConfig config_for(const ScratchDir& dir, std::shared_ptr<IoFaults> faults,
                             std::uint64_t journal_compaction_bytes = 64ull << 20) {
    TierConfig c;
    c.cache_file = dir / "cache.tier";
    c.line_size = 4096;
    c.cache_size = 8 * 4096; // a third of the file: evictions and write-backs under pressure
    c.max_dirty_lines = 4;
    c.writeback_delay = 0.002;
    c.policy = "lru";
    c.sequential_cutoff = 0;
    c.journal_compaction_bytes = journal_compaction_bytes;
    c.faults = std::move(faults);
    return c;
}

// config_for with the smallest cache (4 lines) and no write-back unless the test asks for it: the
// one-case tests (crash_cases_test.cpp) decide which line sits in which slot.
inline TierConfig four_line_config(const ScratchDir& dir, std::shared_ptr<IoFaults> faults) {
    TierConfig c = config_for(dir, std::move(faults));
    c.cache_size = 4 * c.line_size;
    c.writeback_delay = 3600;
    return c;
}

// Writes `dirty` over the second line of `path` (4 lines of pattern 1) through an engine that
// writes nothing home, and crashes it (abandon): the journal lists the line dirty. "" on success.
inline std::string leave_a_dirty_line(const ScratchDir& dir, const std::filesystem::path& path,
                                      const std::vector<char>& dirty) {
    const std::size_t line = 4096; // four_line_config's
    write_file(path, pattern(4 * line, 1));
    auto tier = TierCache::open(four_line_config(dir, nullptr));
    const int h = tier->open_file(path, O_RDWR);
    if (h < 0 || tier->pwrite(h, dirty.data(), line, line) != static_cast<ssize_t>(line) ||
        tier->commit() != 0)
        return "could not leave a dirty line";
    tier->abandon();
    return "";
}

// What `path` holds once recovery has written that line home.
inline std::vector<char> with_the_dirty_line(const std::vector<char>& dirty) {
    const std::size_t line = 4096;
    std::vector<char> expected = pattern(4 * line, 1);
    std::copy(dirty.begin(), dirty.end(), expected.begin() + line);
    return expected;
}

} // namespace iosig::tier::test_support
