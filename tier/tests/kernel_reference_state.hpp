// The kernel reference's state (kernel_reference.hpp): its files in two directories, the open
// handles each way, the failure windows, and the comparisons and choices its calls share.
#pragma once

#include "device_failures.hpp"
#include "engine_fixture.hpp"
#include "kernel_files.hpp"

#include <cstdio>
#include <fcntl.h>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <shared_mutex>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace iosig::tier::test_support {

// The file names each reference uses: a, b, c, d.
constexpr int reference_names = 4;

class KernelReferenceState {
public:
    // The engine's files in <dir>/engine<tag>, the kernel's in <dir>/kernel<tag>: references with
    // tags of their own keep to files of their own, on one engine, from threads of their own.
    KernelReferenceState(TierCache& tier, const ScratchDir& dir, const TierConfig& config,
                         std::uint64_t seed, const std::string& tag = "")
        : tier_(tier), line_(config.line_size), file_ids_(config.file_ids), rng_(seed),
          engine_dir_(dir / ("engine" + tag)), kernel_dir_(dir / ("kernel" + tag)) {
        std::filesystem::create_directories(engine_dir_);
        std::filesystem::create_directories(kernel_dir_);
    }
    KernelReferenceState(const KernelReferenceState&) = delete;
    KernelReferenceState& operator=(const KernelReferenceState&) = delete;
    ~KernelReferenceState() { forget_handles(); }

    // "" when every open handle's file has the kernel's file's size.
    std::string sizes_agree() const {
        for (const Open& o : open_) {
            struct stat st{};
            ::fstat(o.fd, &st);
            if (const off_t engine = tier_.file_size(o.handle); engine != st.st_size)
                return fmt("after it, the engine's size is %lld, the kernel's %lld (flags %#o)",
                           static_cast<long long>(engine), static_cast<long long>(st.st_size),
                           o.flags);
        }
        return "";
    }

    // The engine crashed (TierCache::abandon): its handles are gone, and the kernel's descriptors
    // are closed (a process crash closes them; the kernel's files keep every write).
    void forget_handles() {
        for (const Open& o : open_)
            ::close(o.fd);
        open_.clear();
    }

    // From now on, one sync, close, flush_all or commit in three runs while the files of `roles`
    // fail every write and sync (IoFaults::fail_now; the engine's TierConfig::faults), and the
    // devices work again once it returns: transient errors. So do one read, write, append or
    // truncate in four (through a handle that may read, which shows what a failed write left), with
    // a random part of `roles` failing, reads too half the time, and so does one open that cuts an
    // existing file (O_TRUNC). Such a call may fail with EIO where the kernel's succeeds, or
    // transfer fewer bytes; a write, truncate or cutting open that fails may have changed its range
    // or the size as far as it asked, and the kernel's file is made to hold what the engine then
    // shows. Every other call still gives the kernel's result.
    // With another thread's reference on the same engine, both pass the same `gate`
    // (DeviceFailures::share_windows).
    void fail_devices_at_syncs(std::shared_ptr<IoFaults> faults, std::set<FileRole> roles,
                               std::shared_ptr<std::shared_mutex> gate = nullptr) {
        failures_.arm(std::move(faults), std::move(roles));
        if (gate) failures_.share_windows(std::move(gate));
    }
    // Files same_files passed over after a crash.
    std::uint64_t passed_over() const { return passed_over_; }
    // Calls that failed in such a window.
    std::uint64_t calls_failed() const { return failures_.calls_failed(); }

