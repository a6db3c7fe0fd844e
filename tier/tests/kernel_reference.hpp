// A random sequence of calls made twice, through the engine on files in one directory and through
// the kernel's own calls on files in another, compared call by call (kernel_reference_test.cpp).
// Its state and what the calls share: kernel_reference_state.hpp.
#pragma once

#include "kernel_reference_state.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace iosig::tier::test_support {

class KernelReference : public KernelReferenceState {
public:
    // The files and `tag` as KernelReferenceState says.
    KernelReference(TierCache& tier, const ScratchDir& dir, const TierConfig& config,
                    std::uint64_t seed, const std::string& tag = "")
        : KernelReferenceState(tier, dir, config, seed, tag) {}

    // One random call, made both ways and compared. Returns "" or what differed.
    std::string step(int index) {
        step_ = index;
        const DeviceFailures::Call call(failures_);
        const unsigned pick = rng_() % 100;
        if (pick < 10 || open_.empty()) return open();
        const std::size_t which = rng_() % open_.size();
        if (pick < 16) return close(which);
        if (pick < 40) return read(which);
        if (pick < 64) return write(which);
        if (pick < 70) return append(which);
        if (pick < 76) return truncate(which);
        if (pick < 82) return sync(which);
        if (pick < 88) return size(which);
        if (pick < 90) return unlink();
        if (pick < 91) return symlink();
        if (pick < 92) return rename();
        if (pick < 94) return change_outside();
        return engine_wide();
    }

    std::string close_all() {
        while (!open_.empty()) {
            const DeviceFailures::Call call(failures_);
            if (std::string wrong = close(open_.size() - 1); !wrong.empty()) return wrong;
        }
        return "";
    }

private:
    std::string open() {
        static constexpr int flag_choices[] = {O_RDWR | O_CREAT,
                                               O_RDWR | O_CREAT,
                                               O_RDWR,
                                               O_RDONLY,
                                               O_WRONLY,
                                               O_WRONLY | O_CREAT,
                                               O_RDWR | O_CREAT | O_EXCL,
                                               O_RDWR | O_TRUNC,
                                               O_WRONLY | O_CREAT | O_TRUNC,
                                               O_RDONLY | O_TRUNC, // Linux cuts the file
                                               O_RDONLY | O_CREAT,
                                               O_RDWR | O_EXCL}; // no O_CREAT: O_EXCL ignored
        if (open_.size() >= 8) return close(rng_() % open_.size());
        const int n = static_cast<int>(rng_() % reference_names);
        const int flags = flag_choices[rng_() % std::size(flag_choices)];
        // An open that cuts a file writes it: devices may fail then as for a truncate.
        const std::optional<ino_t> cut = flags & O_TRUNC ? kernel_file_at(n) : std::nullopt;
        const bool failing = cut && failures_.start(rng_, true);
        const int handle = tier_.open_file(engine_dir_ / name(n), flags, 0644);
        if (failures_.end(failing, handle == -EIO)) return failed_cutting_open(n);
        const int fd = static_cast<int>(
            kernel_result(::open((kernel_dir_ / name(n)).c_str(), flags | O_CLOEXEC, 0644)));
        if (handle == -ENFILE && file_ids_ > 0 && tier_.stats().home_files >= file_ids_) {
            // Every id names a file the engine holds: the caller opens this one itself (and the
            // engine, which has none of its lines, made nothing), with the kernel's result.
            const int own = static_cast<int>(
                kernel_result(::open((engine_dir_ / name(n)).c_str(), flags | O_CLOEXEC, 0644)));
            if (own >= 0) ::close(own);
            if (fd >= 0) ::close(fd);
            if ((own >= 0) != (fd >= 0) || (own < 0 && own != fd))
                return fmt("open(%s, %#o) past the engine gave %d, from the kernel %d",
                           name(n).c_str(), flags, own, fd);
            return "";
        }
        if ((handle >= 0) != (fd >= 0) || (handle < 0 && handle != fd)) {
            if (handle >= 0) tier_.close(handle);
            if (fd >= 0) ::close(fd);
            return fmt("open(%s, %#o) gave %d through the engine, %d from the kernel",
                       name(n).c_str(), flags, handle, fd);
        }
        if (handle < 0) return "";
        struct stat st{};
        ::fstat(fd, &st);
        open_.push_back({handle, fd, flags, st.st_ino});
        return "";
    }

