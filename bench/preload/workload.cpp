// The program bench_preload_overhead runs with and without LD_PRELOAD=libiosig.so. It times only
// its loop (CLOCK_MONOTONIC) and prints "<nanoseconds per operation>\n", so process start-up, the
// shim's constructor and its report at exit do not blur the per-call cost.
//
//   workload fwrite64 FILE N   N fwrite(64 B) to a stream on FILE (rewound every 16 MiB)
//   workload pwrite4k FILE N   N pwrite(4 KiB) to FILE, offsets cycling over 64 MiB
//   workload create DIR N      N x (open(DIR/fI, O_CREAT|O_EXCL|O_WRONLY) + close)
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <time.h>
#include <unistd.h>

namespace {

double now_ns() {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

int fail(const char* what, const char* path) {
    std::fprintf(stderr, "workload: %s %s: %s\n", what, path, std::strerror(errno));
    return 1;
}

int fwrite64(const char* path, long count) {
    FILE* f = std::fopen(path, "w");
    if (f == nullptr) return fail("fopen", path);
    char record[64];
    std::memset(record, 'x', sizeof record);
    constexpr long per_rewind = (16L << 20) / 64;
    const double start = now_ns();
    for (long i = 0; i < count; ++i) {
        if (std::fwrite(record, sizeof record, 1, f) != 1) return fail("fwrite", path);
        if ((i + 1) % per_rewind == 0) std::rewind(f);
    }
    if (std::fflush(f) != 0) return fail("fflush", path);
    const double elapsed = now_ns() - start;
    std::fclose(f);
    std::printf("%.3f\n", elapsed / static_cast<double>(count));
    return 0;
}

int pwrite4k(const char* path, long count) {
    const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return fail("open", path);
    alignas(4096) static char block[4096];
    std::memset(block, 'y', sizeof block);
    constexpr long blocks = (64L << 20) / 4096;
    const double start = now_ns();
    for (long i = 0; i < count; ++i)
        if (pwrite(fd, block, sizeof block, (i % blocks) * 4096) != 4096)
            return fail("pwrite", path);
    const double elapsed = now_ns() - start;
    close(fd);
    std::printf("%.3f\n", elapsed / static_cast<double>(count));
    return 0;
}

int create(const char* directory, long count) {
    std::string path;
    const double start = now_ns();
    for (long i = 0; i < count; ++i) {
        path = std::string(directory) + "/f" + std::to_string(i);
        const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0) return fail("open", path.c_str());
        close(fd);
    }
    const double elapsed = now_ns() - start;
    std::printf("%.3f\n", count == 0 ? 0.0 : elapsed / static_cast<double>(count));
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: workload fwrite64|pwrite4k|create PATH COUNT\n");
        return 2;
    }
    const std::string mode = argv[1];
    const long count = std::strtol(argv[3], nullptr, 10);
    if (mode == "fwrite64") return fwrite64(argv[2], count);
    if (mode == "pwrite4k") return pwrite4k(argv[2], count);
    if (mode == "create") return create(argv[2], count);
    std::fprintf(stderr, "workload: unknown mode %s\n", mode.c_str());
    return 2;
}
