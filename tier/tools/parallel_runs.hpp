// Independent runs of a command-line tool spread over threads: iosig-tiersim's simulations (one per
// policy and cache size) share nothing but the trace they read.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <sched.h>
#include <thread>
#include <vector>

namespace iosig::tier::tools {

// The default number of jobs: the CPUs this process may run on (its affinity mask, which taskset
// and cpusets narrow), else every CPU the machine has.
inline unsigned default_jobs() {
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0 && CPU_COUNT(&allowed) > 0)
        return static_cast<unsigned>(CPU_COUNT(&allowed));
    return std::max(1u, std::thread::hardware_concurrency());
}

// Calls run(i) for every i in [0, count) on up to `jobs` threads (this one included), each index
// once; `run` writes its result to a place of its own. The first exception any call throws is
// rethrown here once all threads have stopped; the calls not yet started are skipped.
template <class Run>
void run_parallel(std::size_t count, unsigned jobs, const Run& run) {
    if (count == 0) return;
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr error;
    std::mutex error_mutex;
    const auto worker = [&] {
        for (std::size_t i = next++; i < count && !failed; i = next++) {
            try {
                run(i);
            } catch (...) {
                const std::lock_guard lock(error_mutex);
                if (!error) error = std::current_exception();
                failed = true;
            }
        }
    };
    std::vector<std::thread> threads;
    const std::size_t extra = std::min<std::size_t>(std::max(1u, jobs), count) - 1;
    for (std::size_t t = 0; t < extra; ++t)
        threads.emplace_back(worker);
    worker();
    for (std::thread& thread : threads)
        thread.join();
    if (error) std::rethrow_exception(error);
}

} // namespace iosig::tier::tools
