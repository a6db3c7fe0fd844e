// iosig-tierbench: drive the engine on real files (a home file on a slow mount, the cache on a fast
// one) with a chosen access pattern or the requests of a block trace, and report the measured time
// next to the queueing model's prediction (docs/tier.md, "Measuring on real devices"). Run it
// inside `tests/lab/lab exec` so that the lab's throttled hdd is slow for it.
#include "iosig/tier/engine.hpp"
#include "iosig/units.hpp"
#include "prefetch_options.hpp"
#include "tierbench_model.hpp"
#include "tierbench_workload.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <unistd.h>

namespace {

using namespace iosig::tier;
using Clock = std::chrono::steady_clock;

constexpr int exit_ok = 0, exit_failure = 1, exit_bad_input = 2;

std::uint64_t size_or_throw(const std::string& text, const char* what) {
    const auto parsed = iosig::parse_size(text);
    if (!parsed)
        throw std::invalid_argument(fmt::format("{} '{}': {}", what, text, parsed.error.message));
    return *parsed.value;
}

// Each request on the home file with O_DIRECT, widened to whole 4 KiB blocks.
double run_direct(const std::filesystem::path& home, const std::vector<bench::Op>& ops,
                  std::uint64_t largest_op) {
    const int fd = ::open(home.c_str(), O_RDWR | O_DIRECT | O_CLOEXEC);
    if (fd < 0)
        throw std::runtime_error(
            fmt::format("{}: O_DIRECT open: {}", home.string(), std::strerror(errno)));
    const std::size_t capacity = static_cast<std::size_t>((largest_op + 2 * 4095) / 4096 * 4096);
    void* buffer = std::aligned_alloc(4096, capacity);
    std::memset(buffer, 7, capacity);
    const auto start = Clock::now();
    bool wrote = false;
    for (const bench::Op& op : ops) {
        const off_t begin = op.block_begin();
        const auto bytes = static_cast<std::size_t>(op.block_bytes());
        const ssize_t n =
            op.write ? ::pwrite(fd, buffer, bytes, begin) : ::pread(fd, buffer, bytes, begin);
        if (n != static_cast<ssize_t>(bytes)) {
            const int error = errno;
            std::free(buffer);
            ::close(fd);
            throw std::runtime_error(
                fmt::format("{}: direct IO failed: {}", home.string(), std::strerror(error)));
        }
        wrote |= op.write;
    }
    if (wrote) ::fdatasync(fd);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::free(buffer);
    ::close(fd);
    return seconds;
}

struct TierRun {
    double seconds = 0;
    TierStats stats;
};

TierRun run_tier(const TierConfig& config, const std::filesystem::path& home,
                 const std::vector<bench::Op>& ops, std::uint64_t largest_op) {
    std::error_code ec;
    std::filesystem::remove(config.cache_file, ec);
    auto tier = TierCache::open(config);
    // Page-aligned, as the direct run's and as a program's large buffers are (malloc maps them),
    // so that the engine's IO past the cache takes the path it would take for such a program.
    const std::size_t capacity = (largest_op + 4095) / 4096 * 4096;
    const std::unique_ptr<char, decltype(&std::free)> memory(
        static_cast<char*>(std::aligned_alloc(4096, capacity)), &std::free);
    if (!memory) throw std::runtime_error("out of memory for the request buffer");
    char* const buffer = memory.get();
    std::memset(buffer, 7, capacity);
    TierRun run;
    const auto start = Clock::now();
    const int h = tier->open_file(home, O_RDWR);
    if (h < 0) throw std::runtime_error(fmt::format("{}: {}", home.string(), std::strerror(-h)));
    for (const bench::Op& op : ops) {
        const ssize_t n = op.write ? tier->pwrite(h, buffer, op.size, op.offset)
                                   : tier->pread(h, buffer, op.size, op.offset);
        if (n != static_cast<ssize_t>(op.size))
            throw std::runtime_error(fmt::format(
                "tier IO failed: {}", n < 0 ? std::strerror(static_cast<int>(-n)) : "short"));
    }
    if (const int e = tier->close(h); e < 0)
        throw std::runtime_error(fmt::format("close: {}", std::strerror(-e)));
    run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    run.stats = tier->stats();
    return run;
}

// --cache-size: bytes, or a share of the home file ("25%"); default twice the home file.
std::uint64_t cache_size_of(const std::string& text, std::uint64_t file_size,
                            std::uint64_t line_size) {
    if (text.empty()) return std::max(2 * file_size, 16 * line_size);
    if (!text.ends_with('%')) return size_or_throw(text, "--cache-size");
    double percent = 0;
    const std::string number = text.substr(0, text.size() - 1);
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), percent);
    if (ec != std::errc() || end != number.data() + number.size() || !(percent > 0))
        throw std::invalid_argument(
            fmt::format("--cache-size '{}': expected bytes (256M) or a share such as 25%", text));
    const auto lines = static_cast<std::uint64_t>(
        std::llround(percent / 100 * double(file_size) / double(line_size)));
    return std::max<std::uint64_t>(lines, 16) * line_size;
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"Drive the two-tier engine on real files and compare with the queueing model "
                 "(docs/tier.md)."};
    std::string cache_dir, home_dir, node_file,
        working_set_text = "16M", io_size_text, line_size_text = "4K", cache_size_text,
        pattern = "random", policy = "ws", prefetch, mode = "both", trace_file, format_text,
        csv_columns_text, id_unit_text, io_run_text = "1M", sequential_cutoff_text = "0";
    std::uint64_t requests = 10000, seed = 42;
    unsigned prefetch_window = PrefetchConfig{}.max_depth;
    double write_ratio = 0;
    bool json = false;
    bool dirty_bytes_only = false;
    app.add_option("--cache-dir", cache_dir, "directory on the fast mount for the cache file")
        ->required();
    app.add_option("--home-dir", home_dir, "directory on the slow mount for the home file")
        ->required();
    app.add_option("--node", node_file,
                   "node YAML with both mounts (e.g. the lab's lab.yaml), for the model");
    auto* trace_option = app.add_option(
        "--trace", trace_file,
        "replay the first --requests requests of this trace (csv, oracleGeneral or txt) instead of "
        "a "
        "pattern, on a home file of the lines they touch; an object trace's objects are laid "
        "end to end in the order of their ids, unless --id-unit says the ids are addresses");
    app.add_option(
           "--format", format_text,
           "csv, oracleGeneral or txt (one object id per line; default: from the file name)")
        ->needs(trace_option);
    app.add_option("--csv-columns", csv_columns_text,
                   "csv layout without a header, e.g. offset=1,size=2 (as iosig-tiersim)")
        ->needs(trace_option);
    app.add_option("--id-unit", id_unit_text,
                   "the object ids of the trace are block addresses in units of this many bytes "
                   "(512: sectors, as in the shared cloudPhysics oracleGeneral file; 1: bytes)")
        ->needs(trace_option);
    app.add_option("--requests", requests,
                   "number of requests (default 10000; with --trace, 0 replays all of them)");
    const std::vector<CLI::Option*> pattern_options{
        app.add_option("--working-set", working_set_text, "bytes the requests touch (default 16M)"),
        app.add_option("--io-size", io_size_text, "bytes per request (default: the line size)"),
        app.add_option("--pattern", pattern, "random, zipf or sequential (default random)"),
        app.add_option("--write-ratio", write_ratio, "share of writes, 0..1 (default 0)"),
        app.add_option("--seed", seed, "seed of the access pattern (default 42)")};
    for (CLI::Option* option : pattern_options)
        option->excludes(trace_option);
    app.add_option("--line-size", line_size_text, "cache line size (default 4K)");
    app.add_option("--io-run", io_run_text,
                   "largest home IO for adjacent lines: a read's missing lines, a write-back "
                   "batch's dirty lines (default 1M; 0: one IO per line)");
    app.add_option("--sequential-cutoff", sequential_cutoff_text,
                   "a handle's sequential stream longer than this bypasses the cache, as bcache's "
                   "sequential_cutoff (the engine's default is 4M; default here 0: never, so that "
                   "the cache is measured; the model reads the bypass through the home device's "
                   "readahead, and writes its writes with the flusher's syncs of the home file)");
    app.add_option("--cache-size", cache_size_text,
                   "cache size, or a share of the home file such as 25% (default: twice it)");
    app.add_option("--policy", policy, "eviction policy (default ws)");
    tools::add_prefetch_options(app, prefetch, prefetch_window);
    app.add_option("--mode", mode,
                   "both, tier, direct, or model (the prediction alone; default both)");
    app.add_flag("--dirty-bytes-only", dirty_bytes_only,
                 "write back only the bytes the writes changed (TierConfig::dirty_bytes_only, for "
                 "files several processes write; default: whole lines)");
    app.add_flag("--json", json, "print JSON");
    // A bad option is bad input (2), as a bad trace is; --help still exits 0.
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        return app.exit(error) == 0 ? exit_ok : exit_bad_input;
    }

    try {
        const std::uint64_t line_size = size_or_throw(line_size_text, "--line-size");
        // First: the other sizes are checked in lines, and the model alone would predict a run
        // the engine cannot make.
        if (!engine_line_size(line_size))
            throw std::invalid_argument(
                fmt::format("--line-size {}: the engine's lines are a power of two from 4K to 1M",
                            line_size_text));
        if (mode != "both" && mode != "tier" && mode != "direct" && mode != "model")
            throw std::invalid_argument("--mode: both, tier, direct or model");
        nlohmann::json out;
        bench::Workload workload;
        if (!trace_file.empty()) {
            std::optional<std::uint64_t> id_unit;
            if (!id_unit_text.empty()) id_unit = size_or_throw(id_unit_text, "--id-unit");
            const Trace trace = bench::with_offsets(
                load_trace(trace_file, format_text, csv_columns_text, requests), id_unit);
            workload = bench::trace_workload(trace, line_size,
                                             requests == 0 ? trace.requests.size() : requests);
            out["pattern"] = "trace";
            out["trace"] = trace.source; // the file, and how an object trace got its offsets
        } else {
            const std::uint64_t io_size =
                io_size_text.empty() ? line_size : size_or_throw(io_size_text, "--io-size");
            const std::uint64_t working_set = size_or_throw(working_set_text, "--working-set");
            if (io_size == 0 || io_size % 4096 != 0 || working_set < io_size)
                throw std::invalid_argument(
                    "--io-size must be a multiple of 4K and at most the working set");
            if (write_ratio < 0 || write_ratio > 1)
                throw std::invalid_argument("--write-ratio must be within 0..1");
            if (requests == 0)
                throw std::invalid_argument("--requests must be at least 1 for a pattern");
            workload = bench::synthetic_workload(pattern, working_set, io_size, requests,
                                                 write_ratio, seed);
            out["pattern"] = pattern;
            out["io_size"] = io_size;
            out["write_ratio"] = write_ratio;
        }
        const std::uint64_t cache_size =
            cache_size_of(cache_size_text, workload.file_size, line_size);
        const std::filesystem::path home =
            std::filesystem::absolute(home_dir) / "iosig-tierbench.dat";
        TierConfig config;
        config.cache_file = std::filesystem::absolute(cache_dir) / "iosig-tierbench.cache";
        if (mode != "model") { // the model needs only the mounts' paths
            bench::require_room(home, workload.file_size, "the home file");
            if (mode != "direct")
                bench::require_room(config.cache_file, cache_size,
                                    fmt::format("--cache-size {}", iosig::format_size(cache_size)));
            bench::prepare_home(home, workload.file_size);
        }
        config.cache_size = cache_size;
        config.line_size = line_size;
        config.io_run_bytes = size_or_throw(io_run_text, "--io-run");
        config.policy = policy;
        config.prefetch = prefetch;
        config.prefetch_config.max_depth = prefetch_window;
        config.sequential_cutoff = size_or_throw(sequential_cutoff_text, "--sequential-cutoff");
        config.dirty_bytes_only = dirty_bytes_only;

        out["requests"] = workload.ops.size();
        out["reads"] = workload.reads;
        out["writes"] = workload.writes;
        out["working_set"] = workload.file_size;
        out["cache_size"] = cache_size;
        out["line_size"] = line_size;
        out["policy"] = policy;
        out["io_run"] = config.io_run_bytes;
        out["dirty_bytes_only"] = dirty_bytes_only;
        const auto model = bench::model_json(workload, config, home, node_file);
        if (!model) return exit_bad_input;
        out["model"] = *model;
        // The model starts each run on an idle home device. Behind a throttle with slices, a run
        // that follows another (or the home file's preparation) at once would find the slice
        // partly used: wait until a new one starts (slice_end is at most two slices ahead).
        const double slice = out["model"].contains("rates")
                                 ? out["model"]["rates"].value("tier2_throttle_slice", 0.0)
                                 : 0.0;
        const auto idle_home = [slice] {
            if (slice > 0) std::this_thread::sleep_for(std::chrono::duration<double>(3 * slice));
        };
        if (mode == "both" || mode == "direct") {
            idle_home();
            out["measured"]["direct_seconds"] = run_direct(home, workload.ops, workload.largest_op);
        }
        if (mode == "both" || mode == "tier") {
            idle_home();
            const TierRun run = run_tier(config, home, workload.ops, workload.largest_op);
            out["measured"]["tier_seconds"] = run.seconds;
            out["measured"]["stats"] = {
                {"read_hits", run.stats.read_hits},
                {"read_misses", run.stats.read_misses},
                {"write_hits", run.stats.write_hits},
                {"write_misses", run.stats.write_misses},
                {"fills", run.stats.fills},
                {"fill_reads", run.stats.fill_reads},
                {"writeback_writes", run.stats.writeback_writes},
                {"writebacks", run.stats.writebacks},
                {"prefetches_issued", run.stats.prefetches_issued},
                {"prefetch_reads", run.stats.prefetch_reads},
                {"prefetch_hits", run.stats.prefetch_hits},
                {"bypassed_bytes", run.stats.bypassed_bytes},
                {"cache_refusals", run.stats.cache_refusals},
                {"slots_out_of_use", run.stats.slots_out_of_use},
                {"home_syncs", run.stats.home_syncs},
                {"writer_wait_seconds", run.stats.writer_wait_seconds},
                {"journal_rewrites", run.stats.journal_rewrites},
                {"longest_journal_rewrite_seconds", run.stats.longest_journal_rewrite_seconds},
                {"numa_node", run.stats.numa_node},
                {"io_uring", run.stats.io_uring}};
        }
        if (mode == "both")
            out["measured"]["speedup"] = out["measured"]["direct_seconds"].get<double>() /
                                         out["measured"]["tier_seconds"].get<double>();
        if (out.contains("model") && out["model"].contains("tier_seconds") &&
            out.contains("measured") && out["measured"].contains("tier_seconds")) {
            const double m = out["measured"]["tier_seconds"], p = out["model"]["tier_seconds"];
            out["model_error"] = (p - m) / m;
        }
        if (json) {
            fmt::print("{}\n", out.dump(2));
        } else {
            fmt::print("{} {} requests ({} reads, {} writes) over {} (cache {}, lines {}, "
                       "policy {})\n",
                       trace_file.empty() ? pattern : out["trace"].get<std::string>(),
                       workload.ops.size(), workload.reads, workload.writes,
                       iosig::format_size(workload.file_size), iosig::format_size(cache_size),
                       iosig::format_size(line_size), policy);
            bench::print_report(out);
        }
        return exit_ok;
    } catch (const std::invalid_argument& e) {
        fmt::print(stderr, "iosig-tierbench: {}\n", e.what());
        return exit_bad_input;
    } catch (const TraceError& e) {
        fmt::print(stderr, "iosig-tierbench: {}\n", e.what());
        return exit_bad_input;
    } catch (const std::exception& e) {
        fmt::print(stderr, "iosig-tierbench: {}\n", e.what());
        return exit_failure;
    }
}
