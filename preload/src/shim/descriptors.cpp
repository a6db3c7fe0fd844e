// Descriptor bookkeeping for tracked files: close, dup, fsync. A file's close time and size are
// taken when its last descriptor goes.
#include "../common/paths.hpp"
#include "io_util.hpp"
#include "real.h"
#include "shim.h"
#include "stats.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace iosig::shim {
namespace {

void add_counter(std::atomic<std::uint64_t>& counter, std::uint64_t value) {
    counter.fetch_add(value, std::memory_order_relaxed);
}

void last_descriptor_gone(iosig_file& file, int still_open_fd) {
    if (still_open_fd >= 0) {
        const int saved_errno = errno;
        struct stat st{};
        if (fstat(still_open_fd, &st) == 0 && S_ISREG(st.st_mode)) {
            const auto size = static_cast<std::uint64_t>(st.st_size);
            if (size > file.final_size.load(std::memory_order_relaxed))
                file.final_size.store(size, std::memory_order_relaxed);
        }
        errno = saved_errno;
    }
    file.close_ns.store(realtime_ns(), std::memory_order_relaxed);
}

void release(int fd, bool still_open) {
    iosig_file* file = __atomic_exchange_n(&iosig_slots[fd], nullptr, __ATOMIC_ACQ_REL);
    if (file != nullptr && file->open_descriptors.fetch_sub(1, std::memory_order_acq_rel) == 1)
        last_descriptor_gone(*file, still_open ? fd : -1);
}

} // namespace
} // namespace iosig::shim

using namespace iosig::shim;

extern "C" {

IOSIG_HIDDEN void iosig_fd_closing(int fd) {
    if (static_cast<unsigned>(fd) < IOSIG_MAX_FD) release(fd, true);
}

IOSIG_HIDDEN void iosig_fd_range_closing(unsigned lowest, unsigned highest) {
    const unsigned last = std::min<unsigned>(highest, IOSIG_MAX_FD - 1);
    for (unsigned fd = lowest; fd <= last; ++fd)
        if (__atomic_load_n(&iosig_slots[fd], __ATOMIC_RELAXED) != nullptr)
            release(static_cast<int>(fd), false);
}

IOSIG_HIDDEN void iosig_fd_duplicated(int oldfd, int newfd) {
    if (static_cast<unsigned>(newfd) >= IOSIG_MAX_FD) return;
    iosig_file* file = iosig_tracked_fd(oldfd);
    if (file != nullptr) file->open_descriptors.fetch_add(1, std::memory_order_relaxed);
    iosig_file* previous = __atomic_exchange_n(&iosig_slots[newfd], file, __ATOMIC_ACQ_REL);
    if (previous != nullptr &&
        previous->open_descriptors.fetch_sub(1, std::memory_order_acq_rel) == 1)
        last_descriptor_gone(*previous, -1);
}

IOSIG_HIDDEN void iosig_count_fsync(iosig_file* file, int fd, uint64_t started) {
    (void)fd;
    const std::uint64_t elapsed = started != 0 ? monotonic_ns() - started : 0;
    add_counter(file->shared.fsyncs, 1);
    add_counter(file->shared.fsync_ns, elapsed);
    // What the program made durable must stay reachable after a crash: the staged file's directory
    // entry too, once, at its first fsync.
    if (file->id.redirected && file->id.staged != nullptr &&
        !file->staging_synced.exchange(true, std::memory_order_acq_rel)) {
        const int saved_errno = errno;
        ++iosig_reentry;
        const std::string directory(iosig::preload::parent_of(file->id.staged));
        const int dir = internal_open(directory.c_str(), O_RDONLY | O_DIRECTORY);
        if (dir >= 0) {
            IOSIG_REAL(fsync)(dir);
            internal_close(dir);
        }
        --iosig_reentry;
        errno = saved_errno;
    }
}

} // extern "C"
