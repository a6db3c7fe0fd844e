// The open entry points behind wrap_open.c and runtime_api.c: open family, stdio opens, mkstemp and
// iosig_prepare_path. Each decides, maybe redirects, else makes the original call, and tracks.
#include "decide.hpp"
#include "io_util.hpp"
#include "log.hpp"
#include "real.h"
#include "redirect.hpp"
#include "shim.h"
#include "stats.hpp"

#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace iosig::shim {
namespace {

int real_open(iosig_open_api api, int dirfd, const char* path, int flags, mode_t mode) {
    switch (api) {
    case IOSIG_API_OPEN:
        return IOSIG_REAL(open)(path, flags, mode);
    case IOSIG_API_OPEN64:
        return IOSIG_REAL(open64)(path, flags, mode);
    case IOSIG_API_OPENAT:
        return IOSIG_REAL(openat)(dirfd, path, flags, mode);
    case IOSIG_API_OPENAT64:
        return IOSIG_REAL(openat64)(dirfd, path, flags, mode);
    case IOSIG_API_OPEN_2:
        return IOSIG_REAL(__open_2)(path, flags);
    case IOSIG_API_OPEN64_2:
        return IOSIG_REAL(__open64_2)(path, flags);
    case IOSIG_API_OPENAT_2:
        return IOSIG_REAL(__openat_2)(dirfd, path, flags);
    case IOSIG_API_OPENAT64_2:
        return IOSIG_REAL(__openat64_2)(dirfd, path, flags);
    case IOSIG_API_CREAT:
        return IOSIG_REAL(creat)(path, mode);
    case IOSIG_API_CREAT64:
        return IOSIG_REAL(creat64)(path, mode);
    }
    return IOSIG_REAL(open)(path, flags, mode);
}

const char* api_name(iosig_open_api api) {
    constexpr const char* names[] = {"open",     "open64",     "openat",     "openat64",
                                     "__open_2", "__open64_2", "__openat_2", "__openat64_2",
                                     "creat",    "creat64"};
    return names[static_cast<int>(api)];
}

bool fortified(iosig_open_api api) {
    return api == IOSIG_API_OPEN_2 || api == IOSIG_API_OPEN64_2 || api == IOSIG_API_OPENAT_2 ||
           api == IOSIG_API_OPENAT64_2;
}

// Runs `body` with iosig's own calls passing straight through. An exception inside iosig means the
// call is not iosig's business: the caller makes the original call.
template <class F>
bool guarded(F&& body) {
    ++iosig_reentry;
    bool ok = false;
    try {
        ok = body();
    } catch (const std::exception& e) {
        warn(Cause::internal, "internal error (%s): the call proceeds unchanged", e.what());
    } catch (...) {
        warn(Cause::internal, "internal error: the call proceeds unchanged");
    }
    --iosig_reentry;
    return ok;
}

// The process state, unless the path can never concern iosig (then without initialising).
Process* state_for(const char* path) {
    if (path == nullptr || builtin_excluded(path)) return nullptr;
    ++iosig_reentry;
    Process* p = process();
    --iosig_reentry;
    return p;
}

struct Decision {
    Intent intent;
    RedirectResult redirect;
    bool concerned = false;
    bool existed = true;
    std::string earlier_staged; // the path is a symlink to data an earlier redirection staged
    std::string earlier_mount;
};

// A tracked path that is our symlink: its data's location, so that reports join both opens.
void find_earlier_redirection(const Process& p, int dirfd, const char* path, Decision& d) {
    struct stat st{};
    if (fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISLNK(st.st_mode)) return;
    char target[PATH_MAX];
    const ssize_t n = readlinkat(dirfd, path, target, sizeof target - 1);
    if (n <= 0 || target[0] != '/') return;
    target[n] = '\0';
    const std::string needle = "/" + preload::staging_user_dir_name(p.uid) + "/";
    const char* at = std::strstr(target, needle.c_str());
    if (at == nullptr) return;
    d.earlier_staged = target;
    d.earlier_mount.assign(target, static_cast<std::size_t>(at - target));
}

// Decide and redirect if asked (runs guarded).
void decide_and_redirect(Process& p, Decision& d, int dirfd, const char* path, int flags,
                         mode_t mode, bool creating, const char* signature) {
    d.concerned = guarded([&] {
        if (!decide(p, dirfd, path, creating, signature, d.intent)) return false;
        if (creating) d.redirect = redirect_create(p, d.intent, dirfd, path, flags, mode);
        if (!d.redirect.redirected && creating) {
            struct stat st{};
            d.existed = fstatat(dirfd, path, &st, 0) == 0;
        }
        if (!d.redirect.redirected) find_earlier_redirection(p, dirfd, path, d);
        return true;
    });
}

void track(const Decision& d, int fd, const char* api, int flags) {
    guarded([&] {
        const Intent& intent = d.intent;
        FileIdentity id;
        id.path = intent.path.c_str();
        id.staged = d.redirect.redirected      ? d.redirect.staged.c_str()
                    : d.earlier_staged.empty() ? nullptr
                                               : d.earlier_staged.c_str();
        id.mount = d.redirect.redirected     ? d.redirect.mount.c_str()
                   : d.earlier_mount.empty() ? nullptr
                                             : d.earlier_mount.c_str();
        id.rule = intent.rule ? intent.rule->pattern.text().c_str() : nullptr;
        std::string where;
        if (intent.rule) {
            where = intent.rule->where.file + ":" + std::to_string(intent.rule->where.line) + ":" +
                    std::to_string(intent.rule->where.column);
            id.rule_where = where.c_str();
        }
        id.signature = intent.signature ? intent.signature_text.c_str() : nullptr;
        id.source = intent.source;
        std::string placement = d.redirect.placement;
        if (!d.earlier_staged.empty())
            placement = "redirected earlier: the data is on " + d.earlier_mount;
        if (placement.empty())
            placement = !intent.signature ? "tracked (the rule gives no signature)"
                        : intent.creating ? "exists: not redirected"
                                          : "opened without creating: not redirected";
        id.placement = placement.c_str();
        id.api = api;
        id.open_flags = flags;
        id.redirected = d.redirect.redirected;
        id.created = d.redirect.redirected || (intent.creating && !d.existed);
        publish(new_file(id), fd);
        return true;
    });
}

int open_common(iosig_open_api api, const char* signature, int dirfd, const char* path, int flags,
                mode_t mode) {
    const int saved_errno = errno;
    Process* p = state_for(path);
    if (p == nullptr) return real_open(api, dirfd, path, flags, mode);
    Decision d;
    decide_and_redirect(*p, d, dirfd, path, flags, mode, creates(flags) && !fortified(api),
                        signature);
    if (d.redirect.redirected) {
        track(d, d.redirect.fd, api_name(api), flags);
        errno = saved_errno;
        return d.redirect.fd;
    }
    errno = saved_errno;
    const int fd = real_open(api, dirfd, path, flags, mode);
    if (d.concerned && fd >= 0) {
        const int error = errno;
        track(d, fd, api_name(api), flags);
        errno = error;
    }
    return fd;
}

FILE* real_fopen(int large, const char* path, const char* mode) {
    return large ? IOSIG_REAL(fopen64)(path, mode) : IOSIG_REAL(fopen)(path, mode);
}

FILE* fopen_common(int large, const char* signature, const char* path, const char* mode) {
    const int saved_errno = errno;
    Process* p = state_for(path);
    const int flags = flags_from_fopen_mode(mode);
    if (p == nullptr || flags < 0) return real_fopen(large, path, mode);
    Decision d;
    decide_and_redirect(*p, d, AT_FDCWD, path, flags, 0666, creates(flags), signature);
    const char* api = large ? "fopen64" : "fopen";
    if (d.redirect.redirected) {
        FILE* stream = IOSIG_REAL(fdopen)(d.redirect.fd, mode);
        if (stream != nullptr) {
            track(d, d.redirect.fd, api, flags);
            errno = saved_errno;
            return stream;
        }
        // Cannot wrap the descriptor (out of memory): undo the redirection entirely.
        guarded([&] {
            IOSIG_REAL(close)(d.redirect.fd);
            IOSIG_REAL(unlink)(path);
            IOSIG_REAL(unlink)(d.redirect.staged.c_str());
            return true;
        });
        d.redirect = RedirectResult{};
        d.redirect.placement = "not redirected: fdopen failed";
    }
    errno = saved_errno;
    FILE* stream = real_fopen(large, path, mode);
    if (d.concerned && stream != nullptr) {
        const int error = errno;
        track(d, fileno(stream), api, flags);
        errno = error;
    }
    return stream;
}

// freopen reopens by path: the staged file is prepared (symlink planted, descriptor closed) and the
// real freopen follows the symlink. An 'x' in the mode is dropped since iosig just created the file
// exclusively itself.
FILE* freopen_common(int large, const char* signature, const char* path, const char* mode,
                     FILE* stream) {
    auto real = [&](const char* m) {
        return large ? IOSIG_REAL(freopen64)(path, m, stream)
                     : IOSIG_REAL(freopen)(path, m, stream);
    };
    if (stream != nullptr && iosig_tracked_stream(stream)) iosig_fd_closing(fileno(stream));
    const int saved_errno = errno;
    Process* p = state_for(path);
    const int flags = flags_from_fopen_mode(mode);
    if (p == nullptr || flags < 0) return real(mode);
    Decision d;
    decide_and_redirect(*p, d, AT_FDCWD, path, flags, 0666, creates(flags), signature);
    std::string without_x;
    if (d.redirect.redirected) {
        IOSIG_REAL(close)(d.redirect.fd);
        for (const char* c = mode; *c; ++c)
            if (*c != 'x') without_x.push_back(*c);
        mode = without_x.c_str();
    }
    errno = saved_errno;
    FILE* result = real(mode);
    if (d.concerned && result != nullptr) {
        const int error = errno;
        track(d, fileno(result), large ? "freopen64" : "freopen", flags);
        errno = error;
    }
    return result;
}

} // namespace
} // namespace iosig::shim