    // An open that cuts the file failed while devices failed. As a failed ftruncate, it has cut
    // the file in the engine or not: the engine's size, seen through a read-only handle once the
    // devices work, must be 0 or what it was, and the kernel's file (not opened) is made to match.
    std::string failed_cutting_open(int n) {
        const auto engine = engine_dir_ / name(n), kernel = kernel_dir_ / name(n);
        const long long before = size_at(kernel);
        long long after = -1;
        if (const int h = tier_.open_file(engine, O_RDONLY); h >= 0) {
            after = tier_.file_size(h);
            if (const int e = tier_.close(h); e != 0)
                return fmt("close of %s after a failed cutting open gave %d", name(n).c_str(), e);
        } else if (h == -ENFILE) { // every id is taken, so the engine holds nothing of this file
            after = size_at(engine);
        } else {
            return fmt("open(%s) after a failed cutting open gave %d", name(n).c_str(), h);
        }
        if (after != before && after != 0)
            return fmt("a cutting open of %s failed and left the size %lld (was %lld)",
                       name(n).c_str(), after, before);
        return ::truncate(kernel.c_str(), after) == 0 ? "" : fmt("the kernel's truncate failed");
    }

    std::string close(std::size_t which) {
        const Open o = open_[which];
        open_.erase(open_.begin() + static_cast<std::ptrdiff_t>(which));
        const bool failing = failures_.start(rng_, false);
        const long long engine = tier_.close(o.handle), kernel = kernel_result(::close(o.fd));
        if (failures_.end(failing, engine == -EIO && kernel == 0)) {
            failures_.close_failed(); // the file's lines wait in the engine for a flush_all
            return "";
        }
        if (engine == 0) failures_.synced(o.file); // its lines are home
        return compare("close", o, engine, kernel);
    }

    std::string read(std::size_t which) {
        Open& o = open_[which];
        const long long offset = offset_for(o);
        const std::uint64_t count = count_for();
        std::vector<char> engine(count, 'E'), kernel(count, 'K');
        const bool failing = may_read(o) && failures_.start(rng_, true);
        long long got = tier_.pread(o.handle, engine.data(), count, offset);
        const long long want = kernel_result(::pread(o.fd, kernel.data(), count, offset));
        // Failed, or fewer bytes: what the engine gave must be what the kernel's file holds.
        if (failures_.end(failing, (got == -EIO && want >= 0) || (got >= 0 && got < want)))
            return std::equal(engine.begin(), engine.begin() + std::max(got, 0ll), kernel.begin())
                       ? ""
                       : fmt("pread(offset %lld, count %llu) in a failure returned other bytes",
                             offset, static_cast<unsigned long long>(count));
        if (std::string wrong = compare("pread", o, got, want, offset, count); !wrong.empty())
            return wrong;
        if (want >= 0) o.next = want > 0 ? offset + want : 0; // at the end: read it again
        if (want > 0 && !std::equal(engine.begin(), engine.begin() + want, kernel.begin()))
            return fmt("pread(offset %lld, count %llu) returned other bytes than the kernel's",
                       offset, static_cast<unsigned long long>(count));
        return "";
    }

    std::string write(std::size_t which) {
        Open& o = open_[which];
        const long long offset = offset_for(o);
        const std::vector<char> data = bytes(count_for());
        if (may_read(o) && failures_.start(rng_, true)) return write_in_failure(o, offset, data);
        const long long want = kernel_result(::pwrite(o.fd, data.data(), data.size(), offset));
        if (want >= 0) o.next = offset + want;
        return compare("pwrite", o, tier_.pwrite(o.handle, data.data(), data.size(), offset), want,
                       offset, data.size());
    }

