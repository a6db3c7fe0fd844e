#include "scratch.hpp"

#include "common/layout.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

namespace iosig::preload::testing {

namespace fs = std::filesystem;

ScratchDir::ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "iosig-preload-test-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr)
        throw std::runtime_error("mkdtemp: " + std::string(std::strerror(errno)));
    path_ = pattern;
}

ScratchDir::~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
}

TmpfsMount::TmpfsMount(const fs::path& where, const std::string& size) : path_(where) {
    fs::create_directories(where);
    if (geteuid() != 0) {
        error_ = "mounting a tmpfs needs root";
        not_permitted_ = true;
        return;
    }
    const std::string options = "size=" + size + ",mode=0755";
    if (mount("iosig-test", where.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
        not_permitted_ = errno == EPERM;
        error_ = "mount tmpfs on " + where.string() + ": " + std::strerror(errno) +
                 (not_permitted_ ? " (no CAP_SYS_ADMIN: a container?)" : "");
        return;
    }
    mounted_ = true;
}

TmpfsMount::~TmpfsMount() {
    if (mounted_) umount2(path_.c_str(), MNT_DETACH);
}

std::string pseudo_random_bytes(std::size_t size, std::uint64_t seed) {
    std::mt19937_64 generator(seed);
    std::string bytes(size, '\0');
    for (auto& b : bytes)
        b = static_cast<char>(generator() & 0xff);
    return bytes;
}

void write_file(const fs::path& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
    if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return {};
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

bool symlink_at(const fs::path& path) {
    struct stat st{};
    return lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

bool regular_file_at(const fs::path& path) {
    struct stat st{};
    return lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

void journal_record(const std::string& state, const std::string& job, const std::string& run,
                    RecordType type, const std::vector<std::string>& fields) {
    const JobLayout layout = job_layout(state, job);
    fs::create_directories(layout.job_dir);
    if (!append_journal_record(layout.journal, type, run, fields))
        throw std::runtime_error("cannot append to " + layout.journal + ": " +
                                 std::strerror(errno));
}

void journal_run_begin(const std::string& state, const std::string& job, const std::string& run) {
    journal_record(state, job, run, RecordType::run_begin, {"test-program --flag"});
}

void journal_run_end(const std::string& state, const std::string& job, const std::string& run,
                     int status) {
    journal_record(state, job, run, RecordType::run_end, {std::to_string(status)});
}

Planted plant_redirection(const std::string& state, const std::string& job, const std::string& run,
                          const fs::path& staging_mount, const fs::path& original,
                          const std::string& bytes, const std::string& persistence, bool global,
                          bool keep_global) {
    const fs::path staging = staging_job_dir(staging_mount.string(), geteuid(), job);
    fs::create_directories(staging);
    fs::permissions(staging.parent_path(), fs::perms::owner_all);
    fs::permissions(staging, fs::perms::owner_all);
    const fs::path staged = staging / original.filename();
    write_file(staged, bytes);
    fs::permissions(staged, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
    fs::create_symlink(staged, original);
    journal_record(state, job, run, RecordType::redirect,
                   {staged.string(), original.string(), staging_mount.string(), persistence,
                    global ? "1" : "0", keep_global ? "1" : "0", "rule",
                    "sequential " + persistence, "fastest mount", "*.dat", "rules.yaml:3:12"});
    return {original.string(), staged.string()};
}

} // namespace iosig::preload::testing
