// The prefetcher's command-line options, shared by iosig-tiersim and iosig-tierbench.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace iosig::tier::tools {

// --prefetch KIND and --prefetch-window LINES (which needs --prefetch); returns --prefetch.
inline CLI::Option* add_prefetch_options(CLI::App& app, std::string& prefetch, unsigned& window) {
    CLI::Option* prefetch_option = app.add_option("--prefetch", prefetch, "stream or markov");
    app.add_option("--prefetch-window", window,
                   "lines an adjacent stream's window grows to, doubling at every refill from 8 "
                   "(default 64; 8: a fixed window); no more than the prefetch buffer")
        ->check(CLI::Range(1u, 1u << 20))
        ->needs(prefetch_option);
    return prefetch_option;
}

} // namespace iosig::tier::tools
