// The fault injector and the crash model of the tests (IoFaults, io.hpp).
#include "iosig/tier/io.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <fcntl.h>
#include <random>
#include <stdexcept>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace iosig::tier {
namespace {

// A per-role counter, 0 for a role never counted.
std::uint64_t count_for(const std::map<FileRole, std::uint64_t>& counts, FileRole role) {
    const auto it = counts.find(role);
    return it == counts.end() ? 0 : it->second;
}

} // namespace

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

std::shared_ptr<IoFaults> IoFaults::without_power_cuts() {
    auto faults = std::make_shared<IoFaults>();
    faults->keeps_undo_ = false;
    return faults;
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
    if (!keeps_undo_) return 0;
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

void IoFaults::hold_syncs(FileRole role) {
    std::lock_guard lock(mutex_);
    held_syncs_.insert(role);
}

void IoFaults::hold_syncs(const std::filesystem::path& file) {
    std::error_code unknown;
    const auto canonical = std::filesystem::weakly_canonical(file, unknown);
    std::lock_guard lock(mutex_);
    held_file_syncs_.insert(unknown ? file : canonical);
}

void IoFaults::let_syncs_go() {
    {
        std::lock_guard lock(mutex_);
        held_syncs_.clear();
        held_file_syncs_.clear();
    }
    syncs_let_go_.notify_all();
}

int IoFaults::before_sync(FileRole role, const std::filesystem::path& path) {
    std::unique_lock lock(mutex_);
    ++syncs_[role];
    syncs_let_go_.wait(
        lock, [&] { return !held_syncs_.contains(role) && !held_file_syncs_.contains(path); });
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
    if (!keeps_undo_) throw std::logic_error("IoFaults::crash: made without_power_cuts()");
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
