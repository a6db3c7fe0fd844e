// One seed of the kernel reference on one engine, whole or up to a crash, with its devices
// working or failing now and then (kernel_reference_test.cpp, kernel_reference_faults_test.cpp).
#pragma once

#include "kernel_reference.hpp"
#include "kernel_reference_variants.hpp"

#include <random>
#include <set>
#include <string>

namespace iosig::tier::test_support {

enum class Devices : bool { work, fail_now_and_then };

// What one run counted.
struct RunCounts {
    TierStats stats;                // the engine's, after the last close (whole runs)
    std::uint64_t calls_failed = 0; // calls the devices' failures made fail
    std::uint64_t written_home = 0; // lines recovery wrote home (runs up to a crash)
    std::uint64_t passed_over = 0;  // files compared after the crash: KernelReference::same_files
};

// The device roles that fail now and then (Devices::fail_now_and_then).
inline const std::set<FileRole> failing_roles = {FileRole::home, FileRole::journal,
                                                 FileRole::cache};

// The configuration of `variant`'s engine in `dir`, with faults to inject when its devices fail
// now and then. `every_line_dirty`: so that a crash leaves more of them for recovery.
inline TierConfig reference_config(const ScratchDir& dir, const Variant& variant, Devices devices,
                                   bool every_line_dirty) {
    TierConfig config = small_config(dir);
    variant.configure(config);
    if (every_line_dirty) config.max_dirty_lines = config.cache_size / config.line_size;
    if (devices == Devices::fail_now_and_then) config.faults = IoFaults::without_power_cuts();
    return config;
}

// The engine of `variant` (with every device role failing now and then, or none) and the
// reference on it.
struct ReferenceRun {
    ReferenceRun(const Variant& variant, std::uint64_t seed, Devices devices, bool every_line_dirty)
        : dir(variant.on), config(reference_config(dir, variant, devices, every_line_dirty)) {
        tier = TierCache::open(config);
        reference = std::make_unique<KernelReference>(*tier, dir, config, seed);
        if (devices == Devices::fail_now_and_then)
            reference->fail_devices_at_syncs(config.faults, failing_roles);
    }
    ScratchDir dir;
    TierConfig config;
    std::unique_ptr<TierCache> tier;
    std::unique_ptr<KernelReference> reference; // destroyed before the engine
};

// 1,500 calls, every handle closed (and, where the devices failed, a flush_all once they work,
// for the lines of a close that failed), then the files compared, and again once the engine is
// gone. Every file size is compared after every call. "" or what differed.
inline std::string run_whole(const Variant& variant, std::uint64_t seed, Devices devices,
                             RunCounts& counts) {
    ReferenceRun run(variant, seed, devices, false);
    auto& tier = run.tier;
    KernelReference& reference = *run.reference;
    for (int i = 0; i < 1500; ++i) {
        if (std::string wrong = reference.step(i); !wrong.empty()) return wrong;
        if (std::string wrong = reference.sizes_agree(); !wrong.empty()) return wrong;
    }
    if (std::string wrong = reference.close_all(); !wrong.empty()) return wrong;
    const char* closed = "every handle closed";
    if (devices == Devices::fail_now_and_then) {
        if (const int e = tier->flush_all(); e != 0)
            return "flush_all with the devices working gave " + std::to_string(e);
        closed = "every handle closed and flush_all";
    }
    if (std::string wrong = reference.same_files(closed); !wrong.empty()) return wrong;
    counts.stats = tier->stats();
    counts.calls_failed = reference.calls_failed();
    tier.reset();
    return reference.same_files("the engine gone");
}

// 200 to 1,500 calls (by the seed), then the engine's process crashes (TierCache::abandon: no
// write-back, no close, the journal as it is) and TierCache::recover runs: every file holds what
// the kernel's holds, as a process crash loses no write the kernel took, except one a write
// refused in a failure changed and no sync covered since. "" or what differed.
inline std::string run_through_a_crash(const Variant& variant, std::uint64_t seed, Devices devices,
                                       RunCounts& counts) {
    ReferenceRun run(variant, seed, devices, true);
    auto& tier = run.tier;
    KernelReference& reference = *run.reference;
    const int calls = 200 + static_cast<int>(std::mt19937(static_cast<unsigned>(seed))() % 1300);
    const std::string when = "crash after " + std::to_string(calls) + " calls: ";
    for (int i = 0; i < calls; ++i)
        if (std::string wrong = reference.step(i); !wrong.empty()) return when + wrong;
    counts.calls_failed = reference.calls_failed();
    reference.forget_handles();
    tier->abandon();
    tier.reset();
    const RecoveryReport report = TierCache::recover(run.config.cache_file);
    if (!report.journal_found) return when + "recovery found no journal";
    counts.written_home = report.lines_written_home;
    std::string wrong = reference.same_files("after the crash and recovery", true);
    counts.passed_over = reference.passed_over();
    return wrong.empty() ? "" : when + wrong;
}

} // namespace iosig::tier::test_support
