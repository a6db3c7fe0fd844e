// TEMPORARY until core-select adds explain/sig/config commands.
#include <CLI/CLI.hpp>

#include "iosig/cli/context.hpp"

namespace iosig::cli {
void register_selector(CLI::App&, Context&) {}
} // namespace iosig::cli
