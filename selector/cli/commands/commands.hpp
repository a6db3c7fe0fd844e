// The core's `iosig` subcommands, one file each; register_selector() (register.cpp) adds them all.
#pragma once
#include "iosig/cli/context.hpp"

#include <CLI/CLI.hpp>

namespace iosig::cli {
void register_sig_command(CLI::App& app, Context& context); // sig_command.cpp: `iosig sig check`
void register_explain_command(CLI::App& app, Context& context); // explain_command.cpp
void register_config_command(CLI::App& app, Context& context); // config_command.cpp: paths of parts
} // namespace iosig::cli
