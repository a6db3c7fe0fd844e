#include "commands.hpp"

#include <cstdlib>
#include <filesystem>
#include <unistd.h>

namespace iosig::cli {

std::string preload_library_path() {
    if (const char* forced = std::getenv("IOSIG_PRELOAD_LIB"); forced && *forced) return forced;
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) return "libiosig.so";
    const auto bindir = exe.parent_path();
    for (const auto& relative : {std::filesystem::path(IOSIG_PRELOAD_FROM_BINDIR),
                                 std::filesystem::path("../lib/libiosig.so")}) {
        const auto candidate = (bindir / relative).lexically_normal();
        if (std::filesystem::exists(candidate, ec)) return candidate.string();
    }
    return (bindir / IOSIG_PRELOAD_FROM_BINDIR).lexically_normal().string();
}

std::string preload_entries() {
    std::string runtime = IOSIG_PRELOAD_SANITIZER_RUNTIME;
    return runtime.empty() ? preload_library_path() : runtime + ":" + preload_library_path();
}

void register_preload(CLI::App& app, Context& context) {
    register_run_command(app, context);
    register_finalize_command(app, context);
    register_report_command(app, context);
}

} // namespace iosig::cli