    // A write, or an append (at `offset`, the file's size), in a failure.
    std::string write_in_failure(Open& o, long long offset, const std::vector<char>& data,
                                 bool append = false) {
        const auto count = static_cast<long long>(data.size());
        const long long before = tier_.file_size(o.handle);
        const long long got = append ? tier_.append(o.handle, data.data(), data.size())
                                     : tier_.pwrite(o.handle, data.data(), data.size(), offset);
        if (!failures_.end(true, got == -EIO || (got >= 0 && got < count))) {
            const long long want = kernel_result(::pwrite(o.fd, data.data(), data.size(), offset));
            if (want >= 0) o.next = offset + want;
            return compare("pwrite in a failure", o, got, want, offset, data.size());
        }
        // The kernel's checks (the handle, the offset) pass: a write of nothing succeeds.
        if (const long long check = kernel_result(::pwrite(o.fd, data.data(), 0, offset));
            check != 0)
            return fmt("pwrite(offset %lld) failed with %lld in a failure, and the kernel refuses "
                       "it with %lld",
                       offset, got, check);
        // The size: as before, or grown as far as the write reached at most.
        const long long after = tier_.file_size(o.handle), end = offset + count;
        if (after < before || after > std::max(before, end) || (got > 0 && after < offset + got))
            return fmt("a pwrite(offset %lld, count %lld) that gave %lld moved the size from %lld "
                       "to %lld",
                       offset, count, got, before, after);
        // The range: what the engine shows now, its first `got` bytes written.
        std::vector<char> now(
            static_cast<std::size_t>(std::max(0ll, std::min(end, after) - offset)));
        if (const long long r = tier_.pread(o.handle, now.data(), now.size(), offset);
            r != static_cast<long long>(now.size()))
            return fmt("reading back a failed pwrite(offset %lld) gave %lld", offset, r);
        if (!std::equal(data.begin(), data.begin() + std::max(got, 0ll), now.begin()))
            return fmt("the %lld bytes a pwrite(offset %lld) counted are not there", got, offset);
        // Beyond the bytes it counted, the refused write changed what the engine shows: until a
        // sync, a crash may lose that.
        std::vector<char> was(now.size());
        const ssize_t kept = ::pread(o.fd, was.data(), was.size(), offset);
        was.resize(static_cast<std::size_t>(std::max<ssize_t>(kept, 0)));
        was.resize(now.size(), 0);
        if (after != before || was != now) failures_.changed_unsynced(o.file);
        if (::ftruncate(o.fd, after) != 0 ||
            ::pwrite(o.fd, now.data(), now.size(), offset) != static_cast<ssize_t>(now.size()))
            return fmt("the kernel's file could not take what the engine shows");
        o.next = offset + std::max(got, 0ll);
        return "";
    }

    std::string append(std::size_t which) {
        Open& o = open_[which];
        const std::vector<char> data = bytes(count_for());
        if ((o.flags & O_ACCMODE) == O_RDWR && failures_.start(rng_, true))
            return write_in_failure(o, tier_.file_size(o.handle), data, true);
        // The kernel's append: at the end, for a handle that may write.
        long long want = -EBADF;
        if ((o.flags & O_ACCMODE) != O_RDONLY) {
            struct stat st{};
            ::fstat(o.fd, &st);
            want = kernel_result(::pwrite(o.fd, data.data(), data.size(), st.st_size));
        }
        return compare("append", o, tier_.append(o.handle, data.data(), data.size()), want, -1,
                       data.size());
    }

    std::string truncate(std::size_t which) {
        const Open& o = open_[which];
        const long long length =
            rng_() % 20 == 0 ? -1 : static_cast<long long>(rng_() % (12 * line_ + 1));
        const long long before = tier_.file_size(o.handle);
        const bool failing = (o.flags & O_ACCMODE) != O_RDONLY && failures_.start(rng_, true);
        const long long engine = tier_.ftruncate(o.handle, length);
        if (failures_.end(failing, engine == -EIO)) {
            // Failed before the cut, or after the engine made it (the home file's may wait).
            const long long after = tier_.file_size(o.handle);
            if (after != before && after != length)
                return fmt("ftruncate(%lld) failed and left the size %lld (was %lld)", length,
                           after, before);
            return ::ftruncate(o.fd, after) == 0 ? "" : fmt("the kernel's ftruncate failed");
        }
        if (std::string wrong =
                compare("ftruncate", o, engine, kernel_result(::ftruncate(o.fd, length)), length);
            !wrong.empty())
            return wrong;
        // Half the time a sync at once, before a write grows the file again over what the cut
        // left of a dirty line.
        return rng_() % 2 == 0 ? sync(which) : "";
    }

    std::string sync(std::size_t which) {
        const Open& o = open_[which];
        const bool data_only = rng_() % 2 == 0;
        const bool failing = failures_.start(rng_, false);
        const int engine = data_only ? tier_.fdatasync(o.handle) : tier_.fsync(o.handle);
        const long long kernel = kernel_result(data_only ? ::fdatasync(o.fd) : ::fsync(o.fd));
        if (failures_.end(failing, engine == -EIO && kernel == 0)) return "";
        if (std::string wrong = compare(data_only ? "fdatasync" : "fsync", o, engine, kernel);
            !wrong.empty())
            return wrong;
        failures_.synced(o.file);
        // Durable at home: the home file, read past the engine, holds what the kernel's file does
        // (when a name still leads to it).
        for (int n = 0; n < reference_names; ++n) {
            if (kernel_file_at(n) != o.file) continue;
            const auto engine_file = engine_dir_ / name(n), kernel_file = kernel_dir_ / name(n);
            if (const long long at = first_difference(engine_file, kernel_file); at >= 0)
                return fmt("after fsync, home file %s differs from the kernel's from byte %lld "
                           "(%lld and %lld bytes)",
                           name(n).c_str(), at, size_at(engine_file), size_at(kernel_file));
        }
        return "";
    }

