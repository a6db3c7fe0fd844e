// The core's `iosig` subcommands: sig, explain, config.
#include "commands.hpp"

namespace iosig::cli {

void register_selector(CLI::App& app, Context& context) {
    register_sig_command(app, context);
    register_explain_command(app, context);
    register_config_command(app, context);
}

} // namespace iosig::cli
