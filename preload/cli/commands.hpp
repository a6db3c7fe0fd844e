// The preload component's `iosig` subcommands; register_preload() (register.cpp) adds them all.
#pragma once
#include "iosig/cli/context.hpp"

#include <CLI/CLI.hpp>
#include <string>

namespace iosig::cli {

void register_run_command(CLI::App& app, Context& context);      // run_command.cpp
void register_finalize_command(CLI::App& app, Context& context); // finalize_command.cpp
void register_report_command(CLI::App& app, Context& context);   // report_command.cpp

// libiosig.so next to this `iosig` (installed or build tree), or $IOSIG_PRELOAD_LIB.
std::string preload_library_path();
// What LD_PRELOAD must hold for the shim (the sanitizer runtime first in sanitizer builds).
std::string preload_entries();

} // namespace iosig::cli
