// Scratch files: every file the calibrator creates is registered here and removed when it is done,
// on an error, and on Ctrl-C (SIGINT/SIGTERM/SIGHUP). The first signal sets a flag that the
// measurement loops poll (they then unwind and remove their files); a second signal removes the
// registered files from the handler itself and exits.
#pragma once

#include <stdexcept>
#include <string>

namespace iosig::calibrate {

struct Interrupted : std::runtime_error {
    Interrupted() : std::runtime_error("interrupted") {}
};

void install_interrupt_handlers();
bool interrupted();
inline void throw_if_interrupted() {
    if (interrupted()) throw Interrupted();
}

// An open scratch file; removed by the destructor. Opening with O_DIRECT falls back to a buffered
// descriptor when the file system refuses it.
class ScratchFile {
public:
    // Creates a new file in `directory` named .iosig-calibrate-<pid>-<n>-<tag>.
    ScratchFile(const std::string& directory, const std::string& tag, int extra_flags);
    ~ScratchFile();
    ScratchFile(const ScratchFile&) = delete;
    ScratchFile& operator=(const ScratchFile&) = delete;

    int fd() const { return fd_; }
    const std::string& path() const { return path_; }

private:
    std::string path_;
    int fd_ = -1;
    int slot_ = -1;
};

// Names of scratch files currently registered (for tests and the progress display).
std::size_t registered_scratch_files();

} // namespace iosig::calibrate