    // "" when every name leads to the same bytes in both directories (or to nothing in both).
    // After a crash (`after_crash`), a file a failed write changed in the engine and no sync has
    // made durable since is passed over: that write was refused, and a crash may lose what it
    // left (the bytes beyond a size, or a part, the journal refused to record).
    std::string same_files(const char* when, bool after_crash = false) {
        for (int n = 0; n < reference_names; ++n) {
            if (after_crash)
                if (const std::optional<ino_t> file = kernel_file_at(n);
                    file && failures_.unsure(*file)) {
                    ++passed_over_;
                    continue;
                }
            const auto engine = engine_dir_ / name(n), kernel = kernel_dir_ / name(n);
            // Through links; a loop of links, or one that leads nowhere, is no file.
            std::error_code ignored;
            const bool at_home = std::filesystem::exists(engine, ignored),
                       at_kernel = std::filesystem::exists(kernel, ignored);
            if (at_home != at_kernel)
                return fmt("%s: %s exists only in one directory", when, name(n).c_str());
            if (!at_kernel) continue;
            if (const long long at = first_difference(engine, kernel); at >= 0)
                return fmt("%s: %s differs from byte %lld (%lld bytes at home, %lld in the "
                           "kernel's file)",
                           when, name(n).c_str(), at, size_at(engine), size_at(kernel));
        }
        return "";
    }

protected:
    struct Open {
        int handle, fd, flags;
        ino_t file;         // which file: the kernel's file's inode (names and links lead to it)
        long long next = 0; // where the handle's last read or write ended: a stream goes on there
    };

    // The kernel's file a name leads to now (through links): its inode, or none.
    std::optional<ino_t> kernel_file_at(int n) const {
        struct stat st{};
        if (::stat((kernel_dir_ / name(n)).c_str(), &st) != 0) return std::nullopt;
        return st.st_ino;
    }

    static std::string name(int n) { return std::string(1, static_cast<char>('a' + n)); }

    std::string fmt(const char* text) const {
        return "call " + std::to_string(step_) + ": " + text;
    }
    template <typename... Args>
    std::string fmt(const char* format, Args... args) const {
        char text[512];
        std::snprintf(text, sizeof text, format, args...);
        return "call " + std::to_string(step_) + ": " + text;
    }

    static bool may_read(const Open& o) { return (o.flags & O_ACCMODE) != O_WRONLY; }
    std::string compare(const char* call, const Open& o, long long engine, long long kernel,
                        long long offset = 0, std::uint64_t count = 0) {
        if (engine == kernel) return "";
        return fmt("%s(flags %#o, offset %lld, count %llu) gave %lld through the engine, %lld from "
                   "the kernel",
                   call, o.flags, offset, static_cast<unsigned long long>(count), engine, kernel);
    }

    // Half the time where the handle's last read or write ended (streams, which the prefetcher
    // and the sequential bypass follow); else mostly near the file's end (inside, across, a little
    // past; a line's start one time in four), sometimes far out (a sparse file), sometimes
    // negative.
    long long offset_for(const Open& o) {
        struct stat st{};
        ::fstat(o.fd, &st);
        const unsigned pick = rng_() % 80;
        if (pick < 40) return o.next;
        if (pick == 40) return -static_cast<long long>(rng_() % 5000) - 1;
        if (pick == 41) return (1ll << 30) + static_cast<long long>(rng_() % (3 * line_));
        const std::uint64_t span = static_cast<std::uint64_t>(st.st_size) + 2 * line_ + 1;
        const auto offset = static_cast<long long>(rng_() % span);
        return pick < 50 ? offset / static_cast<long long>(line_) * static_cast<long long>(line_)
                         : offset;
    }
    // Whole lines one time in five (a write of a whole line needs no fill).
    std::uint64_t count_for() {
        const unsigned pick = rng_() % 10;
        if (pick == 0) return 0;
        if (pick < 3) return line_ * (1 + rng_() % 2);
        if (pick < 5) return 1 + rng_() % 64;
        return 1 + rng_() % (3 * line_);
    }
    std::vector<char> bytes(std::uint64_t count) {
        std::vector<char> data(count);
        const char fill = static_cast<char>(1 + rng_() % 255);
        for (std::uint64_t i = 0; i < count; ++i)
            data[i] = static_cast<char>(fill + i % 7);
        return data;
    }

    TierCache& tier_;
    std::uint64_t line_;
    std::uint32_t file_ids_;
    std::mt19937_64 rng_;
    std::filesystem::path engine_dir_, kernel_dir_;
    std::vector<Open> open_;
    int step_ = 0;
    DeviceFailures failures_;
    std::uint64_t passed_over_ = 0;
};

} // namespace iosig::tier::test_support
