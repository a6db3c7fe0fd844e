// The engine's file access, with a fault injector for crash-safety tests (Open CAS style: fail the
// N-th write to the cache side or to the home file, then lose what was not yet synced).
//
// Every function returns >= 0 on success and -errno on failure, like the system calls underneath.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <sys/types.h>
#include <sys/uio.h>
#include <system_error>
#include <vector>

namespace iosig::tier {

enum class FileRole : std::uint8_t { cache, journal, home };

class IoFaults;

// What changes when anyone writes or cuts a file: its size and the times of its last data and
// inode change (in nanoseconds).
struct FileVersion {
    std::int64_t size = 0;
    std::int64_t modified_ns = 0;
    std::int64_t changed_ns = 0;
    bool operator==(const FileVersion&) const = default;
};

// A file's device and inode number, which name it whatever path leads to it, its version, and
// how many names it has (0: deleted, alive only while open).
struct FileStatus {
    std::uint64_t device = 0;
    std::uint64_t inode = 0;
    std::uint64_t links = 0;
    FileVersion version;
    // When the file was created (statx's birth time), in ns; 0 where the file system does not
    // say. Tells a file from a later one in the same inode number (ext4 hands freed ones out).
    std::int64_t born_ns = 0;
};

// The status of the file `path` names (statx, following symbolic links). 0 or -errno.
int status_of(const std::filesystem::path& path, FileStatus& out);

// Which file system a file is on (statfs's type and id; the id of ext4, xfs and btrfs comes from
// their UUID and survives a reboot, a tmpfs's is its mount's). {0, 0}: not known.
struct FileSystemIdentity {
    std::uint64_t type = 0;
    std::uint64_t id = 0;
    bool known() const { return type != 0 || id != 0; }
    bool operator==(const FileSystemIdentity&) const = default;
};
// The file system of `path`, or of its nearest ancestor that exists (where a file that is not
// there would be). 0 or -errno.
int file_system_at(const std::filesystem::path& path, FileSystemIdentity& out);

// What name_to_handle_at gives for a file: the file system's own name for it, which still finds
// it (open_by_handle_at) after a rename or a move to another directory of that file system, and
// finds nothing once it is deleted. Empty where the file system gives none.
struct FileHandle {
    std::int32_t type = 0;
    std::string bytes;
    bool known() const { return !bytes.empty(); }
    bool operator==(const FileHandle&) const = default;
};

// Bytes `file` can hold on its file system: the free space there plus the blocks the file already
// has (it may not exist yet). Sets `error` and returns 0 when its directory cannot be examined.
std::uint64_t room_for(const std::filesystem::path& file, std::error_code& error);

class File {
public:
    File(int fd, int buffered_fd, FileRole role, std::filesystem::path path,
         std::shared_ptr<IoFaults> faults);
    ~File();
    File(const File&) = delete;
    File& operator=(const File&) = delete;

    // Opens `path`; with direct_io, data IO bypasses the page cache (O_DIRECT) when the file system
    // allows it, and unaligned IO goes through a second, buffered descriptor. Returns nullptr and
    // sets `error` (an errno) on failure.
    static std::unique_ptr<File> open(const std::filesystem::path& path, int flags, mode_t mode,
                                      FileRole role, bool direct_io,
                                      std::shared_ptr<IoFaults> faults, int& error);

    // How a transfer reaches the file: directly (O_DIRECT) when the descriptor has it and the
    // transfer is aligned, else through the page cache; or through the page cache always, as a
    // program's own IO would (the kernel's readahead and write-back merging then apply).
    enum class Path : std::uint8_t { direct_when_aligned, page_cache };

    // Full transfers: loops over short reads/writes; a read stops early only at end of file.
    ssize_t pread(void* buffer, std::size_t count, off_t offset,
                  Path path = Path::direct_when_aligned);
    ssize_t pwrite(const void* buffer, std::size_t count, off_t offset,
                   Path path = Path::direct_when_aligned);
    // One write of `parts`, one after another from `offset` (the engine's write runs): to the
    // fault injector one write of their total size.
    ssize_t pwritev(std::vector<iovec> parts, off_t offset);
    int fdatasync();
    int ftruncate(off_t length);
    // Reserves the blocks of the first `length` bytes (posix_fallocate), so that writes there
    // cannot fail later for want of space. On a file system that cannot reserve, checks room_for
    // instead. -ENOSPC when they do not fit.
    int reserve(off_t length);
    off_t size() const;                             // -errno on failure
    int status(FileStatus& out) const;              // fstat; 0 or -errno
    int file_system(FileSystemIdentity& out) const; // fstatfs; 0 or -errno
    int handle(FileHandle& out) const;              // name_to_handle_at; 0 or -errno
    // Opens the file `handle` names on the file system `file_system`, wherever it is now: the
    // nearest ancestor of `near` that exists and is on that file system is where the kernel looks
    // (open_by_handle_at, which needs CAP_DAC_READ_SEARCH: EPERM without it). The File's path is
    // the one the file has now. Returns nullptr and sets `error` on failure: ESTALE for a file
    // deleted since, EXDEV when no ancestor of `near` is on that file system (not mounted).
    static std::unique_ptr<File> open_by_handle(const FileHandle& handle,
                                                const std::filesystem::path& near,
                                                const FileSystemIdentity& file_system, int flags,
                                                FileRole role, std::shared_ptr<IoFaults> faults,
                                                int& error);
    // Renames the file over `to` (rename(2)); later IO names the file by its new path, also to
    // the fault injector. 0 or -errno.
    int rename_to(const std::filesystem::path& to);

