// fwrite and fwrite_unlocked: the calls programs make most often with the fewest bytes (tens of
// nanoseconds each), so their counting is inline here instead of a call into stats.cpp, and the
// untracked path saves no registers: a lookup, a test, a jump to libc.
#include <cstdint>
#include <cstdio>

#include "real.h"
#include "shim.h"
#include "stats.hpp"

namespace {

using FwriteFunction = size_t (*)(const void*, size_t, size_t, FILE*);

[[gnu::noinline]] size_t tracked_fwrite(FwriteFunction real, iosig_file* file, const void* data,
                                        size_t size, size_t count, FILE* stream) {
    const std::uint64_t started = iosig_stdio_clock_sample();
    const size_t result = real(data, size, count, stream);
    iosig::shim::count_stdio_inline(file, static_cast<std::uint64_t>(result) * size, started);
    return result;
}

} // namespace

extern "C" {

IOSIG_EXPORT size_t fwrite(const void* data, size_t size, size_t count, FILE* stream) {
    const FwriteFunction real = IOSIG_REAL(fwrite);
    iosig_file* file = iosig_tracked_stream(stream);
    if (IOSIG_LIKELY(file == nullptr)) return real(data, size, count, stream);
    return tracked_fwrite(real, file, data, size, count, stream);
}

IOSIG_EXPORT size_t fwrite_unlocked(const void* data, size_t size, size_t count, FILE* stream) {
    const FwriteFunction real = IOSIG_REAL(fwrite_unlocked);
    iosig_file* file = iosig_tracked_stream(stream);
    if (IOSIG_LIKELY(file == nullptr)) return real(data, size, count, stream);
    return tracked_fwrite(real, file, data, size, count, stream);
}

} // extern "C"
