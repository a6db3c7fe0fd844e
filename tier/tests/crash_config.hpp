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

// A 4-line cache over a 6-line home file whose journal's device fails after lines 0-3 were written
// with `acked`, committed (their DIRTY records trusted after a power cut) and fsynced: home, their
// CLEAN records appended, and the COMMIT record after them, which would have made them durable,
// refused. `then(tier, handle, home file)` goes on with the engine; then the power is cut (`seed`)
// and the engine recovered. Returns the home file. `idle_files` as TierConfig's (0: every file
// released at its last close).
template <typename Then>
std::vector<char> after_the_journal_fails(std::uint64_t seed, const std::vector<char>& acked,
                                          Then then,
                                          std::size_t idle_files = TierConfig{}.idle_files) {
    constexpr std::size_t line = 4096;
    ScratchDir dir;
    const auto home = dir / "home.dat";
    write_file(home, pattern(6 * line, 5));
    auto faults = std::make_shared<IoFaults>();
    TierConfig config = four_line_config(dir, faults);
    config.idle_files = idle_files;
    {
        auto tier = TierCache::open(config);
        const int h = tier->open_file(home, O_RDWR);
        for (off_t l = 0; l < 4; ++l)
            EXPECT_EQ(tier->pwrite(h, acked.data(), line, l * line), static_cast<ssize_t>(line));
        EXPECT_EQ(tier->commit(), 0);
        faults->fail_nth_write(5, {FileRole::journal}); // 4 CLEAN records, then the COMMIT
        EXPECT_EQ(tier->fsync(h), 0);
        EXPECT_EQ(tier->stats().dirty_lines, 0u);
        then(*tier, h, home);
        tier->abandon();
    }
    faults->crash(seed);
    auto tier = TierCache::open(config_for(dir, nullptr));
    return read_file(home);
}

} // namespace iosig::tier::test_support
