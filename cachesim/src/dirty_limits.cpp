// Lowering and restoring vm.dirty_* (see dirty_limits.hpp for the guarantees).
#include "iosig/cachesim/dirty_limits.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/file.h>
#include <thread>
#include <unistd.h>

namespace iosig::cachesim {
namespace {

constexpr const char* vm_dirty_bytes = "/proc/sys/vm/dirty_bytes";
constexpr const char* vm_dirty_background_bytes = "/proc/sys/vm/dirty_background_bytes";
constexpr const char* vm_dirty_ratio = "/proc/sys/vm/dirty_ratio";
constexpr const char* vm_dirty_background_ratio = "/proc/sys/vm/dirty_background_ratio";

std::optional<std::uint64_t> read_value(const char* file) {
    std::ifstream in(file);
    std::uint64_t value = 0;
    if (!(in >> value)) return std::nullopt;
    return value;
}

bool write_value(const char* file, std::uint64_t value, std::string* error) {
    const int fd = ::open(file, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        if (error) *error = fmt::format("{}: {}", file, std::strerror(errno));
        return false;
    }
    const std::string text = std::to_string(value);
    const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    if (!ok && error) *error = fmt::format("{}: {}", file, std::strerror(errno));
    ::close(fd);
    return ok;
}

std::string boot_id() {
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string id;
    in >> id;
    return id;
}

// --- what the signal handlers restore: preformatted, written with async-signal-safe calls --------

struct Preformatted {
    const char* file = nullptr;
    char text[32] = {};
    std::size_t length = 0;
};
Preformatted pending[2];
volatile sig_atomic_t pending_active = 0;
pid_t pending_owner = 0;

void restore_from_handler() {
    if (!pending_active || ::getpid() != pending_owner) return;
    for (const Preformatted& p : pending) {
        const int fd = ::open(p.file, O_WRONLY | O_CLOEXEC);
        if (fd < 0) continue;
        [[maybe_unused]] const ssize_t n = ::write(fd, p.text, p.length);
        ::close(fd);
    }
    ::unlink(dirty_settings_save_file);
    pending_active = 0;
}

const int guarded_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV, SIGBUS, SIGFPE};
struct sigaction previous_actions[std::size(guarded_signals)];
bool handlers_installed = false;

void on_fatal_signal(int signal) {
    restore_from_handler();
    // Hand the signal on as it would have been without us.
    for (std::size_t i = 0; i < std::size(guarded_signals); ++i)
        if (guarded_signals[i] == signal) ::sigaction(signal, &previous_actions[i], nullptr);
    ::raise(signal);
}

void install_handlers() {
    if (handlers_installed) return;
    handlers_installed = true;
    for (std::size_t i = 0; i < std::size(guarded_signals); ++i) {
        struct sigaction action{};
        action.sa_handler = on_fatal_signal;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_RESETHAND;
        ::sigaction(guarded_signals[i], &action, &previous_actions[i]);
    }
    std::atexit(restore_from_handler);
}

void uninstall_handlers() {
    if (!handlers_installed) return;
    for (std::size_t i = 0; i < std::size(guarded_signals); ++i)
        ::sigaction(guarded_signals[i], &previous_actions[i], nullptr);
    handlers_installed = false; // the atexit hook stays but finds nothing pending
}

// Restoring a limit means writing its byte value when it was set, else its ratio.
void prepare(const VmDirtySettings& s) {
    auto fill = [](Preformatted& p, const char* file, std::uint64_t value) {
        p.file = file;
        const int n =
            std::snprintf(p.text, sizeof(p.text), "%llu", static_cast<unsigned long long>(value));
        p.length = n > 0 ? static_cast<std::size_t>(n) : 0;
    };
    // Background first: the kernel accepts any order, but this keeps bg < hard at every step when
    // the previous values were ratios.
    if (s.dirty_background_bytes)
        fill(pending[0], vm_dirty_background_bytes, s.dirty_background_bytes);
    else
        fill(pending[0], vm_dirty_background_ratio, s.dirty_background_ratio);
    if (s.dirty_bytes)
        fill(pending[1], vm_dirty_bytes, s.dirty_bytes);
    else
        fill(pending[1], vm_dirty_ratio, s.dirty_ratio);
    pending_owner = ::getpid();
    pending_active = 1;
}

bool save_to_file(const VmDirtySettings& s, std::string* error) {
    const std::string tmp = std::string(dirty_settings_save_file) + ".tmp";
    {
        std::ofstream out(tmp, std::ios::trunc);
        out << "boot_id " << boot_id() << "\n"
            << "dirty_bytes " << s.dirty_bytes << "\n"
            << "dirty_background_bytes " << s.dirty_background_bytes << "\n"
            << "dirty_ratio " << s.dirty_ratio << "\n"
            << "dirty_background_ratio " << s.dirty_background_ratio << "\n";
        if (!out.flush()) {
            if (error) *error = fmt::format("{}: cannot write", tmp);
            return false;
        }
    }
    if (std::rename(tmp.c_str(), dirty_settings_save_file) != 0) {
        if (error) *error = fmt::format("{}: {}", dirty_settings_save_file, std::strerror(errno));
        return false;
    }
    return true;
}

int take_lock(double wait_seconds, std::string* error) {
    const int fd = ::open(dirty_settings_lock_file, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        if (error) *error = fmt::format("{}: {}", dirty_settings_lock_file, std::strerror(errno));
        return -1;
    }
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_seconds);
    while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (std::chrono::steady_clock::now() >= deadline) {
            if (error)
                *error = fmt::format("another process holds {} (it is lowering vm.dirty_* itself)",
                                     dirty_settings_lock_file);
            ::close(fd);
            return -1;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return fd;
}

} // namespace

