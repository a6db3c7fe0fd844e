// The set-up of the device-failure tests (cache_failure_test.cpp, journal_failure_test.cpp): the
// smallest cache (4 lines of 4 KiB, every one of them allowed dirty) over a 5-line home file, with
// an IoFaults to fail the cache file or the journal.
#pragma once

#include "engine_fixture.hpp"
#include "iosig/tier/io.hpp"

#include <gtest/gtest.h>
#include <memory>
#include <vector>

namespace iosig::tier::test_support {

inline constexpr std::size_t device_test_line = 4096;

inline std::vector<char> slice(const std::vector<char>& v, std::size_t from, std::size_t count) {
    return {v.begin() + static_cast<std::ptrdiff_t>(from),
            v.begin() + static_cast<std::ptrdiff_t>(from + count)};
}

struct FailingDevice {
    FailingDevice() {
        write_file(home, initial);
        TierConfig config = small_config(dir, 4);
        config.max_dirty_lines = 4; // nothing goes home unless a test asks
        config.faults = faults;
        tier = TierCache::open(config);
        h = tier->open_file(home, O_RDWR);
    }
    std::vector<char> read_line(std::size_t l) {
        std::vector<char> v(device_test_line);
        EXPECT_EQ(tier->pread(h, v.data(), v.size(), static_cast<off_t>(l * v.size())),
                  static_cast<ssize_t>(v.size()));
        return v;
    }

    ScratchDir dir;
    std::filesystem::path home = dir / "home.dat";
    std::vector<char> initial = pattern(5 * device_test_line, 1);
    std::shared_ptr<IoFaults> faults = std::make_shared<IoFaults>();
    std::unique_ptr<TierCache> tier;
    int h = -1;
};

} // namespace iosig::tier::test_support
