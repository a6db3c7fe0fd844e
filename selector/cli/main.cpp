// `iosig`: one command, with the subcommands of every component that was built.
#include "cli_modules.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

int main(int argc, char** argv) {
    CLI::App app{"iosig: place each IO stream on the device of this node that serves it best"};
    app.require_subcommand(1);
    app.set_version_flag("--version", IOSIG_VERSION);
    iosig::cli::Context context;
    iosig::cli::register_all(app, context);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        const int status = app.exit(error);
        return status == 0 ? 0 : iosig::cli::exit_bad_input;
    } catch (const std::exception& error) {
        std::fprintf(stderr, "iosig: %s\n", error.what());
        return iosig::cli::exit_failure;
    }
    return context.exit_code;
}
