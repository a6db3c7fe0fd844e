// Comparing files as the kernel reference does (kernel_reference.hpp): their bytes, their sizes,
// and a call's result as the engine gives it.
#pragma once

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace iosig::tier::test_support {

// Whether two files hold the same bytes, without reading the holes both have (a file written at
// 1 GiB is sparse): -1 if they do, else the first offset where they differ (their sizes differing:
// the smaller size).
inline long long first_difference(const std::filesystem::path& a, const std::filesystem::path& b) {
    const int fa = ::open(a.c_str(), O_RDONLY | O_CLOEXEC),
              fb = ::open(b.c_str(), O_RDONLY | O_CLOEXEC);
    long long difference = -1;
    struct stat sa{}, sb{};
    if (fa < 0 || fb < 0 || ::fstat(fa, &sa) != 0 || ::fstat(fb, &sb) != 0) {
        difference = 0;
    } else if (sa.st_size != sb.st_size) {
        difference = std::min(sa.st_size, sb.st_size);
    } else {
        constexpr off_t chunk = 64 << 10;
        std::vector<char> in_a(chunk), in_b(chunk);
        for (off_t at = 0; at < sa.st_size && difference < 0; at += chunk) {
            // Jump to the next chunk where either file has data.
            const off_t data_a = ::lseek(fa, at, SEEK_DATA), data_b = ::lseek(fb, at, SEEK_DATA);
            const off_t next =
                std::min(data_a < 0 ? sa.st_size : data_a, data_b < 0 ? sb.st_size : data_b);
            if (next >= sa.st_size) break;
            at = next / chunk * chunk;
            const ssize_t ra = ::pread(fa, in_a.data(), chunk, at),
                          rb = ::pread(fb, in_b.data(), chunk, at);
            if (ra != rb || ra < 0) {
                difference = at;
            } else {
                for (ssize_t i = 0; i < ra; ++i)
                    if (in_a[i] != in_b[i]) {
                        difference = at + i;
                        break;
                    }
            }
        }
    }
    if (fa >= 0) ::close(fa);
    if (fb >= 0) ::close(fb);
    return difference;
}

// What one call gave: a count, or -errno.
inline long long kernel_result(long long r) {
    return r < 0 ? -errno : r;
}

// A file's size through links, or -1.
inline long long size_at(const std::filesystem::path& p) {
    struct stat st{};
    return ::stat(p.c_str(), &st) == 0 ? st.st_size : -1;
}

} // namespace iosig::tier::test_support
