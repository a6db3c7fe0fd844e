#include "scratch.hpp"

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

namespace iosig::calibrate {
namespace {

// Fixed storage: the signal handler may only touch memory that is never reallocated.
constexpr int max_files = 64;
constexpr std::size_t max_path = 4096;
std::array<std::array<char, max_path>, max_files> paths;
// 0 free, 1 claimed (path being written), 2 registered (the handler may unlink it)
std::array<std::atomic<int>, max_files> state;
std::atomic<int> signals_seen{0};
std::atomic<unsigned> counter{0};

void on_signal(int signal_number) {
    if (signals_seen.fetch_add(1) == 0) return; // first: let the loops unwind cleanly
    for (int i = 0; i < max_files; ++i)
        if (state[i].load() == 2) unlink(paths[i].data());
    _exit(128 + signal_number);
}

int register_path(const std::string& path) {
    if (path.size() + 1 > max_path) return -1;
    for (int i = 0; i < max_files; ++i) {
        int expected = 0;
        if (state[i].compare_exchange_strong(expected, 1)) {
            std::memcpy(paths[i].data(), path.c_str(), path.size() + 1);
            state[i].store(2);
            return i;
        }
    }
    return -1;
}

} // namespace

void install_interrupt_handlers() {
    struct sigaction sa{};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int s : {SIGINT, SIGTERM, SIGHUP})
        sigaction(s, &sa, nullptr);
}

bool interrupted() {
    return signals_seen.load() > 0;
}

std::size_t registered_scratch_files() {
    std::size_t n = 0;
    for (const auto& u : state)
        n += u.load() == 2 ? 1 : 0;
    return n;
}

ScratchFile::ScratchFile(const std::string& directory, const std::string& tag, int extra_flags) {
    path_ =
        fmt::format("{}/.iosig-calibrate-{}-{}-{}", directory, getpid(), counter.fetch_add(1), tag);
    slot_ = register_path(path_);
    if (slot_ < 0) throw std::runtime_error("too many scratch files");
    fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | extra_flags, 0600);
    if (fd_ < 0 && (extra_flags & O_DIRECT) != 0 && errno == EINVAL)
        fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | (extra_flags & ~O_DIRECT),
                   0600);
    if (fd_ < 0) {
        const int e = errno;
        state[slot_].store(0);
        throw std::runtime_error(
            fmt::format("cannot create scratch file {}: {}", path_, std::strerror(e)));
    }
}

ScratchFile::~ScratchFile() {
    if (fd_ >= 0) close(fd_);
    unlink(path_.c_str());
    state[slot_].store(0);
}

} // namespace iosig::calibrate
