// Which page cache a file's unsynced writes live in: the kernel's boot and the mount of the file's
// file system. Recovery compares the one a journal was written under with its own: the same one
// means only the process crashed, and every record the journal holds is backed by the cache
// file's pages; another means the power was cut (or the machine rebooted, or the file system was
// unmounted uncleanly), and only what was durable survived (docs/tier.md, "The journal and crash
// recovery").
#pragma once

#include <cstdint>
#include <filesystem>

namespace iosig::tier::detail {

// A hash of /proc/sys/kernel/random/boot_id, the mount id of `path`'s file system (statx) and
// IoFaults::simulated_power_cuts(); 0 when the boot id cannot be read (then every recovery takes
// the crash for a power cut).
std::uint64_t page_cache_instance(const std::filesystem::path& path);

} // namespace iosig::tier::detail
