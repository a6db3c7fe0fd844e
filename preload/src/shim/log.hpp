// Warnings of the shim: one per cause per process and, through a marker file in the job's state
// directory, one per cause per job (a pipeline of 1000 processes warns once). To $IOSIG_LOG when
// set (appended), else to stderr. Formatting uses a stack buffer; nothing here changes errno.
#pragma once

#include <cstdarg>

namespace iosig::shim {

enum class Cause : unsigned {
    bad_rules,        // the rules file does not load: the shim is disabled
    no_config,        // no node configuration: nothing is redirected
    bad_config,       // the node configuration does not load
    bad_signature,    // a runtime-ABI signature does not parse
    no_mount,         // no mount satisfies a signature
    staging,          // the staging directory cannot be used
    destination,      // creating the staged file failed (ENOSPC, EROFS, EACCES, ...)
    destination_full, // the chosen mount has too little free space
    journal,          // the journal cannot be written
    fd_limit,         // a descriptor too high to track
    too_many_files,   // tracking cap reached
    relocation,       // ENOSPC in the middle of a file
    report,           // the report cannot be written
    internal,         // an unexpected exception inside iosig
    count
};

// printf-style. Returns without output if this cause was reported already.
void warn(Cause cause, const char* format, ...) __attribute__((format(printf, 2, 3)));
// Only with IOSIG_VERBOSE=1.
void note(const char* format, ...) __attribute__((format(printf, 1, 2)));

// Where warnings go and where the per-job markers live (set once the environment is read).
void configure_log(const char* log_path, const char* warned_dir, bool verbose);
void reset_log_after_fork();

} // namespace iosig::shim
