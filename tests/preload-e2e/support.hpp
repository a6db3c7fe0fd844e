// Helpers of the preload end-to-end tests: running commands (plainly or under `iosig run`), hashing
// files, inspecting symlinks, asking the core which mount a signature should get.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace iosig::e2e {

namespace fs = std::filesystem;

struct Result {
    int status = -1; // exit status, 128 + signal if killed
    std::string out;
    std::string err;
};

// Runs argv (execvp) in `cwd` with the environment plus `env`; captures stdout and stderr.
Result run(const std::vector<std::string>& argv, const fs::path& cwd,
           const std::map<std::string, std::string>& env = {});
Result shell(const std::string& command, const fs::path& cwd,
             const std::map<std::string, std::string>& env = {});

std::string sha256(const fs::path& file); // hex, follows symlinks; "" if unreadable
bool is_link(const fs::path& path);
bool is_plain_file(const fs::path& path); // without following symlinks
std::string link_target(const fs::path& path);
void write_text(const fs::path& file, const std::string& text);
std::string read_text(const fs::path& file);

// Waits until no process of group `group` is alive (zombies hold no files), up to `limit_ms`;
// false if one still is. A SIGKILL to a group is only sent when kill() returns: each member
// closes its files as it exits, and waitpid() on the leader says nothing about the others.
bool wait_until_group_has_exited(int group, int limit_ms);

// A fresh, empty directory under the build tree.
fs::path scratch(const std::string& name);

// The built tools.
fs::path iosig_binary();
fs::path program(const std::string& name); // tests/preload-e2e test programs

// The device lab the ctest fixture brought up ($IOSIG_LAB_DIR), or empty if there is none.
fs::path lab_dir();
fs::path lab_config();

// The mount the core selects for `signature` on the node in `config`.
std::string expected_mount(const fs::path& config, const std::string& signature);
// The core's canonical text of a signature: what reports and journals record.
std::string canonical(const std::string& signature);

// Environment for programs that are not built with sanitizers when the shim is (leak checking in
// python3, sqlite3, ... reports their own leaks, not ours).
std::map<std::string, std::string> foreign_program_env();

// A small tmpfs for fault tests; unmounted (and removed) by the destructor.
class Tmpfs {
public:
    Tmpfs(const fs::path& where, const std::string& size, bool read_only = false);
    ~Tmpfs();
    Tmpfs(const Tmpfs&) = delete;
    Tmpfs& operator=(const Tmpfs&) = delete;
    const fs::path& path() const { return path_; }
    bool mounted() const { return mounted_; }

private:
    fs::path path_;
    bool mounted_ = false;
};

// A one-mount node YAML for `mount` (a fast RAM-like device, local, volatile when `is_volatile`).
void write_single_mount_node(const fs::path& file, const fs::path& mount,
                             const std::string& capacity, bool is_volatile);

} // namespace iosig::e2e
