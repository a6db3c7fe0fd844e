// A loop device of a test's own over a sparse image in the temp directory, detached and removed
// when it goes. Attaching needs root and a free loop device: path() is empty when it failed, and
// the test skips with image() named.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace iosig::tier::test_support {

class LoopDevice {
public:
    LoopDevice(const std::string& tag, std::uint64_t bytes) {
        image_ = std::filesystem::temp_directory_path() /
                 ("iosig-" + tag + "-" + std::to_string(::getpid()) + ".img");
        std::ofstream(image_).close();
        std::filesystem::resize_file(image_, bytes);
        const std::filesystem::path out = image_.string() + ".dev";
        const std::string attach =
            "losetup -f --show " + image_.string() + " > " + out.string() + " 2>/dev/null";
        if (std::system(attach.c_str()) == 0) std::ifstream(out) >> path_;
        std::filesystem::remove(out);
    }
    ~LoopDevice() {
        if (!path_.empty()) run("losetup -d " + path_);
        std::filesystem::remove(image_);
    }
    LoopDevice(const LoopDevice&) = delete;
    LoopDevice& operator=(const LoopDevice&) = delete;

    const std::string& path() const { return path_; } // /dev/loopN; empty when not attached
    std::string name() const { return std::filesystem::path(path_).filename().string(); }
    std::string image() const { return image_.string(); }

    // `blockdev --setra` in 512-byte sectors; false when it failed.
    bool set_readahead(std::uint64_t bytes) const {
        return run("blockdev --setra " + std::to_string(bytes / 512) + " " + path_);
    }

    static bool run(const std::string& command) {
        return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
    }

private:
    std::filesystem::path image_;
    std::string path_;
};

} // namespace iosig::tier::test_support
