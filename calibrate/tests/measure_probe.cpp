// Test support for lab_calibrate_test.py's fio comparison: runs single measurement phases of
// iosig-calibrate (the same MountIo code, on one scratch file kept for the whole session) on
// command, so that the test can alternate them with fio runs of the same shape seconds apart.
//
// Usage: calibrate_measure_probe DIRECTORY FILE_SIZE
// stdin, one command per line: PHASE BLOCK QUEUE_DEPTH SECONDS, PHASE one of seq_write, seq_read,
// random_read, random_write (the first command must be seq_write: it lays the file out).
// stdout, one JSON object per command: {"phase", "rate", "unit", "engine", "queue_depth", "block",
// "buffer_contiguous", "file"} (the IO buffer's physically contiguous share, -1 when unreadable;
// the scratch file, which the test hands to fio so that both tools move the same pages).
#include "measure.hpp"
#include "mountinfo.hpp"

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

using namespace iosig::calibrate;

namespace {

int usage(const char* why) {
    std::fprintf(
        stderr, "calibrate_measure_probe: %s\nusage: calibrate_measure_probe DIRECTORY FILE_SIZE\n",
        why);
    return 2;
}

// The path goes into a JSON string: it comes from realpath() of the test's own mount directory and
// a file name iosig-calibrate chose, so it holds no quote or backslash to escape.
void print(const std::string& phase, double rate, const char* unit, const std::string& engine,
           unsigned queue_depth, std::uint64_t block, std::optional<double> contiguity,
           const std::string& file) {
    std::printf("{\"phase\": \"%s\", \"rate\": %.3f, \"unit\": \"%s\", \"engine\": \"%s\", "
                "\"queue_depth\": %u, \"block\": %llu, \"buffer_contiguous\": %.3f, "
                "\"file\": \"%s\"}\n",
                phase.c_str(), rate, unit, engine.c_str(), queue_depth,
                static_cast<unsigned long long>(block), contiguity.value_or(-1.0), file.c_str());
    std::fflush(stdout);
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 3) return usage("two arguments expected");
    char resolved[PATH_MAX];
    if (realpath(argv[1], resolved) == nullptr) return usage("DIRECTORY does not exist");
    const auto mount = containing_mount(read_mountinfo(), resolved);
    if (!mount) return usage("no mount holds DIRECTORY");
    const std::uint64_t file_size = std::strtoull(argv[2], nullptr, 10);
    if (file_size == 0) return usage("FILE_SIZE must be a positive byte count");
    try {
        MountIo io(resolved, mount->fs_type, mount->fs_type == "btrfs" ? 4096 : 0, -1);
        bool laid_out = false;
        std::string line;
        while (std::getline(std::cin, line)) {
            std::istringstream words(line);
            std::string phase;
            std::uint64_t block = 0;
            unsigned depth = 0;
            double seconds = 0;
            if (!(words >> phase >> block >> depth >> seconds) || block == 0 || depth == 0) {
                std::fprintf(stderr, "calibrate_measure_probe: bad command '%s'\n", line.c_str());
                return 2;
            }
            const PhaseLimits limits{seconds, 4, UINT64_MAX, {}};
            if (phase == "seq_write") {
                const Throughput t = io.sequential_write(block, file_size, limits, depth);
                laid_out = true;
                print(phase, t.bytes_per_second, "bytes_per_s", t.engine, t.queue_depth, t.block,
                      io.buffer_contiguity(), io.path());
            } else if (!laid_out) {
                std::fprintf(stderr, "calibrate_measure_probe: seq_write must come first\n");
                return 2;
            } else if (phase == "seq_read") {
                const Throughput t = io.sequential_read(block, limits, depth);
                print(phase, t.bytes_per_second, "bytes_per_s", t.engine, t.queue_depth, t.block,
                      io.buffer_contiguity(), io.path());
            } else if (phase == "random_read" || phase == "random_write") {
                const PhaseLimits iops_limits{seconds, depth + 200ULL, UINT64_MAX, {}};
                const Iops r = io.random_iops(phase == "random_write", block, depth, iops_limits);
                print(phase, r.iops, "iops", r.engine, r.queue_depth, r.block,
                      io.buffer_contiguity(), io.path());
            } else {
                std::fprintf(stderr, "calibrate_measure_probe: unknown phase '%s'\n",
                             phase.c_str());
                return 2;
            }
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "calibrate_measure_probe: %s\n", e.what());
        return 1;
    }
    return 0;
}
