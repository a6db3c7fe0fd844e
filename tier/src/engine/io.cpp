// File access (io.hpp); the fault injector is io_faults.cpp.
#include "iosig/tier/io.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

namespace iosig::tier {
namespace {

constexpr std::size_t direct_alignment = 4096;

} // namespace

File::File(int fd, int buffered_fd, FileRole role, std::filesystem::path path,
           std::shared_ptr<IoFaults> faults)
    : fd_(fd), buffered_fd_(buffered_fd), direct_(fd != buffered_fd), role_(role),
      path_(std::move(path)), faults_(std::move(faults)) {}

File::~File() {
    if (direct_) ::close(buffered_fd_);
    ::close(fd_);
}

std::unique_ptr<File> File::open(const std::filesystem::path& path, int flags, mode_t mode,
                                 FileRole role, bool direct_io, std::shared_ptr<IoFaults> faults,
                                 int& error) {
    flags |= O_CLOEXEC;
    const int buffered = ::open(path.c_str(), flags, mode);
    if (buffered < 0) {
        error = errno;
        return nullptr;
    }
    int fd = buffered;
    if (direct_io) {
        // A second descriptor so that aligned line IO can skip the page cache; O_CREAT/O_TRUNC
        // already took effect on the first open.
        const int direct = ::open(path.c_str(), (flags & ~(O_CREAT | O_TRUNC | O_EXCL)) | O_DIRECT);
        if (direct >= 0) fd = direct; // EINVAL: the file system has no direct IO; stay buffered
    }
    error = 0;
    return std::make_unique<File>(fd, buffered, role, path, std::move(faults));
}

bool File::aligned(const void* buffer, std::size_t count, off_t offset) const {
    return reinterpret_cast<std::uintptr_t>(buffer) % direct_alignment == 0 &&
           count % direct_alignment == 0 && offset % static_cast<off_t>(direct_alignment) == 0;
}

ssize_t File::pread(void* buffer, std::size_t count, off_t offset, Path path) {
    if (faults_)
        if (const int e = faults_->before_read(role_); e < 0) return e;
    const int fd = path == Path::direct_when_aligned && direct_ && aligned(buffer, count, offset)
                       ? fd_
                       : buffered_fd_;
    std::size_t done = 0;
    while (done < count) {
        const ssize_t n = ::pread(fd, static_cast<char*>(buffer) + done, count - done,
                                  offset + static_cast<off_t>(done));
        if (n < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        if (n == 0) break;
        done += static_cast<std::size_t>(n);
    }
    return static_cast<ssize_t>(done);
}

ssize_t File::pwrite(const void* buffer, std::size_t count, off_t offset, Path path) {
    if (faults_) {
        if (const int e = faults_->before_write(role_, path_, buffered_fd_, count, offset); e < 0)
            return e;
    }
    const int fd = path == Path::direct_when_aligned && direct_ && aligned(buffer, count, offset)
                       ? fd_
                       : buffered_fd_;
    std::size_t done = 0;
    while (done < count) {
        const ssize_t n = ::pwrite(fd, static_cast<const char*>(buffer) + done, count - done,
                                   offset + static_cast<off_t>(done));
        if (n < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        done += static_cast<std::size_t>(n);
    }
    return static_cast<ssize_t>(done);
}

ssize_t File::pwritev(std::vector<iovec> parts, off_t offset) {
    std::size_t count = 0;
    bool all_aligned = direct_;
    for (const iovec& part : parts) {
        all_aligned =
            all_aligned && aligned(part.iov_base, part.iov_len, offset + static_cast<off_t>(count));
        count += part.iov_len;
    }
    if (faults_) {
        if (const int e = faults_->before_write(role_, path_, buffered_fd_, count, offset); e < 0)
            return e;
    }
    int fd = all_aligned ? fd_ : buffered_fd_;
    std::size_t done = 0, first = 0;
    while (done < count) {
        const ssize_t n =
            ::pwritev(fd, parts.data() + first, static_cast<int>(parts.size() - first),
                      offset + static_cast<off_t>(done));
        if (n < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        done += static_cast<std::size_t>(n);
        // Past the parts written; a part cut in the middle is no longer aligned for O_DIRECT.
        auto left = static_cast<std::size_t>(n);
        while (first < parts.size() && left >= parts[first].iov_len)
            left -= parts[first++].iov_len;
        if (left > 0) {
            parts[first].iov_base = static_cast<char*>(parts[first].iov_base) + left;
            parts[first].iov_len -= left;
            fd = buffered_fd_;
        }
    }
    return static_cast<ssize_t>(done);
}

int File::fdatasync() {
    if (faults_) {
        if (const int e = faults_->before_sync(role_, path_); e < 0) return e;
    }
    // One call for both descriptors: they share the inode, so fdatasync on either writes back the
    // page cache of the buffered tails and flushes the device's cache. Two calls cost a second
    // flush IO every sync (the lab's throttled hdd counted 1,244 write IOs where the engine made
    // 786 writes and 228 syncs).
    if (::fdatasync(fd_) != 0) return -errno;
    if (faults_) faults_->after_sync(path_, buffered_fd_);
    return 0;
}

int File::ftruncate(off_t length) {
    if (faults_) {
        if (const int e = faults_->before_write(role_, path_, buffered_fd_, 0, length); e < 0)
            return e;
    }
    return ::ftruncate(buffered_fd_, length) == 0 ? 0 : -errno;
}

int File::rename_to(const std::filesystem::path& to) {
    if (::rename(path_.c_str(), to.c_str()) != 0) return -errno;
    if (faults_) faults_->renamed(path_, to);
    path_ = to;
    return 0;
}

std::uint64_t room_for(const std::filesystem::path& file, std::error_code& error) {
    const auto space =
        std::filesystem::space(file.parent_path().empty() ? "." : file.parent_path(), error);
    if (error) return 0;
    struct stat st{};
    const std::uint64_t held =
        ::stat(file.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_blocks) * 512 : 0;
    return space.available + held;
}

int File::reserve(off_t length) {
    const int e = ::posix_fallocate(buffered_fd_, 0, length);
    if (e != EOPNOTSUPP && e != EINVAL) return -e; // 0 when reserved
    std::error_code error;
    const std::uint64_t room = room_for(path_, error);
    if (error) return -error.value();
    return static_cast<std::uint64_t>(length) <= room ? 0 : -ENOSPC;
}

off_t File::size() const {
    struct stat st{};
    if (::fstat(buffered_fd_, &st) != 0) return -errno;
    return st.st_size;
}

namespace {

std::int64_t nanoseconds(const struct statx_timestamp& t) {
    return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// statx rather than stat: the same fields, and the birth time where the file system keeps one.
int status_at(int directory, const char* path, int flags, FileStatus& out) {
    struct statx st{};
    if (::statx(directory, path, flags, STATX_BASIC_STATS | STATX_BTIME, &st) != 0) return -errno;
    out = FileStatus{};
    out.device = makedev(st.stx_dev_major, st.stx_dev_minor);
    out.inode = st.stx_ino;
    out.links = st.stx_nlink;
    out.version.size = static_cast<std::int64_t>(st.stx_size);
    out.version.modified_ns = nanoseconds(st.stx_mtime);
    out.version.changed_ns = nanoseconds(st.stx_ctime);
    if (st.stx_mask & STATX_BTIME) out.born_ns = nanoseconds(st.stx_btime);
    return 0;
}

} // namespace

int status_of(const std::filesystem::path& path, FileStatus& out) {
    return status_at(AT_FDCWD, path.c_str(), 0, out);
}

namespace {

FileSystemIdentity identity_from(const struct statfs& st) {
    std::uint64_t id = 0;
    static_assert(sizeof st.f_fsid == sizeof id);
    std::memcpy(&id, &st.f_fsid, sizeof id);
    return FileSystemIdentity{static_cast<std::uint64_t>(st.f_type), id};
}

} // namespace

int file_system_at(const std::filesystem::path& path, FileSystemIdentity& out) {
    std::filesystem::path at = path;
    for (;;) {
        struct statfs st{};
        if (::statfs(at.c_str(), &st) == 0) {
            out = identity_from(st);
            return 0;
        }
        if ((errno != ENOENT && errno != ENOTDIR) || !at.has_relative_path()) return -errno;
        at = at.parent_path();
    }
}

namespace {

// name_to_handle_at's structure with room for the largest handle (MAX_HANDLE_SZ bytes).
struct HandleBuffer {
    alignas(struct file_handle) unsigned char storage[sizeof(struct file_handle) + MAX_HANDLE_SZ]{};
    struct file_handle* head() { return reinterpret_cast<struct file_handle*>(storage); }
};

// A descriptor of the nearest directory above `near` that exists, if it is on `file_system`; else
// -errno: -EXDEV when the path now ends on another file system, -EPERM when the directory may not
// be read (open_by_handle_at takes no O_PATH descriptor).
int anchor_on(const std::filesystem::path& near, const FileSystemIdentity& file_system) {
    std::filesystem::path at = near.parent_path();
    for (;;) {
        const int fd = ::open(at.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 && errno == EACCES) return -EPERM;
        if (fd >= 0) {
            struct statfs st{};
            const bool there = ::fstatfs(fd, &st) == 0 && identity_from(st) == file_system;
            if (there) return fd;
            ::close(fd);
            return -EXDEV;
        }
        if ((errno != ENOENT && errno != ENOTDIR) || !at.has_relative_path()) return -errno;
        at = at.parent_path();
    }
}

} // namespace

int File::handle(FileHandle& out) const {
    HandleBuffer h;
    h.head()->handle_bytes = MAX_HANDLE_SZ;
    int mount_id = 0;
    if (::name_to_handle_at(buffered_fd_, "", h.head(), &mount_id, AT_EMPTY_PATH) != 0)
        return -errno;
    out.type = h.head()->handle_type;
    out.bytes.assign(reinterpret_cast<const char*>(h.head()->f_handle), h.head()->handle_bytes);
    return 0;
}

std::unique_ptr<File> File::open_by_handle(const FileHandle& handle,
                                           const std::filesystem::path& near,
                                           const FileSystemIdentity& file_system, int flags,
                                           FileRole role, std::shared_ptr<IoFaults> faults,
                                           int& error) {
    if (!handle.known() || handle.bytes.size() > MAX_HANDLE_SZ || !file_system.known()) {
        error = EINVAL;
        return nullptr;
    }
    const int anchor = anchor_on(near, file_system);
    if (anchor < 0) {
        error = -anchor;
        return nullptr;
    }
    HandleBuffer h;
    h.head()->handle_type = handle.type;
    h.head()->handle_bytes = static_cast<unsigned>(handle.bytes.size());
    std::memcpy(h.head()->f_handle, handle.bytes.data(), handle.bytes.size());
    const int fd = ::open_by_handle_at(anchor, h.head(), flags | O_CLOEXEC);
    error = fd < 0 ? errno : 0;
    ::close(anchor);
    if (fd < 0) return nullptr;
    std::error_code ec;
    std::filesystem::path now =
        std::filesystem::read_symlink("/proc/self/fd/" + std::to_string(fd), ec);
    if (ec) now = near;
    return std::make_unique<File>(fd, fd, role, std::move(now), std::move(faults));
}

int File::file_system(FileSystemIdentity& out) const {
    struct statfs st{};
    if (::fstatfs(buffered_fd_, &st) != 0) return -errno;
    out = identity_from(st);
    return 0;
}

int File::status(FileStatus& out) const {
    return status_at(buffered_fd_, "", AT_EMPTY_PATH, out);
}

int File::uring_fd() const {
    return faults_ ? -1 : fd_;
}

} // namespace iosig::tier
