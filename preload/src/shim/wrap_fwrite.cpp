// fwrite and fwrite_unlocked: the calls programs make most often with the fewest bytes (tens of
// nanoseconds each), so their counting is inline here instead of a call into stats.cpp, and the
// untracked path saves no registers: a lookup, a test, a jump to libc.
#include "real.h"
#include "shim.h"
#include "stats.hpp"

#include <cstdint>
#include <cstdio>

namespace {

using FwriteFunction = size_t (*)(const void*, size_t, size_t, FILE*);

// Timed calls (one in 1024 per thread, see iosig_stdio_clock_sample) and calls that cannot be
// counted inline.
[[gnu::noinline]] size_t counted_fwrite(const void* data, size_t size, size_t count, FILE* stream,
                                        iosig_file* file, FwriteFunction real, bool timed) {
    const std::uint64_t started = timed ? iosig_clock_now() : 0;
    const size_t result = real(data, size, count, stream);
    iosig_count_stdio(file, static_cast<std::uint64_t>(result) * size, started);
    return result;
}

// Every decision is taken before the real call, so only `file` and `size` live across it: the
// common case saves two registers instead of six. The parameters start with fwrite's own, in its
// registers.
[[gnu::noinline]] size_t tracked_fwrite(const void* data, size_t size, size_t count, FILE* stream,
                                        iosig_file* file, FwriteFunction real) {
    const bool timed = (iosig_thread.stdio_tick++ & 1023u) == 0;
    if (IOSIG_UNLIKELY(timed || !iosig::shim::stdio_counts_inline(file)))
        return counted_fwrite(data, size, count, stream, file, real, timed);
    const size_t result = real(data, size, count, stream);
    iosig::shim::count_stdio_inline(file, static_cast<std::uint64_t>(result) * size);
    return result;
}

} // namespace

extern "C" {

IOSIG_EXPORT size_t fwrite(const void* data, size_t size, size_t count, FILE* stream) {
    const FwriteFunction real = IOSIG_REAL(fwrite);
    iosig_file* file = iosig_tracked_stream(stream);
    if (IOSIG_LIKELY(file == nullptr)) return real(data, size, count, stream);
    return tracked_fwrite(data, size, count, stream, file, real);
}

IOSIG_EXPORT size_t fwrite_unlocked(const void* data, size_t size, size_t count, FILE* stream) {
    const FwriteFunction real = IOSIG_REAL(fwrite_unlocked);
    iosig_file* file = iosig_tracked_stream(stream);
    if (IOSIG_LIKELY(file == nullptr)) return real(data, size, count, stream);
    return tracked_fwrite(data, size, count, stream, file, real);
}

} // extern "C"
