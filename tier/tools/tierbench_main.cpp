// iosig-tierbench: drive the engine on real files (a home file on a slow mount, the cache on a fast
// one) with a chosen access pattern, and report the measured time next to the queueing model's
// prediction (docs/tier.md, "Measuring on real devices"). Run it inside `tests/lab/lab exec` so
// that the lab's throttled hdd is slow for it.
#include "iosig/node_yaml.hpp"
#include "iosig/tier/engine.hpp"
#include "iosig/tier/queueing.hpp"
#include "iosig/tier/simulator.hpp"
#include "iosig/tier/tier_prediction.hpp"
#include "iosig/units.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <random>
#include <unistd.h>

namespace {

using namespace iosig::tier;
using Clock = std::chrono::steady_clock;

constexpr int exit_ok = 0, exit_failure = 1, exit_bad_input = 2;

struct Op {
    off_t offset;
    bool write;
};

std::uint64_t size_or_throw(const std::string& text, const char* what) {
    const auto parsed = iosig::parse_size(text);
    if (!parsed)
        throw std::invalid_argument(fmt::format("{} '{}': {}", what, text, parsed.error.message));
    return *parsed.value;
}

std::vector<Op> make_ops(const std::string& pattern, std::uint64_t working_set,
                         std::uint64_t io_size, std::uint64_t count, double write_ratio,
                         std::uint64_t seed) {
    const std::uint64_t slots = working_set / io_size;
    std::mt19937_64 rng(seed);
    std::vector<double> zipf_cdf;
    if (pattern == "zipf") {
        double sum = 0;
        for (std::uint64_t i = 0; i < slots; ++i)
            zipf_cdf.push_back(sum += 1.0 / std::pow(double(i + 1), 0.9));
        for (double& c : zipf_cdf)
            c /= sum;
    } else if (pattern != "random" && pattern != "sequential") {
        throw std::invalid_argument(
            fmt::format("--pattern '{}': expected random, zipf or sequential", pattern));
    }
    std::vector<Op> ops;
    for (std::uint64_t i = 0; i < count; ++i) {
        std::uint64_t slot;
        const double u = double(rng() >> 11) * 0x1.0p-53;
        if (pattern == "sequential")
            slot = i % slots;
        else if (pattern == "zipf")
            slot = std::min<std::uint64_t>(std::lower_bound(zipf_cdf.begin(), zipf_cdf.end(), u) -
                                               zipf_cdf.begin(),
                                           slots - 1);
        else
            slot = rng() % slots;
        const bool write = double(rng() >> 11) * 0x1.0p-53 < write_ratio;
        ops.push_back(Op{static_cast<off_t>(slot * io_size), write});
    }
    return ops;
}

// The home file: `size` bytes of pseudo-random data, written buffered and synced (fast even on the
// throttled disk, whose limit applies to direct and synchronous IO of the cgroup's processes).
void prepare_home(const std::filesystem::path& path, std::uint64_t size) {
    std::error_code ec;
    if (std::filesystem::exists(path, ec) && std::filesystem::file_size(path, ec) == size) return;
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        throw std::runtime_error(fmt::format("{}: {}", path.string(), std::strerror(errno)));
    std::vector<char> block(1 << 20);
    std::mt19937_64 rng(1);
    for (std::uint64_t done = 0; done < size;) {
        for (auto& c : block)
            c = static_cast<char>(rng());
        const std::size_t n =
            static_cast<std::size_t>(std::min<std::uint64_t>(block.size(), size - done));
        if (::write(fd, block.data(), n) != static_cast<ssize_t>(n))
            throw std::runtime_error(fmt::format("{}: write failed", path.string()));
        done += n;
    }
    ::fsync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
}

double run_direct(const std::filesystem::path& home, const std::vector<Op>& ops,
                  std::uint64_t io_size) {
    const int fd = ::open(home.c_str(), O_RDWR | O_DIRECT | O_CLOEXEC);
    if (fd < 0)
        throw std::runtime_error(
            fmt::format("{}: O_DIRECT open: {}", home.string(), std::strerror(errno)));
    void* buffer = std::aligned_alloc(4096, (io_size + 4095) / 4096 * 4096);
    std::memset(buffer, 7, io_size);
    const auto start = Clock::now();
    bool wrote = false;
    for (const Op& op : ops) {
        const ssize_t n = op.write ? ::pwrite(fd, buffer, io_size, op.offset)
                                   : ::pread(fd, buffer, io_size, op.offset);
        if (n != static_cast<ssize_t>(io_size))
            throw std::runtime_error(
                fmt::format("{}: direct IO failed: {}", home.string(), std::strerror(errno)));
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
                 const std::vector<Op>& ops, std::uint64_t io_size) {
    std::error_code ec;
    std::filesystem::remove(config.cache_file, ec);
    auto tier = TierCache::open(config);
    std::vector<char> buffer(io_size, 7);
    TierRun run;
    const auto start = Clock::now();
    const int h = tier->open_file(home, O_RDWR);
    if (h < 0) throw std::runtime_error(fmt::format("{}: {}", home.string(), std::strerror(-h)));
    for (const Op& op : ops) {
        const ssize_t n = op.write ? tier->pwrite(h, buffer.data(), io_size, op.offset)
                                   : tier->pread(h, buffer.data(), io_size, op.offset);
        if (n != static_cast<ssize_t>(io_size))
            throw std::runtime_error(fmt::format(
                "tier IO failed: {}", n < 0 ? std::strerror(static_cast<int>(-n)) : "short"));
    }
    if (const int e = tier->close(h); e < 0)
        throw std::runtime_error(fmt::format("close: {}", std::strerror(-e)));
    run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    run.stats = tier->stats();
    return run;
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"Drive the two-tier engine on real files and compare with the queueing model "
                 "(docs/tier.md)."};
    std::string cache_dir, home_dir, node_file,
        working_set_text = "16M", io_size_text, line_size_text = "4K", cache_size_text,
        pattern = "random", policy = "ws", prefetch, mode = "both";
    std::uint64_t requests = 10000, seed = 42;
    double write_ratio = 0;
    bool json = false;
    app.add_option("--cache-dir", cache_dir, "directory on the fast mount for the cache file")
        ->required();
    app.add_option("--home-dir", home_dir, "directory on the slow mount for the home file")
        ->required();
    app.add_option("--node", node_file,
                   "node YAML with both mounts (e.g. the lab's lab.yaml), for the model");
    app.add_option("--working-set", working_set_text, "bytes the requests touch (default 16M)");
    app.add_option("--requests", requests, "number of requests (default 10000)");
    app.add_option("--io-size", io_size_text, "bytes per request (default: the line size)");
    app.add_option("--pattern", pattern, "random, zipf or sequential (default random)");
    app.add_option("--write-ratio", write_ratio, "share of writes, 0..1 (default 0)");
    app.add_option("--line-size", line_size_text, "cache line size (default 4K)");
    app.add_option("--cache-size", cache_size_text, "cache size (default: twice the working set)");
    app.add_option("--policy", policy, "eviction policy (default ws)");
    app.add_option("--prefetch", prefetch, "stream or markov");
    app.add_option("--mode", mode, "both, tier or direct (default both)");
    app.add_option("--seed", seed, "seed of the access pattern (default 42)");
    app.add_flag("--json", json, "print JSON");
    // A bad option is bad input (2), as a bad trace is; --help still exits 0.
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        return app.exit(error) == 0 ? exit_ok : exit_bad_input;
    }

