// Lowering vm.dirty_bytes / vm.dirty_background_bytes for an experiment, and always restoring them.
//
// The kernel keeps either a byte value or a ratio for each limit (writing one zeroes the other), so
// the previous settings are saved as all four values and restored in the form they had. Restoring
// happens in the destructor, at exit(), and on SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV,
// SIGBUS and SIGFPE (async-signal-safe writes of preformatted values). Against SIGKILL the previous
// settings are also written to a file; the next override (or recover_saved_dirty_settings) restores
// them first. An exclusive lock keeps two overrides of this library from stacking.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace iosig::cachesim {

struct VmDirtySettings {
    std::uint64_t dirty_bytes = 0;            // 0 = the ratio applies
    std::uint64_t dirty_background_bytes = 0; // 0 = the ratio applies
    unsigned dirty_ratio = 0;
    unsigned dirty_background_ratio = 0;

    friend bool operator==(const VmDirtySettings&, const VmDirtySettings&) = default;
};

std::optional<VmDirtySettings> read_vm_dirty_settings(std::string* error = nullptr);
bool write_vm_dirty_settings(const VmDirtySettings& settings, std::string* error = nullptr);

// Where the settings of an active override are saved, and the lock file.
inline constexpr const char* dirty_settings_save_file = "/run/iosig-cachesim-vm-dirty.saved";
inline constexpr const char* dirty_settings_lock_file = "/run/lock/iosig-cachesim-vm-dirty.lock";

class DirtyLimitOverride {
public:
    // Lowers the limits to the given byte values (background < dirty). Null with `error` set when
    // not permitted, when another override holds the lock (waits up to `lock_wait` seconds first)
    // or when the values cannot be written (then nothing is left changed).
    static std::unique_ptr<DirtyLimitOverride> apply(std::uint64_t dirty_bytes,
                                                     std::uint64_t background_bytes,
                                                     std::string* error, double lock_wait = 60);
    ~DirtyLimitOverride();
    DirtyLimitOverride(const DirtyLimitOverride&) = delete;
    DirtyLimitOverride& operator=(const DirtyLimitOverride&) = delete;

    const VmDirtySettings& previous() const { return previous_; }
    // Restores now (idempotent). False if writing failed; the saved file is then kept.
    bool restore(std::string* error = nullptr);

private:
    DirtyLimitOverride(VmDirtySettings previous, int lock_fd);
    VmDirtySettings previous_;
    int lock_fd_;
    bool restored_ = false;
};

// If a saved-settings file from this boot exists (an override was killed), restores those settings
// and removes the file. Returns true when something was restored; `what` describes it.
bool recover_saved_dirty_settings(std::string* what = nullptr);

} // namespace iosig::cachesim
