// `iosig config --plugin|--preload|--prefix|--include-dir|--lib-dir`: where iosig's parts are,
// found relative to the running `iosig` binary, so that a build tree and any install prefix both
// work:
//   clang++ -fplugin=$(iosig config --plugin) ...      LD_PRELOAD=$(iosig config --preload) ./app
#include "commands.hpp"

#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

// From selector/cli/CMakeLists.txt: the install layout relative to the installed bindir, and the
// build tree (whose bin/ and lib/ are siblings).
#ifndef IOSIG_BIN_TO_PREFIX
#define IOSIG_BIN_TO_PREFIX ".."
#endif
#ifndef IOSIG_BIN_TO_LIBDIR
#define IOSIG_BIN_TO_LIBDIR "../lib"
#endif
#ifndef IOSIG_BIN_TO_INCLUDEDIR
#define IOSIG_BIN_TO_INCLUDEDIR "../include"
#endif

namespace iosig::cli {
namespace {

namespace fs = std::filesystem;

struct Layout {
    fs::path prefix, lib_dir, include_dir;
};

fs::path running_binary_dir() {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    return ec ? fs::current_path() : exe.parent_path();
}

// "/x/build/bin/.." -> "/x/build": normal form without a trailing separator.
fs::path clean(const fs::path& path) {
    fs::path normal = path.lexically_normal();
    return normal.has_filename() || normal == normal.root_path() ? normal : normal.parent_path();
}

Layout layout() {
    const fs::path bin = running_binary_dir();
    std::error_code ec;
    const bool in_build_tree = fs::equivalent(bin, fs::path(IOSIG_BINARY_DIR) / "bin", ec);
    if (in_build_tree) // headers stay in the source tree
        return {clean(bin / ".."), clean(bin / "../lib"),
                clean(fs::path(IOSIG_SOURCE_DIR) / "selector/include")};
    return {clean(bin / IOSIG_BIN_TO_PREFIX), clean(bin / IOSIG_BIN_TO_LIBDIR),
            clean(bin / IOSIG_BIN_TO_INCLUDEDIR)};
}

struct ConfigOptions {
    bool plugin = false, preload = false, prefix = false, include_dir = false, lib_dir = false;
};

int run_config(const ConfigOptions& o) {
    const Layout where = layout();
    const std::vector<std::pair<const char*, fs::path>> all{
        {"prefix", where.prefix},
        {"lib-dir", where.lib_dir},
        {"include-dir", where.include_dir},
        {"plugin", where.lib_dir / "iosig" / "iosig-clang-plugin.so"},
        {"preload", where.lib_dir / "libiosig.so"},
    };
    const bool wanted[] = {o.prefix, o.lib_dir, o.include_dir, o.plugin, o.preload};
    const bool any = o.prefix || o.lib_dir || o.include_dir || o.plugin || o.preload;
    for (std::size_t i = 0; i < all.size(); ++i) {
        if (any && !wanted[i]) continue;
        const auto& [name, path] = all[i];
        if (any)
            fmt::print("{}\n", path.string());
        else
            fmt::print("{:<12} {}\n", std::string(name) + ":", path.string());
        std::error_code ec;
        if (!fs::exists(path, ec))
            std::fprintf(
                stderr,
                "iosig config: note: %s does not exist (component not built or installed?)\n",
                path.c_str());
    }
    return exit_ok;
}

} // namespace

void register_config_command(CLI::App& app, Context& context) {
    auto options = std::make_shared<ConfigOptions>();
    CLI::App* config =
        app.add_subcommand("config", "Print where iosig's parts are (relative to this iosig "
                                     "binary); all of them without a flag");
    config->add_flag("--plugin", options->plugin, "The Clang plugin, for clang -fplugin=...");
    config->add_flag("--preload", options->preload, "The LD_PRELOAD runtime libiosig.so");
    config->add_flag("--prefix", options->prefix, "The installation prefix (the build tree's top)");
    config->add_flag("--include-dir", options->include_dir, "Directory of the iosig/ headers");
    config->add_flag("--lib-dir", options->lib_dir, "Directory of iosig's libraries");
    config->callback([options, &context] { context.exit_code = run_config(*options); });
}

} // namespace iosig::cli
