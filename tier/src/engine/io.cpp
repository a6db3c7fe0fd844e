// File access and the fault injector (io.hpp).
#include "iosig/tier/io.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <fcntl.h>
#include <random>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace iosig::tier {
namespace {

constexpr std::size_t direct_alignment = 4096;

// A per-role counter, 0 for a role never counted.
std::uint64_t count_for(const std::map<FileRole, std::uint64_t>& counts, FileRole role) {
    const auto it = counts.find(role);
    return it == counts.end() ? 0 : it->second;
}

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
        if (const int e = faults_->before_sync(role_); e < 0) return e;
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

int File::identity(std::uint64_t& device, std::uint64_t& inode) const {
    struct stat st{};
    if (::fstat(buffered_fd_, &st) != 0) return -errno;
    device = st.st_dev;
    inode = st.st_ino;
    return 0;
}

int File::version(FileVersion& out) const {
    struct stat st{};
    if (::fstat(buffered_fd_, &st) != 0) return -errno;
    constexpr std::int64_t ns = 1'000'000'000;
    out.size = st.st_size;
    out.modified_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * ns + st.st_mtim.tv_nsec;
    out.changed_ns = static_cast<std::int64_t>(st.st_ctim.tv_sec) * ns + st.st_ctim.tv_nsec;
    return 0;
}

int File::uring_fd() const {
    return faults_ ? -1 : fd_;
}

// ---------------------------------------------------------------------------------------------

void IoFaults::fail_nth_write(std::uint64_t n, std::set<FileRole> roles) {
    std::lock_guard lock(mutex_);
    fail_at_ = n;
    fail_roles_ = std::move(roles);
    counted_ = 0;
    failed_ = false;
    transient_ = false;
}

void IoFaults::fail_one_write(std::uint64_t n, std::set<FileRole> roles) {
    fail_nth_write(n, std::move(roles));
    std::lock_guard lock(mutex_);
    transient_ = true;
}

void IoFaults::fail_now(std::set<FileRole> roles) {
    std::lock_guard lock(mutex_);
    fail_at_ = 0;
    fail_roles_ = std::move(roles);
    counted_ = 0;
    failed_ = true;
}

void IoFaults::clear_failures() {
    std::lock_guard lock(mutex_);
    fail_at_ = 0;
    failed_ = false;
    fail_roles_.clear();
    fail_read_roles_.clear();
}

std::uint64_t IoFaults::writes(FileRole role) const {
    std::lock_guard lock(mutex_);
    return count_for(writes_, role);
}

std::uint64_t IoFaults::syncs(FileRole role) const {
    std::lock_guard lock(mutex_);
    return count_for(syncs_, role);
}

void IoFaults::slow_down(FileRole role, std::chrono::microseconds delay) {
    std::lock_guard lock(mutex_);
    delay_[role] = delay;
}

std::uint64_t IoFaults::reads(FileRole role) const {
    std::lock_guard lock(mutex_);
    return count_for(reads_, role);
}

void IoFaults::slow_down_reads(FileRole role, std::chrono::microseconds delay) {
    std::lock_guard lock(mutex_);
    read_delay_[role] = delay;
}

void IoFaults::fail_reads(std::set<FileRole> roles) {
    std::lock_guard lock(mutex_);
    fail_read_roles_ = std::move(roles);
}

int IoFaults::before_read(FileRole role) {
    std::chrono::microseconds delay{0};
    {
        std::lock_guard lock(mutex_);
        ++reads_[role];
        if (fail_read_roles_.contains(role)) return -EIO;
        if (const auto it = read_delay_.find(role); it != read_delay_.end()) delay = it->second;
    }
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    return 0;
}

int IoFaults::before_write(FileRole role, const std::filesystem::path& path, int buffered_fd,
                           std::size_t count, off_t offset) {
    std::chrono::microseconds delay{0};
    {
        std::lock_guard lock(mutex_);
        if (const auto it = delay_.find(role); it != delay_.end()) delay = it->second;
    }
    if (delay.count() > 0 && count > 0) std::this_thread::sleep_for(delay); // data writes only
    std::lock_guard lock(mutex_);
    ++writes_[role];
    if (fail_roles_.contains(role)) {
        if (failed_) {
            ++injected_;
            return -EIO;
        }
        if (fail_at_ != 0 && ++counted_ >= fail_at_) {
            if (transient_)
                fail_at_ = 0;
            else
                failed_ = true;
            ++injected_;
            return -EIO;
        }
    }
    Volatile& v = volatile_[path];
    struct stat st{};
    const off_t size = ::fstat(buffered_fd, &st) == 0 ? st.st_size : 0;
    if (v.synced_size < 0) v.synced_size = size;
    Undo undo{offset, {}};
    if (count == 0) { // ftruncate(offset): remember the bytes a shrink removes
        undo.offset = std::min(offset, size);
        count = static_cast<std::size_t>(std::max<off_t>(0, size - offset));
    }
    if (undo.offset < size) {
        undo.old_bytes.resize(
            std::min<std::size_t>(count, static_cast<std::size_t>(size - undo.offset)));
        const ssize_t n =
            ::pread(buffered_fd, undo.old_bytes.data(), undo.old_bytes.size(), undo.offset);
        undo.old_bytes.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    }
    v.undo.push_back(std::move(undo));
    return 0;
}

int IoFaults::before_sync(FileRole role) {
    std::lock_guard lock(mutex_);
    ++syncs_[role];
    if (!failed_ || !fail_roles_.contains(role)) return 0;
    ++injected_;
    return -EIO;
}

std::uint64_t IoFaults::injected_failures() const {
    std::lock_guard lock(mutex_);
    return injected_;
}

void IoFaults::after_sync(const std::filesystem::path& path, int buffered_fd) {
    std::lock_guard lock(mutex_);
    Volatile& v = volatile_[path];
    v.undo.clear();
    struct stat st{};
    v.synced_size = ::fstat(buffered_fd, &st) == 0 ? st.st_size : 0;
}

void IoFaults::renamed(const std::filesystem::path& from, const std::filesystem::path& to) {
    std::lock_guard lock(mutex_);
    const auto it = volatile_.find(from);
    if (it == volatile_.end()) {
        volatile_.erase(to);
        return;
    }
    volatile_[to] = std::move(it->second);
    volatile_.erase(from);
}

namespace {
std::atomic<std::uint64_t> power_cuts{0};
} // namespace

std::uint64_t IoFaults::simulated_power_cuts() {
    return power_cuts.load();
}

void IoFaults::crash(std::uint64_t seed) {
    ++power_cuts;
    std::lock_guard lock(mutex_);
    std::mt19937_64 rng(seed);
    for (auto& [path, v] : volatile_) {
        if (v.undo.empty()) continue;
        const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
        if (fd < 0) continue;
        for (auto it = v.undo.rbegin(); it != v.undo.rend(); ++it) {
            // Each 4 KiB block of the write independently did or did not reach the disk.
            for (std::size_t at = 0; at < it->old_bytes.size();) {
                const off_t abs = it->offset + static_cast<off_t>(at);
                const std::size_t block_end =
                    static_cast<std::size_t>((abs / 4096 + 1) * 4096 - it->offset);
                const std::size_t end = std::min(block_end, it->old_bytes.size());
                if (rng() & 1) {
                    [[maybe_unused]] const ssize_t n =
                        ::pwrite(fd, it->old_bytes.data() + at, end - at, abs);
                }
                at = end;
            }
        }
        struct stat st{};
        // A file that grew since its last sync keeps a random part of its growth: an append-only
        // log (the journal) keeps a prefix of its unsynced records, possibly ending in a torn one.
        if ((rng() & 1) && ::fstat(fd, &st) == 0 && st.st_size > v.synced_size) {
            const auto grown = static_cast<std::uint64_t>(st.st_size - v.synced_size);
            const auto cut = v.synced_size + static_cast<off_t>(rng() % (grown + 1));
            [[maybe_unused]] const int r = ::ftruncate(fd, cut);
        }
        ::close(fd);
        v = Volatile{};
    }
}

} // namespace iosig::tier