    try {
        const std::uint64_t line_size = size_or_throw(line_size_text, "--line-size");
        const std::uint64_t io_size =
            io_size_text.empty() ? line_size : size_or_throw(io_size_text, "--io-size");
        const std::uint64_t working_set = size_or_throw(working_set_text, "--working-set");
        const std::uint64_t cache_size = cache_size_text.empty()
                                             ? std::max(2 * working_set, 16 * line_size)
                                             : size_or_throw(cache_size_text, "--cache-size");
        if (io_size == 0 || io_size % 4096 != 0 || working_set < io_size)
            throw std::invalid_argument(
                "--io-size must be a multiple of 4K and at most the working set");
        if (write_ratio < 0 || write_ratio > 1)
            throw std::invalid_argument("--write-ratio must be within 0..1");
        if (mode != "both" && mode != "tier" && mode != "direct")
            throw std::invalid_argument("--mode: both, tier or direct");
        const auto ops = make_ops(pattern, working_set, io_size, requests, write_ratio, seed);
        const std::filesystem::path home =
            std::filesystem::absolute(home_dir) / "iosig-tierbench.dat";
        prepare_home(home, working_set);

        TierConfig config;
        config.cache_file = std::filesystem::absolute(cache_dir) / "iosig-tierbench.cache";
        config.cache_size = cache_size;
        config.line_size = line_size;
        config.policy = policy;
        config.prefetch = prefetch;
        config.sequential_cutoff = 0;

        nlohmann::json out{{"pattern", pattern},       {"requests", requests},
                           {"io_size", io_size},       {"working_set", working_set},
                           {"cache_size", cache_size}, {"line_size", line_size},
                           {"policy", policy},         {"write_ratio", write_ratio}};
        std::uint64_t reads = 0, writes = 0;
        for (const Op& op : ops)
            ++(op.write ? writes : reads);

        // The model: misses from the simulator on the same requests, rates from the node YAML.
        Trace trace;
        trace.kind = TraceKind::blocks;
        trace.source = "iosig-tierbench";
        for (const Op& op : ops)
            trace.requests.push_back(Request{static_cast<std::uint64_t>(op.offset),
                                             static_cast<std::uint32_t>(io_size), op.write});
        SimConfig sim;
        sim.policy = policy;
        sim.cache_size = cache_size;
        sim.line_size = line_size;
        sim.prefetch = prefetch;
        const SimResult predicted = simulate(trace, sim);
        // Tier 2 reads: demand fills, and every line the prefetcher fetched (used or not).
        const std::uint64_t fills =
            predicted.read_misses + (io_size % line_size != 0 ? predicted.write_misses : 0);
        out["model"] = {{"misses", predicted.misses},
                        {"fills", fills},
                        {"prefetches", predicted.prefetches_issued}};
        if (!node_file.empty()) {
            const auto loaded = iosig::load_node_files({node_file});
            if (!loaded.ok()) {
                for (const auto& d : loaded.diagnostics)
                    fmt::print(stderr, "iosig-tierbench: {}\n", d.format());
                return exit_bad_input;
            }
            const bool random = pattern != "sequential";
            const TierRates rates = tier_rates(*loaded.node, config.cache_file.parent_path(),
                                               home.parent_path(), line_size, random);
            WritebackModelConfig writeback;
            writeback.line_size = line_size;
            writeback.max_dirty_lines =
                config.max_dirty_lines ? config.max_dirty_lines
                                       : std::max<std::uint64_t>(1, cache_size / line_size / 4);
            writeback.writeback_delay = config.writeback_delay;
            writeback.queue_depth = config.queue_depth;
            const TierPrediction p =
                predict_tier_time(trace, fills + predicted.prefetches_issued, rates, writeback);
            const iosig::Mount* slow = mount_holding(*loaded.node, home.parent_path());
            const iosig::Device* slow_device = loaded.node->find_device(slow->device);
            const double direct =
                double(reads) / service_rate(*slow_device, io_size, true, random) +
                double(writes) / service_rate(*slow_device, io_size, false, random);
            out["model"]["writebacks"] = p.writeback.writebacks;
            out["model"]["home_syncs"] = p.writeback.syncs;
            out["model"]["writer_wait_seconds"] = p.writeback.writer_wait;
            out["model"]["flusher_seconds"] = p.writeback.seconds;
            out["model"]["writeback_share"] = p.writeback_share;
            out["model"]["rates"] = {
                {"tier1_read", rates.tier1_read},
                {"tier1_write", rates.tier1_write},
                {"tier2_read", rates.tier2_read},
                {"tier2_write", rates.tier2_write},
                {"tier2_independent_read_write", rates.tier2_independent_read_write}};
            // The later of Eqs. 1-4 and the flusher's replay (tier_prediction.hpp).
            out["model"]["queueing_seconds"] = p.queueing.seconds;
            out["model"]["tier_seconds"] = p.seconds;
            out["model"]["hit_seconds"] = p.queueing.hit[0];
            out["model"]["miss_seconds"] = p.queueing.miss[0];
            out["model"]["direct_seconds"] = direct;
        }
        if (mode != "tier") out["measured"]["direct_seconds"] = run_direct(home, ops, io_size);
        if (mode != "direct") {
            const TierRun run = run_tier(config, home, ops, io_size);
            out["measured"]["tier_seconds"] = run.seconds;
            out["measured"]["stats"] = {{"read_hits", run.stats.read_hits},
                                        {"read_misses", run.stats.read_misses},
                                        {"write_hits", run.stats.write_hits},
                                        {"write_misses", run.stats.write_misses},
                                        {"fills", run.stats.fills},
                                        {"writebacks", run.stats.writebacks},
                                        {"prefetch_hits", run.stats.prefetch_hits},
                                        {"numa_node", run.stats.numa_node},
                                        {"io_uring", run.stats.io_uring}};
        }
        if (mode == "both")
            out["measured"]["speedup"] = out["measured"]["direct_seconds"].get<double>() /
                                         out["measured"]["tier_seconds"].get<double>();
        if (out.contains("model") && out["model"].contains("tier_seconds") && mode != "direct") {
            const double m = out["measured"]["tier_seconds"], p = out["model"]["tier_seconds"];
            out["model_error"] = (p - m) / m;
        }
        if (json) {
            fmt::print("{}\n", out.dump(2));
        } else {
            fmt::print("{} {} requests of {} over {} (cache {}, lines {}, policy {})\n", pattern,
                       requests, iosig::format_size(io_size), iosig::format_size(working_set),
                       iosig::format_size(cache_size), iosig::format_size(line_size), policy);
            if (out["measured"].contains("direct_seconds"))
                fmt::print("  direct on the home mount: {:.3f} s\n",
                           out["measured"]["direct_seconds"].get<double>());
            if (out["measured"].contains("tier_seconds"))
                fmt::print("  through the tier:         {:.3f} s\n",
                           out["measured"]["tier_seconds"].get<double>());
            if (out["measured"].contains("speedup"))
                fmt::print("  speedup:                  {:.1f}x\n",
                           out["measured"]["speedup"].get<double>());
            if (out["model"].contains("tier_seconds"))
                fmt::print("  model (Eqs. 1-4):         {:.3f} s (hits {:.3f} s, misses {:.3f} s), "
                           "direct {:.3f} s\n",
                           out["model"]["tier_seconds"].get<double>(),
                           out["model"]["hit_seconds"].get<double>(),
                           out["model"]["miss_seconds"].get<double>(),
                           out["model"]["direct_seconds"].get<double>());
            if (out.contains("model_error"))
                fmt::print("  model error:              {:+.1f} %\n",
                           100 * out["model_error"].get<double>());
        }
        return exit_ok;
    } catch (const std::invalid_argument& e) {
        fmt::print(stderr, "iosig-tierbench: {}\n", e.what());
        return exit_bad_input;
    } catch (const std::exception& e) {
        fmt::print(stderr, "iosig-tierbench: {}\n", e.what());
        return exit_failure;
    }
}