    std::string size(std::size_t which) {
        const Open& o = open_[which];
        struct stat st{};
        ::fstat(o.fd, &st);
        return compare("file_size", o, tier_.file_size(o.handle), st.st_size);
    }

    std::string unlink() {
        const int n = static_cast<int>(rng_() % reference_names);
        const long long engine = kernel_result(::unlink((engine_dir_ / name(n)).c_str()));
        const long long kernel = kernel_result(::unlink((kernel_dir_ / name(n)).c_str()));
        if (engine != kernel)
            return fmt("unlink(%s): %lld and %lld", name(n).c_str(), engine, kernel);
        return "";
    }

    // A name made a symbolic link to another name (relative, so that each directory's links stay
    // in it), perhaps one that leads nowhere yet: opens through it reach the file it names, and
    // an exclusive create fails.
    std::string symlink() {
        const int n = static_cast<int>(rng_() % reference_names);
        const int to = static_cast<int>(rng_() % reference_names);
        const long long engine =
            kernel_result(::symlink(name(to).c_str(), (engine_dir_ / name(n)).c_str()));
        const long long kernel =
            kernel_result(::symlink(name(to).c_str(), (kernel_dir_ / name(n)).c_str()));
        if (engine != kernel)
            return fmt("symlink(%s -> %s): %lld and %lld", name(n).c_str(), name(to).c_str(),
                       engine, kernel);
        return "";
    }

    std::string rename() {
        const int from = static_cast<int>(rng_() % reference_names),
                  to = static_cast<int>(rng_() % reference_names);
        const long long engine = kernel_result(
            ::rename((engine_dir_ / name(from)).c_str(), (engine_dir_ / name(to)).c_str()));
        const long long kernel = kernel_result(
            ::rename((kernel_dir_ / name(from)).c_str(), (kernel_dir_ / name(to)).c_str()));
        if (engine != kernel)
            return fmt("rename(%s, %s): %lld and %lld", name(from).c_str(), name(to).c_str(),
                       engine, kernel);
        return "";
    }

    // Another program writes or truncates a file no handle has open, the same in both
    // directories: the engine's next open must see it (close-to-open consistency).
    std::string change_outside() {
        const int n = static_cast<int>(rng_() % reference_names);
        const std::optional<ino_t> file = kernel_file_at(n);
        // After a close that failed, the engine still holds lines of a closed file: they would
        // go home over another program's bytes, as a dm-cache's dirty blocks go over a device
        // written directly.
        if (!file || failures_.close_unsettled()) return "";
        for (const Open& o : open_)
            if (o.file == *file) return "";
        const auto engine = engine_dir_ / name(n), kernel = kernel_dir_ / name(n);
        if (rng_() % 3 == 0) {
            const long long length = static_cast<long long>(rng_() % (12 * line_ + 1));
            if (::truncate(engine.c_str(), length) != 0 || ::truncate(kernel.c_str(), length) != 0)
                return fmt("truncate(%s) outside the engine failed", name(n).c_str());
            return "";
        }
        const long long offset = static_cast<long long>(rng_() % (12 * line_));
        const std::vector<char> data = bytes(count_for());
        for (const auto& path : {engine, kernel}) {
            const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
            const bool wrote = fd >= 0 && ::pwrite(fd, data.data(), data.size(), offset) ==
                                              static_cast<ssize_t>(data.size());
            if (fd >= 0) ::close(fd);
            if (!wrote) return fmt("a write to %s outside the engine failed", name(n).c_str());
        }
        return "";
    }

    // Calls that no kernel call matches: they must succeed and change nothing a caller sees.
    std::string engine_wide() {
        const bool all = rng_() % 2 == 0;
        const bool failing = failures_.start(rng_, false);
        const int result = all ? tier_.flush_all() : tier_.commit();
        if (failures_.end(failing, result == -EIO)) return "";
        if (result != 0) return fmt("%s gave %d", all ? "flush_all" : "commit", result);
        if (all) failures_.all_synced();
        return "";
    }
};

} // namespace iosig::tier::test_support
