// Real files for the finalize tests: a temporary directory, a private tmpfs mount (a second file
// system, so that finalize must copy rather than rename), and a redirected file set up exactly as
// the shim leaves it (data in staging, symlink at the original path, a `redirect` record in the
// journal).
#pragma once

#include "tools/job_journal.hpp"

#include <cstdint>
#include <filesystem>
#include <string>

namespace iosig::preload::testing {

class ScratchDir {
public:
    ScratchDir();
    ~ScratchDir();
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

// A tmpfs of `size` mounted on a fresh directory, unmounted on destruction. `error` is set (and
// mounted() false) when mounting is impossible (not root, no CAP_SYS_ADMIN).
class TmpfsMount {
public:
    TmpfsMount(const std::filesystem::path& where, const std::string& size);
    ~TmpfsMount();
    TmpfsMount(const TmpfsMount&) = delete;
    TmpfsMount& operator=(const TmpfsMount&) = delete;
    bool mounted() const { return mounted_; }
    const std::string& error() const { return error_; }
    // Mounting is not allowed here (not root, or EPERM: a container without CAP_SYS_ADMIN).
    bool not_permitted() const { return not_permitted_; }
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
    bool mounted_ = false;
    bool not_permitted_ = false;
    std::string error_;
};

std::string pseudo_random_bytes(std::size_t size, std::uint64_t seed);
void write_file(const std::filesystem::path& path, const std::string& bytes);
std::string read_file(const std::filesystem::path& path);
bool symlink_at(const std::filesystem::path& path);
bool regular_file_at(const std::filesystem::path& path);

struct Planted {
    std::string original;
    std::string staged;
};

// One file as the shim leaves it while the program runs: `bytes` in
// <staging_mount>/.iosig-<uid>/<job>/<name>, a symlink at `original`, a `redirect` record in the
// job's journal (state directory `state`, run `run`).
Planted plant_redirection(const std::string& state, const std::string& job, const std::string& run,
                          const std::filesystem::path& staging_mount,
                          const std::filesystem::path& original, const std::string& bytes,
                          const std::string& persistence, bool global = false,
                          bool keep_global = false);

void journal_run_begin(const std::string& state, const std::string& job, const std::string& run);
void journal_run_end(const std::string& state, const std::string& job, const std::string& run,
                     int status);
void journal_record(const std::string& state, const std::string& job, const std::string& run,
                    RecordType type, const std::vector<std::string>& fields);

} // namespace iosig::preload::testing
