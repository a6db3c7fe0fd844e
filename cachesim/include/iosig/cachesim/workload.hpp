// A write workload: one write per row of a CSV file with the header `offset,size,delay_s`.
// offset and size accept sizes with units ("4K", "1M"; base 1024), delay_s is seconds of
// computation before the write (a number, or a duration with unit such as "5ms").
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iosig::cachesim {

struct WriteRequest {
    std::uint64_t offset = 0;
    std::uint64_t size = 0;
    double delay = 0; // s
    int line = 0;     // 1-based line in the workload file (0 = generated)
};

struct WorkloadResult {
    std::vector<WriteRequest> writes;
    std::string error; // "file:line: message" when parsing failed
    bool ok() const { return error.empty(); }
};

WorkloadResult parse_workload(std::string_view text, std::string_view name = "<workload>");
WorkloadResult load_workload(const std::filesystem::path& file);

std::string to_csv(const std::vector<WriteRequest>& writes);

// Generators for the paper's scenarios (used by the validation harness and the tests).
std::vector<WriteRequest> sequential_workload(std::uint64_t total, std::uint64_t chunk,
                                              double delay);
// CAWL Fig. 7: before each chunk, seek back over `rewrite_fraction` of the previous chunk, so that
// each write rewrites that much and appends the rest.
std::vector<WriteRequest> rewrite_workload(std::uint64_t total_new, std::uint64_t chunk,
                                           double rewrite_fraction, double delay);

} // namespace iosig::cachesim