std::optional<VmDirtySettings> read_vm_dirty_settings(std::string* error) {
    const auto bytes = read_value(vm_dirty_bytes);
    const auto bg_bytes = read_value(vm_dirty_background_bytes);
    const auto ratio = read_value(vm_dirty_ratio);
    const auto bg_ratio = read_value(vm_dirty_background_ratio);
    if (!bytes || !bg_bytes || !ratio || !bg_ratio) {
        if (error)
            *error =
                "cannot read /proc/sys/vm/dirty_{bytes,background_bytes,ratio,background_ratio}";
        return std::nullopt;
    }
    return VmDirtySettings{*bytes, *bg_bytes, static_cast<unsigned>(*ratio),
                           static_cast<unsigned>(*bg_ratio)};
}

bool write_vm_dirty_settings(const VmDirtySettings& s, std::string* error) {
    bool ok = true;
    if (s.dirty_background_bytes)
        ok &= write_value(vm_dirty_background_bytes, s.dirty_background_bytes, error);
    else
        ok &= write_value(vm_dirty_background_ratio, s.dirty_background_ratio, error);
    if (s.dirty_bytes)
        ok &= write_value(vm_dirty_bytes, s.dirty_bytes, error);
    else
        ok &= write_value(vm_dirty_ratio, s.dirty_ratio, error);
    return ok;
}

bool recover_saved_dirty_settings(std::string* what) {
    std::ifstream in(dirty_settings_save_file);
    if (!in) return false;
    std::map<std::string, std::string> values;
    std::string key, value;
    while (in >> key >> value)
        values[key] = value;
    in.close();
    if (values["boot_id"] != boot_id()) { // settings of a previous boot: the reboot reset them
        ::unlink(dirty_settings_save_file);
        return false;
    }
    VmDirtySettings s;
    try {
        s.dirty_bytes = std::stoull(values.at("dirty_bytes"));
        s.dirty_background_bytes = std::stoull(values.at("dirty_background_bytes"));
        s.dirty_ratio = static_cast<unsigned>(std::stoul(values.at("dirty_ratio")));
        s.dirty_background_ratio =
            static_cast<unsigned>(std::stoul(values.at("dirty_background_ratio")));
    } catch (const std::exception&) {
        if (what)
            *what = fmt::format("{} is unreadable; vm.dirty_* left as they are",
                                dirty_settings_save_file);
        return false;
    }
    std::string error;
    if (!write_vm_dirty_settings(s, &error)) {
        if (what) *what = fmt::format("restoring the saved vm.dirty_* failed: {}", error);
        return false;
    }
    ::unlink(dirty_settings_save_file);
    if (what)
        *what = fmt::format(
            "restored vm.dirty_* left lowered by an interrupted run (dirty_bytes {}, "
            "dirty_background_bytes {}, dirty_ratio {}, dirty_background_ratio {})",
            s.dirty_bytes, s.dirty_background_bytes, s.dirty_ratio, s.dirty_background_ratio);
    return true;
}

std::unique_ptr<DirtyLimitOverride> DirtyLimitOverride::apply(std::uint64_t dirty_bytes,
                                                              std::uint64_t background_bytes,
                                                              std::string* error,
                                                              double lock_wait) {
    if (background_bytes == 0 || dirty_bytes <= background_bytes) {
        if (error) *error = "the background limit must be positive and below the dirty limit";
        return nullptr;
    }
    const int lock = take_lock(lock_wait, error);
    if (lock < 0) return nullptr;
    recover_saved_dirty_settings(); // a killed run of ours: its saved values are the real ones
    const auto previous = read_vm_dirty_settings(error);
    if (!previous || !save_to_file(*previous, error)) {
        ::close(lock);
        return nullptr;
    }
    std::unique_ptr<DirtyLimitOverride> guard(new DirtyLimitOverride(*previous, lock));
    prepare(*previous);
    install_handlers();
    // Lower the hard limit last: a moment with the old hard and the new background limit is
    // harmless.
    std::string why;
    if (!write_value(vm_dirty_background_bytes, background_bytes, &why) ||
        !write_value(vm_dirty_bytes, dirty_bytes, &why)) {
        if (error) *error = fmt::format("lowering vm.dirty_*: {}", why);
        guard->restore();
        return nullptr;
    }
    return guard;
}

DirtyLimitOverride::DirtyLimitOverride(VmDirtySettings previous, int lock_fd)
    : previous_(previous), lock_fd_(lock_fd) {}

DirtyLimitOverride::~DirtyLimitOverride() {
    restore();
}

bool DirtyLimitOverride::restore(std::string* error) {
    if (restored_) return true;
    std::string why;
    const bool ok = write_vm_dirty_settings(previous_, &why);
    if (!ok) {
        if (error) *error = why;
        std::fprintf(stderr, "iosig cachesim: could not restore vm.dirty_*: %s (saved in %s)\n",
                     why.c_str(), dirty_settings_save_file);
        return false;
    }
    pending_active = 0;
    uninstall_handlers();
    ::unlink(dirty_settings_save_file);
    restored_ = true;
    if (lock_fd_ >= 0) ::close(lock_fd_);
    lock_fd_ = -1;
    return true;
}

} // namespace iosig::cachesim