    // The descriptor for io_uring, or -1 when writes must go through pwrite() (fault injection).
    int uring_fd() const;
    bool direct() const { return direct_; }
    FileRole role() const { return role_; }
    const std::filesystem::path& path() const { return path_; }

private:
    bool aligned(const void* buffer, std::size_t count, off_t offset) const;

    int fd_;          // O_DIRECT when direct_
    int buffered_fd_; // == fd_ when not direct
    bool direct_;
    FileRole role_;
    std::filesystem::path path_;
    std::shared_ptr<IoFaults> faults_;
};

// Shared by all files of one engine (and its successor after a simulated crash).
class IoFaults {
public:
    IoFaults() = default;
    // An injector of failures only: crash() throws std::logic_error, and a write costs no copy of
    // the bytes it replaces (kept for crash(); a truncate of a sparse 1 GiB file copies 1 GiB).
    static std::shared_ptr<IoFaults> without_power_cuts();
    // The n-th write (1-based, counted over files of the given roles) fails with EIO, and so does
    // every later write or sync of those roles: the device is gone from that instant.
    void fail_nth_write(std::uint64_t n, std::set<FileRole> roles);
    // The n-th write (counted the same way) fails with EIO, and only that one: the device works
    // again after it (a transient error, as a full device that has room again, or a path that
    // failed over).
    void fail_one_write(std::uint64_t n, std::set<FileRole> roles);
    // Writes and syncs that failed by the calls above.
    std::uint64_t injected_failures() const;
    // Every write and sync of files of these roles fails with EIO from now on (the device is
    // gone), until clear_failures().
    void fail_now(std::set<FileRole> roles);
    void clear_failures();
    // Every write to files of `role` waits this long first (a slow device, to widen race windows).
    void slow_down(FileRole role, std::chrono::microseconds delay);
    std::uint64_t writes(FileRole role) const;
    // The same for reads.
    void slow_down_reads(FileRole role, std::chrono::microseconds delay);
    // Every read of files of these roles fails with EIO (a device that no longer reads), until
    // clear_failures().
    void fail_reads(std::set<FileRole> roles);
    std::uint64_t reads(FileRole role) const;
    // fdatasyncs of files of `role` (each a device cache flush on real hardware).
    std::uint64_t syncs(FileRole role) const;
    // Every fdatasync of files of `role`, once counted, waits until let_syncs_go(): a device
    // whose cache flush takes as long as a test needs.
    void hold_syncs(FileRole role);
    // The same for the fdatasyncs of one file, by the path the engine opened it by: a file that
    // alone sits on a slow device.
    void hold_syncs(const std::filesystem::path& file);
    void let_syncs_go();

    // Simulates a power loss: every write not covered by a later fdatasync of its file is lost or
    // kept, independently per 4 KiB block (probability 1/2, from `seed`), and a file that grew
    // since its last sync may lose a random part of its growth, from a random point to its end, as
    // a log loses the tail of its appends. Affects files written through this object since its
    // creation. And it counts as a new boot for every engine of this process from then on
    // (simulated_power_cuts): recovery then trusts only what was durable.
    void crash(std::uint64_t seed);
    // How many crash() calls this process has made (page_cache_instance mixes it in).
    static std::uint64_t simulated_power_cuts();
    // `from` was renamed over `to` (the journal's rewrite): what was not yet synced of `from` is
    // now `to`'s, and what the replaced file held is gone with it.
    void renamed(const std::filesystem::path& from, const std::filesystem::path& to);

private:
    friend class File;
    struct Undo {
        off_t offset;
        std::vector<char> old_bytes; // what the range held before the write (shorter past end)
    };
    struct Volatile {
        off_t synced_size = -1;
        std::vector<Undo> undo;
    };
    bool keeps_undo_ = true; // false: without_power_cuts()
    // Returns -EIO when the write must fail; otherwise records the undo information.
    int before_write(FileRole role, const std::filesystem::path& path, int buffered_fd,
                     std::size_t count, off_t offset);
    int before_sync(FileRole role, const std::filesystem::path& path);
    int before_read(FileRole role); // -EIO when the read must fail
    void after_sync(const std::filesystem::path& path, int buffered_fd);

    mutable std::mutex mutex_;
    std::map<FileRole, std::uint64_t> writes_;
    std::map<FileRole, std::chrono::microseconds> delay_;
    std::map<FileRole, std::uint64_t> reads_;
    std::map<FileRole, std::uint64_t> syncs_;
    std::set<FileRole> held_syncs_;
    std::set<std::filesystem::path> held_file_syncs_;
    std::condition_variable syncs_let_go_;
    std::map<FileRole, std::chrono::microseconds> read_delay_;
    std::uint64_t counted_ = 0;
    std::uint64_t fail_at_ = 0; // 0 = never
    std::set<FileRole> fail_roles_;
    std::set<FileRole> fail_read_roles_;
    bool failed_ = false;
    bool transient_ = false; // fail_one_write: the device works again after the failed write
    std::uint64_t injected_ = 0;
    std::map<std::filesystem::path, Volatile> volatile_;
};

} // namespace iosig::tier
