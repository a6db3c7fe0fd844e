// What every `iosig` subcommand shares with the command's main().
#pragma once

namespace iosig::cli {

// Exit statuses common to all subcommands (documented in README.md).
enum ExitStatus : int {
    exit_ok = 0,
    exit_failure = 1,   // the operation failed (I/O error, data could not be moved, ...)
    exit_bad_input = 2, // bad command line, signature, config or rules file
    exit_no_choice = 3, // `explain`: no mount satisfies the signature
};

struct Context {
    int exit_code = exit_ok; // a subcommand's callback stores its status here
};

} // namespace iosig::cli
