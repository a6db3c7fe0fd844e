#include "real_run.hpp"

#include "iosig/cachesim/kernel_state.hpp"
#include "warm_pool.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <fmt/format.h>
#include <memory>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace iosig::cachesim::validate {

double monotonic_now() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

namespace {

// "Computation" between writes, as in the paper (it hashed random data): keeps the CPU busy.
std::uint64_t compute_until(double deadline, std::uint64_t seed) {
    std::uint64_t x = seed | 1;
    while (monotonic_now() < deadline)
        for (int i = 0; i < 256; ++i) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
    return x;
}

struct Shared {
    double t0;
    int status; // 0 ok, else errno of the failing call
    int failed_write;
    std::uint64_t sink; // the computation's result, so that it is not optimised away
    double times[];     // start, end per write
};

// As much warm memory as the run's writes can put into the page cache (none for direct IO), capped
// at 2 GiB.
std::uint64_t warm_pool_bytes(Method method, const std::vector<WriteRequest>& workload) {
    if (method == Method::direct) return 0;
    std::uint64_t sum = 0;
    for (const WriteRequest& w : workload)
        sum += w.size;
    return std::min<std::uint64_t>(sum, 2ull << 30);
}

int child_main(Shared* shared, const std::filesystem::path& file, Method method,
               const std::vector<WriteRequest>& workload, const unsigned char* data, bool truncate,
               bool warm_memory) {
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (truncate ? O_TRUNC : 0);
    if (method == Method::direct) flags |= O_DIRECT | O_SYNC;
    if (method == Method::sync) flags |= O_SYNC;
    int fd = -1;
    std::FILE* stream = nullptr;
    if (method == Method::stdio)
        stream = std::fopen(file.c_str(), truncate ? "w" : "r+");
    else
        fd = ::open(file.c_str(), flags, 0644);
    if (fd < 0 && !stream) return errno;

    WarmPool pool(warm_memory ? warm_pool_bytes(method, workload) : 0);
    std::uint64_t sink = 0;
    std::uint64_t position = 0;
    shared->t0 = monotonic_now();
    double clock = shared->t0;
    for (std::size_t i = 0; i < workload.size(); ++i) {
        const WriteRequest& w = workload[i];
        // Inside the gap before the write (the compute delay absorbs it), never inside the write.
        pool.release_for(w.size);
        if (w.delay > 0) sink += compute_until(clock + w.delay, i);
        const double start = monotonic_now();
        bool ok = true;
        if (stream) {
            if (w.offset != position)
                ok = std::fseek(stream, static_cast<long>(w.offset), SEEK_SET) == 0;
            ok = ok && std::fwrite(data, 1, w.size, stream) == w.size;
        } else {
            ok = ::pwrite(fd, data, w.size, static_cast<off_t>(w.offset)) ==
                 static_cast<ssize_t>(w.size);
        }
        const double end = monotonic_now();
        if (!ok) {
            shared->failed_write = static_cast<int>(i);
            return errno ? errno : EIO;
        }
        position = w.offset + w.size;
        shared->times[2 * i] = start - shared->t0;
        shared->times[2 * i + 1] = end - shared->t0;
        clock = end;
    }
    if (stream)
        std::fclose(stream);
    else
        ::close(fd);
    shared->sink = sink;
    return 0;
}

} // namespace

void wait_for_clean(double bytes, double timeout) {
    const double deadline = monotonic_now() + timeout;
    while (monotonic_now() < deadline) {
        const auto state = read_procfs_state();
        if (!state || state->dirty_and_writeback() <= bytes) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

RunTimings run_workload(const std::filesystem::path& file, Method method,
                        const std::vector<WriteRequest>& workload, const RunOptions& options) {
    RunTimings result;
    std::uint64_t largest = 4096;
    for (const WriteRequest& w : workload)
        largest = std::max(largest, w.size);
    const std::size_t buffer_size = (largest + 4095) / 4096 * 4096;
    std::unique_ptr<unsigned char, decltype(&std::free)> data(
        static_cast<unsigned char*>(std::aligned_alloc(4096, buffer_size)), &std::free);
    if (!data) {
        result.error = "out of memory for the write buffer";
        return result;
    }
    std::uint64_t x = 0x9e3779b97f4a7c15ull;
    for (std::size_t i = 0; i < buffer_size; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        data.get()[i] = static_cast<unsigned char>(x);
    }
    const std::size_t shared_size = sizeof(Shared) + 2 * workload.size() * sizeof(double);
    void* memory =
        ::mmap(nullptr, shared_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) {
        result.error = fmt::format("mmap: {}", std::strerror(errno));
        return result;
    }
    auto* shared = static_cast<Shared*>(memory);
    std::memset(memory, 0, shared_size);
    shared->failed_write = -1;

    const pid_t pid = ::fork();
    if (pid < 0) {
        result.error = fmt::format("fork: {}", std::strerror(errno));
        ::munmap(memory, shared_size);
        return result;
    }
    if (pid == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL); // the writer does not outlive an interrupted harness
        // The machine is shared: a high CPU priority keeps other users' compilers from deciding the
        // timings (the flusher and the rest of the kernel are unaffected).
        if (options.priority != 0) ::setpriority(PRIO_PROCESS, 0, options.priority);
        shared->status = child_main(shared, file, method, workload, data.get(), options.truncate,
                                    options.prewarm_memory);
        ::_exit(0);
    }
    result.pid = pid;
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status))
        result.error = "the writer process died";
    else if (shared->status != 0)
        result.error =
            shared->failed_write >= 0
                ? fmt::format("write {} failed: {}", shared->failed_write,
                              std::strerror(shared->status))
                : fmt::format("opening {}: {}", file.string(), std::strerror(shared->status));
    if (result.ok()) {
        result.t0 = shared->t0;
        result.start.resize(workload.size());
        result.end.resize(workload.size());
        for (std::size_t i = 0; i < workload.size(); ++i) {
            result.start[i] = shared->times[2 * i];
            result.end[i] = shared->times[2 * i + 1];
        }
    }
    ::munmap(memory, shared_size);
    if (options.sync_after) {
        const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            ::fsync(fd);
            ::close(fd);
        }
    }
    if (!options.keep_file) std::filesystem::remove(file);
    return result;
}

} // namespace iosig::cachesim::validate
