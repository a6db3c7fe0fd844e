// How many writes per second the CAWL estimator simulates (target: at least one million), for the
// workloads that stress its different parts: sequential appends through all three cache states,
// rewrites that split blocks, random 4 KiB writes that keep many blocks alive, and stdio.
#define CATCH_CONFIG_MAIN
#include "iosig/cachesim/estimator.hpp"

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>

using namespace iosig::cachesim;

namespace {

constexpr double MiB = 1024.0 * 1024.0;

ModelParameters node_like_this_vm() {
    ModelParameters p;
    p.write_syscall_base = 3e-6;
    p.page_cache_write_bw = 3e9;
    p.page_cache_write_bw_flushing = 2e9;
    p.writeback_bw = 1e9;
    p.device_write_bw = 1e9;
    p.memory_bw = 4e10;
    p.thresholds = {32 * MiB, 64 * MiB, 64 * MiB};
    return p;
}

std::vector<WriteRequest> random_4k(std::size_t n, std::uint64_t span) {
    std::mt19937_64 rng(42);
    std::vector<WriteRequest> w(n);
    for (auto& r : w)
        r = {(rng() % (span / 4096)) * 4096, 4096, 0, 0};
    return w;
}

double thread_cpu_seconds() {
    timespec t{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Writes per second of this thread's CPU time (what the estimator costs, whatever else shares the
// cores) and of wall-clock time (what a caller waits, which on a shared machine includes the time
// other processes hold the CPU).
struct Rates {
    double cpu, wall;
};

Rates writes_per_second(const ModelParameters& p, Method m, const std::vector<WriteRequest>& w) {
    const double cpu_start = thread_cpu_seconds();
    const auto start = std::chrono::steady_clock::now();
    const Prediction r = predict(p, m, w);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double cpu = thread_cpu_seconds() - cpu_start;
    REQUIRE(r.writes.size() == w.size());
    const double n = static_cast<double>(w.size());
    return {n / cpu, n / wall};
}

} // namespace

TEST_CASE("the estimator simulates at least a million writes per second") {
    const ModelParameters p = node_like_this_vm();
    const std::size_t n = 2'000'000;
    struct Case {
        const char* name;
        Method method;
        std::vector<WriteRequest> workload;
    };
    const Case cases[] = {
        {"buffered sequential 64 KiB (all three states)", Method::buffered,
         sequential_workload(n * 65536, 65536, 0)},
        {"buffered rewrite 64 KiB, half of each chunk (splits)", Method::buffered,
         rewrite_workload(n * 32768, 65536, 0.5, 0)},
        {"buffered random 4 KiB over 1 GiB", Method::buffered, random_4k(n, 1ull << 30)},
        {"stdio sequential 1000 B", Method::stdio, sequential_workload(n * 1000, 1000, 0)},
        {"direct sequential 4 KiB", Method::direct, sequential_workload(n * 4096, 4096, 0)},
    };
    for (const Case& c : cases) {
        const Rates rate = writes_per_second(p, c.method, c.workload);
        std::printf("%-55s %6.2f M writes/s of CPU time, %6.2f M writes/s wall-clock\n", c.name,
                    rate.cpu / 1e6, rate.wall / 1e6);
        CHECK(rate.cpu >= 1e6);
    }
}

TEST_CASE("estimator benchmarks", "[!benchmark]") {
    const ModelParameters p = node_like_this_vm();
    const auto sequential = sequential_workload(100'000ull * 65536, 65536, 0);
    const auto random = random_4k(100'000, 1ull << 30);
    BENCHMARK("100k buffered sequential writes") {
        return predict(p, Method::buffered, sequential).total_cost;
    };
    BENCHMARK("100k buffered random 4 KiB writes") {
        return predict(p, Method::buffered, random).total_cost;
    };
}
