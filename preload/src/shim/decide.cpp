#include "decide.hpp"

#include "log.hpp"

#include <cstring>
#include <fcntl.h>

namespace iosig::shim {
namespace {

constexpr std::string_view system_prefixes[] = {"/proc", "/sys", "/dev", "/etc", "/usr"};

bool excluded(const Process& p, std::string_view path) {
    for (auto prefix : system_prefixes)
        if (preload::is_within(path, prefix)) return true;
    if (preload::is_within(path, p.layout.state_dir)) return true;
    if (!p.log_path.empty() && path == p.log_path) return true;
    if (path == p.report_path) return true;
    if (preload::contains_staging_component(path)) return true;
    return p.rules && p.rules->excluded(path);
}

} // namespace

bool builtin_excluded(const char* path) noexcept {
    if (path == nullptr || path[0] != '/') return false;
    const std::string_view text(path);
    for (auto prefix : system_prefixes)
        if (preload::is_within(text, prefix)) return true;
    return false;
}

bool decide(Process& p, int dirfd, const char* path, bool creating, const char* runtime_signature,
            Intent& intent) {
    const bool any_prepared = p.prepared_count.load(std::memory_order_acquire) > 0;
    if (!p.rules && runtime_signature == nullptr && !any_prepared) return false;
    if (!preload::absolute_path(dirfd, path, intent.path)) return false;
    const std::string_view absolute = intent.path.view();
    if (excluded(p, absolute)) return false;
    intent.creating = creating;
    if (p.rules) intent.rule = p.rules->match(absolute);
    if (runtime_signature != nullptr) {
        static const SigdefTable no_sigdefs;
        auto parsed = resolve_sig(runtime_signature, p.rules ? p.rules->sigdefs() : no_sigdefs);
        if (parsed) {
            intent.signature = *parsed.value;
            intent.signature_text = to_canonical(*parsed.value);
            intent.source = "pragma";
            return true;
        }
        warn(Cause::bad_signature,
             "the signature \"%s\" does not parse (%s): using the rules instead", runtime_signature,
             parsed.errors.empty() ? "?" : parsed.errors.front().message.c_str());
    }
    if (intent.rule == nullptr && any_prepared) {
        std::string text;
        {
            std::lock_guard lock(p.mutex);
            if (auto it = p.prepared.find(absolute); it != p.prepared.end()) text = it->second;
        }
        if (!text.empty()) {
            if (auto parsed = parse_signature(text)) {
                intent.signature = *parsed.value;
                intent.signature_text = text;
                intent.source = "pragma";
                return true;
            }
        }
    }
    if (intent.rule == nullptr) return false;
    if (intent.rule->signature) {
        intent.signature = intent.rule->signature;
        intent.signature_text = intent.rule->signature_text;
    }
    return true;
}

int flags_from_fopen_mode(const char* mode) noexcept {
    if (mode == nullptr) return -1;
    int flags = 0;
    switch (mode[0]) {
    case 'r':
        flags = O_RDONLY;
        break;
    case 'w':
        flags = O_WRONLY | O_CREAT | O_TRUNC;
        break;
    case 'a':
        flags = O_WRONLY | O_CREAT | O_APPEND;
        break;
    default:
        return -1;
    }
    for (const char* c = mode + 1; *c != '\0'; ++c) {
        switch (*c) {
        case '+':
            flags = (flags & ~O_ACCMODE) | O_RDWR;
            break;
        case 'x':
            flags |= O_EXCL;
            break;
        case 'e':
            flags |= O_CLOEXEC;
            break;
        case 'b':
        case 't':
        case 'm':
        case 'c':
            break;
        case ',':
            return -1; // ",ccs=": a wide-character encoding, left entirely to glibc
        default:
            break;
        }
    }
    return flags;
}

} // namespace iosig::shim
