// System-call helpers for iosig's own files (journal, staging directories, logs, reports).
//
// Every descriptor iosig opens for itself is O_CLOEXEC and moved to a high number, so that a host
// that dup2()s onto small fixed numbers, or expects the lowest free number from open(), never meets
// one of ours. None of them is kept open across calls: closefrom()/close_range() in the host cannot
// pull one from under us.
#pragma once

#include <cstddef>
#include <sys/types.h>

namespace iosig::shim {

int internal_fd_floor();
// `fd` itself or a high duplicate of it (the low one is closed); -1 stays -1.
int to_internal_fd(int fd);
int internal_open(const char* path, int flags, mode_t mode = 0);
int internal_openat(int dirfd, const char* path, int flags, mode_t mode = 0);
void internal_close(int fd);

// mkdir -p with `mode` for the directories it creates; true if `path` is a directory afterwards.
bool make_directories(const char* path, mode_t mode);
// Loops over short writes; false on error (errno set).
bool write_all(int fd, const void* data, std::size_t size);

} // namespace iosig::shim