using namespace iosig::shim;

extern "C" {

IOSIG_HIDDEN int iosig_open_call(iosig_open_api api, const char* signature, int dirfd,
                                 const char* path, int flags, mode_t mode) {
    if (iosig_reentry) return real_open(api, dirfd, path, flags, mode);
    return open_common(api, signature, dirfd, path, flags, mode);
}

IOSIG_HIDDEN FILE* iosig_fopen_call(int large, const char* signature, const char* path,
                                    const char* mode) {
    if (iosig_reentry) return real_fopen(large, path, mode);
    return fopen_common(large, signature, path, mode);
}

IOSIG_HIDDEN FILE* iosig_freopen_call(int large, const char* signature, const char* path,
                                      const char* mode, FILE* stream) {
    if (iosig_reentry || path == nullptr) {
        if (stream != nullptr && iosig_tracked_stream(stream)) iosig_fd_closing(fileno(stream));
        return large ? IOSIG_REAL(freopen64)(path, mode, stream)
                     : IOSIG_REAL(freopen)(path, mode, stream);
    }
    return freopen_common(large, signature, path, mode, stream);
}

IOSIG_HIDDEN FILE* iosig_fdopen_call(int fd, const char* mode) {
    return IOSIG_REAL(fdopen)(fd, mode);
}

IOSIG_HIDDEN int iosig_fclose_call(FILE* stream) {
    iosig_file* file = iosig_tracked_stream(stream);
    if (file == nullptr) return IOSIG_REAL(fclose)(stream);
    const int fd = fileno(stream);
    const off_t position = ftello(stream);
    const std::uint64_t started = iosig_clock_now();
    iosig_fd_closing(fd);
    const int result = IOSIG_REAL(fclose)(stream);
    const int error = errno;
    iosig_count_time(file, started);
    if (position > 0 &&
        static_cast<std::uint64_t>(position) > file->final_size.load(std::memory_order_relaxed))
        file->final_size.store(static_cast<std::uint64_t>(position), std::memory_order_relaxed);
    errno = error;
    return result;
}

IOSIG_HIDDEN int iosig_mkstemp_done(int fd, const char* path, int flags) {
    const int saved_errno = errno;
    Process* p = state_for(path);
    if (p == nullptr) return fd;
    Decision d;
    int result = fd;
    d.concerned = guarded([&] {
        if (!decide(*p, AT_FDCWD, path, true, nullptr, d.intent)) return false;
        d.existed = false;
        d.redirect = redirect_replace(*p, d.intent, flags);
        if (d.redirect.redirected) {
            IOSIG_REAL(close)(fd);
            result = d.redirect.fd;
        }
        return true;
    });
    if (d.concerned) track(d, result, "mkstemp", O_RDWR | O_CREAT | O_EXCL | flags);
    errno = saved_errno;
    return result;
}

IOSIG_HIDDEN const char* iosig_prepare_path_call(const char* signature, const char* path,
                                                 int flags) {
    const int saved_errno = errno;
    Process* p = iosig_reentry ? nullptr : state_for(path);
    if (p == nullptr || signature == nullptr) return path;
    Decision d;
    // `flags` are the open flags the stream will use: only a stream that creates the file can be
    // redirected; without O_CREAT the stream's own open must see exactly what it would without
    // iosig.
    if (!creates(flags)) {
        errno = saved_errno;
        return path;
    }
    decide_and_redirect(*p, d, AT_FDCWD, path, flags, 0666, true, signature);
    if (d.redirect.redirected) {
        guarded([&] {
            IOSIG_REAL(close)(d.redirect.fd);
            std::lock_guard lock(p->mutex);
            p->prepared[std::string(d.intent.path.view())] = d.intent.signature_text;
            p->prepared_count.fetch_add(1, std::memory_order_release);
            return true;
        });
    }
    errno = saved_errno;
    return path;
}

} // extern "C"
