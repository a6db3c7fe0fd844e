// The kernel reference's failing devices (KernelReference::fail_devices_at_syncs): when a call
// runs while devices fail, what such calls may have left, and what it counts.
#pragma once

#include "iosig/tier/io.hpp"

#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <shared_mutex>
#include <sys/types.h>

namespace iosig::tier::test_support {

class DeviceFailures {
public:
    // From now on the windows fail the files of `roles`.
    void arm(std::shared_ptr<IoFaults> faults, std::set<FileRole> roles) {
        faults_ = std::move(faults);
        roles_ = std::move(roles);
    }

    // Two references on one engine (one thread each) share `gate`: a window waits until the other
    // thread's call has returned, and the other thread's next call waits until the window has
    // ended, so that no call fails by another thread's window and goes unjudged. The window still
    // fails the engine's background work (write-back, the journal's commits) for both threads'
    // files.
    void share_windows(std::shared_ptr<std::shared_mutex> gate) {
        gate_ = std::move(gate);
        in_call_ = std::shared_lock(*gate_, std::defer_lock);
        window_ = std::unique_lock(*gate_, std::defer_lock);
    }
    // Held by the reference while it makes one call both ways (no window of another thread
    // meanwhile).
    class Call {
    public:
        explicit Call(DeviceFailures& failures) : failures_(failures) {
            if (failures_.gate_) failures_.in_call_.lock();
        }
        ~Call() {
            if (failures_.in_call_.owns_lock()) failures_.in_call_.unlock();
        }
        Call(const Call&) = delete;
        Call& operator=(const Call&) = delete;

    private:
        DeviceFailures& failures_;
    };

    // Starts a window of failing devices, once armed: for a sync, close, flush_all or commit one
    // time in three (every role fails), for a read, write, append or truncate (`data_call`) one
    // time in four (a random part of the roles, reads too half the time).
    bool start(std::mt19937_64& rng, bool data_call) {
        if (!faults_ || rng() % (data_call ? 4 : 3) != 0) return false;
        if (gate_) { // the other thread's call returns first
            in_call_.unlock();
            window_.lock();
        }
        std::set<FileRole> roles = roles_;
        if (data_call) {
            const unsigned keep = 1 + static_cast<unsigned>(rng() % 7);
            int bit = 0;
            std::erase_if(roles, [&](FileRole) { return (keep >> bit++ & 1) == 0; });
        }
        faults_->fail_now(roles);
        if (data_call && rng() % 2 == 0) faults_->fail_reads(roles);
        return true;
    }
    // Ends it; true when the call the window covered failed as a failure allows (`failed`).
    bool end(bool failing, bool failed) {
        if (!failing) return false;
        faults_->clear_failures();
        if (gate_) {
            window_.unlock();
            in_call_.lock();
        }
        if (failed) ++calls_failed_;
        return failed;
    }
    std::uint64_t calls_failed() const { return calls_failed_; }

    // A close failed: its file's lines wait in the engine until a flush_all.
    void close_failed() { close_unsettled_ = true; }
    bool close_unsettled() const { return close_unsettled_; }
    // A refused write changed what the engine shows of `file`: a crash before its next sync may
    // lose that.
    void changed_unsynced(ino_t file) { unsure_at_crash_.insert(file); }
    void synced(ino_t file) { unsure_at_crash_.erase(file); }
    // A flush_all succeeded: every file is home.
    void all_synced() {
        close_unsettled_ = false;
        unsure_at_crash_.clear();
    }
    bool unsure(ino_t file) const { return unsure_at_crash_.contains(file); }

private:
    std::shared_ptr<IoFaults> faults_;
    std::set<FileRole> roles_;
    std::shared_ptr<std::shared_mutex> gate_; // shared with the other thread's reference, if any
    std::shared_lock<std::shared_mutex> in_call_;
    std::unique_lock<std::shared_mutex> window_;
    std::uint64_t calls_failed_ = 0;
    bool close_unsettled_ = false;    // a close failed, and no flush_all has succeeded since
    std::set<ino_t> unsure_at_crash_; // files a failed write changed, not synced since
};

} // namespace iosig::tier::test_support
