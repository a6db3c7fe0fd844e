// A file's byte ranges, held shared (reads) or exclusively (writes, truncates) for a whole call,
// so that each call is one step for the others on the same bytes (POSIX XSH 2.9.7; the kernel
// gives writers as much with the inode lock). The per-line data locks alone let two writes of
// several lines interleave line by line and a read return half of a write.
//
// Requests are granted in arrival order: one waits for every earlier request it overlaps, unless
// both are shared. So a writer is not starved by a stream of readers, and as no request waits for
// a later one, no two wait for each other. Calls on disjoint ranges never wait here. The requests
// in flight are few (one per thread in a call), so a list does; its nodes are the holds
// themselves, on their callers' stacks, so that a call allocates nothing.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace iosig::tier::detail {

class RangeLock {
public:
    // [begin, end) of the file, held from construction (which waits for it) to destruction.
    class Hold {
    public:
        Hold(RangeLock& owner, std::int64_t begin, std::int64_t end, bool exclusive);
        ~Hold();
        Hold(const Hold&) = delete;
        Hold& operator=(const Hold&) = delete;

    private:
        friend class RangeLock;
        bool conflicts_with(const Hold& other) const {
            return (exclusive_ || other.exclusive_) && other.begin_ < end_ && begin_ < other.end_;
        }

        RangeLock& owner_;
        std::int64_t begin_, end_;
        bool exclusive_;
        Hold* previous_ = nullptr; // arrival order
        Hold* next_ = nullptr;
    };

private:
    std::mutex mutex_;
    std::condition_variable released_;
    Hold* first_ = nullptr; // held and waiting, in arrival order
    Hold* last_ = nullptr;
};

} // namespace iosig::tier::detail
