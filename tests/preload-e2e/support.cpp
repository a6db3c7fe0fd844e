#include "support.hpp"

#include "iosig/node_yaml.hpp"
#include "iosig/selection.hpp"
#include "iosig/signature.hpp"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace iosig::e2e {
namespace {

std::string slurp_fd(int fd) {
    std::string text;
    std::array<char, 4096> buffer{};
    ssize_t n;
    while ((n = read(fd, buffer.data(), buffer.size())) > 0)
        text.append(buffer.data(), static_cast<std::size_t>(n));
    return text;
}

// True if some process that is not a zombie belongs to process group `group`.
bool group_has_a_live_member(int group) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/proc", ec)) {
        std::ifstream in(entry.path() / "stat");
        std::string stat;
        if (!std::getline(in, stat)) continue; // not a process, or it has just gone
        // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so read after
        // the last ')'.
        const auto close = stat.rfind(')');
        if (close == std::string::npos) continue;
        std::istringstream fields(stat.substr(close + 1));
        char state = 0;
        long parent = 0, its_group = 0;
        if (fields >> state >> parent >> its_group && its_group == group && state != 'Z')
            return true;
    }
    return false;
}

} // namespace

bool wait_until_group_has_exited(int group, int limit_ms) {
    for (int waited = 0; waited < limit_ms; waited += 10) {
        if (!group_has_a_live_member(group)) return true;
        usleep(10'000);
    }
    return !group_has_a_live_member(group);
}

Result run(const std::vector<std::string>& argv, const fs::path& cwd,
           const std::map<std::string, std::string>& env) {
    std::vector<std::string> environment;
    for (char** e = environ; *e; ++e) {
        const std::string entry(*e);
        const auto eq = entry.find('=');
        if (eq != std::string::npos && env.count(entry.substr(0, eq))) continue;
        environment.push_back(entry);
    }
    for (const auto& [k, v] : env)
        environment.push_back(k + "=" + v);
    std::vector<char*> args, envp;
    for (const auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    for (const auto& e : environment)
        envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);

    char out_name[] = "/tmp/iosig-e2e-out-XXXXXX";
    char err_name[] = "/tmp/iosig-e2e-err-XXXXXX";
    const int out = mkstemp(out_name);
    const int err = mkstemp(err_name);
    unlink(out_name);
    unlink(err_name);
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
        if (chdir(cwd.c_str()) != 0) _exit(126);
        dup2(out, 1);
        dup2(err, 2);
        execvpe(args[0], args.data(), envp.data());
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    Result result;
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    lseek(out, 0, SEEK_SET);
    lseek(err, 0, SEEK_SET);
    result.out = slurp_fd(out);
    result.err = slurp_fd(err);
    close(out);
    close(err);
    return result;
}

Result shell(const std::string& command, const fs::path& cwd,
             const std::map<std::string, std::string>& env) {
    return run({"/bin/sh", "-c", command}, cwd, env);
}

std::string sha256(const fs::path& file) {
    const Result r = run({"sha256sum", file.string()}, "/");
    if (r.status != 0) return {};
    return r.out.substr(0, 64);
}

bool is_link(const fs::path& path) {
    struct stat st{};
    return lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

bool is_plain_file(const fs::path& path) {
    struct stat st{};
    return lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string link_target(const fs::path& path) {
    std::error_code ec;
    const auto target = fs::read_symlink(path, ec);
    return ec ? std::string() : target.string();
}

void write_text(const fs::path& file, const std::string& text) {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << text;
}

std::string read_text(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

fs::path scratch(const std::string& name) {
    const fs::path dir = fs::path(IOSIG_BINARY_DIR) / "preload-e2e" / name;
    std::error_code ec;
    fs::remove_all(dir, ec);
    fs::create_directories(dir);
    return dir;
}

fs::path iosig_binary() {
    return fs::path(IOSIG_BINARY_DIR) / "bin" / "iosig";
}

fs::path program(const std::string& name) {
    return fs::path(IOSIG_E2E_PROGRAM_DIR) / name;
}

fs::path lab_dir() {
    const char* dir = std::getenv("IOSIG_LAB_DIR");
    return dir && *dir ? fs::path(dir) : fs::path();
}

fs::path lab_config() {
    return lab_dir() / "lab.yaml";
}

std::string expected_mount(const fs::path& config, const std::string& signature) {
    const auto node = load_node_files({config});
    if (!node.ok()) throw std::runtime_error("cannot load " + config.string());
    const auto sig = parse_signature(signature);
    if (!sig) throw std::runtime_error("bad signature " + signature);
    const auto selection = select_mount(*node.node, *sig.value, SelectionContext{});
    return selection.chosen() ? selection.chosen()->path : std::string();
}

std::string canonical(const std::string& signature) {
    const auto sig = parse_signature(signature);
    if (!sig) throw std::runtime_error("bad signature " + signature);
    return to_canonical(*sig.value);
}

std::map<std::string, std::string> foreign_program_env() {
#ifdef IOSIG_E2E_SANITIZED
    return {{"ASAN_OPTIONS", "detect_leaks=0:abort_on_error=0"}};
#else
    return {};
#endif
}

Tmpfs::Tmpfs(const fs::path& where, const std::string& size, bool read_only) : path_(where) {
    fs::create_directories(path_);
    const std::string options = "size=" + size + ",mode=1777";
    mounted_ = mount("iosig-e2e", path_.c_str(), "tmpfs", 0, options.c_str()) == 0;
    if (mounted_ && read_only)
        mounted_ = mount("iosig-e2e", path_.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY,
                         options.c_str()) == 0;
}

Tmpfs::~Tmpfs() {
    if (mounted_) umount2(path_.c_str(), MNT_DETACH);
    std::error_code ec;
    fs::remove(path_, ec);
}

void write_single_mount_node(const fs::path& file, const fs::path& mount,
                             const std::string& capacity, bool is_volatile) {
    std::ostringstream yaml;
    yaml << "node: {name: e2e}\n"
         << "devices:\n"
         << "  ram:\n"
         << "    structure: simple\n    media: ram\n    capacity: " << capacity << "\n"
         << "    performance: {seq_read_bw: 6G/s, seq_write_bw: 4G/s, op_latency: 2us}\n"
         << "    reliability: {mttf: 1y, ber: 1e-12, mttr: 10min}\n"
         << "mounts:\n"
         << "  - path: " << mount.string() << "\n    device: ram\n    fs_type: tmpfs\n"
         << "    volatile: " << (is_volatile ? "true" : "false") << "\n"
         << "    capacity: " << capacity << "\n";
    write_text(file, yaml.str());
}

} // namespace iosig::e2e
