// The per-line data lock: many readers or one writer, as std::shared_mutex, in 4 bytes.
//
// The engine keeps one lock per cache line, so its size is paid per line: std::shared_mutex is a
// pthread_rwlock_t, 56 bytes, more than half of a line's other metadata, and on a 1 TiB cache of
// 64 KiB lines 0.9 GiB of RAM. The state word holds the writer bit and the reader count; a thread
// that cannot take the lock sleeps on the word (std::atomic::wait, a futex on Linux) until an
// unlock changes it. Like glibc's default rwlock, readers are not held back by a waiting writer:
// line reads are one pread each, and the engine's writers (fills, writes, truncation) wait for
// the readers already in.
#pragma once

#include <atomic>
#include <cstdint>

namespace iosig::tier::detail {

class LineLock {
public:
    void lock_shared() noexcept {
        std::uint32_t state = state_.load(std::memory_order_relaxed);
        for (;;) {
            if (state & writer) {
                state_.wait(state, std::memory_order_relaxed);
                state = state_.load(std::memory_order_relaxed);
            } else if (state_.compare_exchange_weak(state, state + 1, std::memory_order_acquire,
                                                    std::memory_order_relaxed)) {
                return;
            }
        }
    }

    void unlock_shared() noexcept {
        // The last reader out wakes a writer waiting for the count to reach 0.
        if (state_.fetch_sub(1, std::memory_order_release) == 1) state_.notify_all();
    }

    void lock() noexcept {
        std::uint32_t state = 0;
        while (!state_.compare_exchange_weak(state, writer, std::memory_order_acquire,
                                             std::memory_order_relaxed)) {
            if (state != 0) state_.wait(state, std::memory_order_relaxed);
            state = 0;
        }
    }

    bool try_lock() noexcept {
        std::uint32_t state = 0;
        return state_.compare_exchange_strong(state, writer, std::memory_order_acquire,
                                              std::memory_order_relaxed);
    }

    void unlock() noexcept {
        state_.store(0, std::memory_order_release);
        state_.notify_all();
    }

private:
    static constexpr std::uint32_t writer = std::uint32_t{1} << 31;
    std::atomic<std::uint32_t> state_{0};
};

static_assert(sizeof(LineLock) == 4);

} // namespace iosig::tier::detail
