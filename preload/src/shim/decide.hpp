// Whether an open concerns iosig: the path made absolute, the built-in and configured exclusions,
// the winning rule, the signature (a runtime-ABI signature beats the rule's) and whether the call
// creates the file.
#pragma once

#include "../common/paths.hpp"
#include "iosig/signature.hpp"
#include "process.hpp"

#include <fcntl.h>
#include <optional>
#include <string>

namespace iosig::shim {

struct Intent {
    preload::PathBuffer path; // absolute, lexically normalized
    const preload::Rule* rule = nullptr;
    std::optional<Signature> signature;
    std::string signature_text; // canonical
    const char* source = "rule";
    bool creating = false; // the call would create the file if it does not exist
};

// true if a path can never concern iosig (checked before initialisation: /proc, /sys, /dev, /etc,
// /usr).
bool builtin_excluded(const char* path) noexcept;

// false: not tracked, make the original call and forget it. `runtime_signature` may be nullptr.
bool decide(Process& p, int dirfd, const char* path, bool creating, const char* runtime_signature,
            Intent& intent);

// Open flags equivalent to an fopen mode; -1 if the mode is not understood (then never redirected).
int flags_from_fopen_mode(const char* mode) noexcept;

inline bool creates(int flags) {
    return (flags & O_CREAT) != 0 && (flags & O_TMPFILE) != O_TMPFILE;
}

} // namespace iosig::shim
