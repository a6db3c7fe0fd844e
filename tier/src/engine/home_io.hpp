// A home file's descriptors (HomeFile::io in engine_impl.hpp), which calls use without a lock, and
// their release while the file is idle (Engine::release_idle_files).
#pragma once

#include "iosig/tier/io.hpp"

#include <atomic>
#include <memory>
#include <vector>

namespace iosig::tier::detail {

// Calls through a handle of the file use it as a File*: while a handle is open the descriptors
// stay. The first handle that writes a file the engine opened to read only brings a descriptor
// that writes; calls through the other handles may be using the old one meanwhile, so it stays
// open (owned here) until the file is released: before session 32 it was closed under them
// (FileIdentity.AFileOpenedForWritingWhileItIsReadLosesNoRead).
//
// A file no handle has open may be released (its descriptors closed) so that an engine serving
// many files one after another holds few descriptors. Work on such a file that holds no handle
// (the prefetch worker finishing a file's queued lines, flush_all's sync) goes through a Use,
// which the release waits for by giving up: try_close() closes nothing while a Use is alive.
class HomeIo {
public:
    File* operator->() const { return current_.load(std::memory_order_acquire); }
    File* get() const { return current_.load(std::memory_order_acquire); }

    // With files_mutex_ held exclusively: `next` becomes the descriptor calls use.
    void use(std::unique_ptr<File> next) {
        File* raw = next.get();
        owned_.push_back(std::move(next));
        current_.store(raw, std::memory_order_seq_cst);
    }

    // With files_mutex_ held exclusively and no handle of the file open: closes every descriptor
    // unless a Use holds one; then nothing changes and it returns false.
    bool try_close() {
        File* const was = current_.exchange(nullptr, std::memory_order_seq_cst);
        // Dekker's handshake with Use: a Use announces itself and then reads current_, a release
        // clears current_ and then reads the announcements (both sequentially consistent), so
        // either the Use sees no descriptor or the release sees the Use.
        if (users_.load(std::memory_order_seq_cst) != 0) {
            current_.store(was, std::memory_order_seq_cst);
            return false;
        }
        owned_.clear();
        return true;
    }

    // The descriptor for work that holds no handle of the file: null once it is released.
    class Use {
    public:
        explicit Use(HomeIo& io) : io_(io) {
            io_.users_.fetch_add(1, std::memory_order_seq_cst);
            file_ = io_.current_.load(std::memory_order_seq_cst);
        }
        ~Use() { io_.users_.fetch_sub(1, std::memory_order_seq_cst); }
        Use(const Use&) = delete;
        Use& operator=(const Use&) = delete;
        File* operator->() const { return file_; }
        explicit operator bool() const { return file_ != nullptr; }

    private:
        HomeIo& io_;
        File* file_ = nullptr;
    };

private:
    std::atomic<File*> current_{nullptr};
    std::atomic<int> users_{0};
    std::vector<std::unique_ptr<File>> owned_;
};

} // namespace iosig::tier::detail
