#include "paths.hpp"

#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace iosig::preload {

bool PathBuffer::append(std::string_view text) {
    if (size_ + text.size() >= capacity) return false;
    std::memcpy(data_ + size_, text.data(), text.size());
    size_ += text.size();
    data_[size_] = '\0';
    return true;
}

bool PathBuffer::push_back(char c) {
    if (size_ + 1 >= capacity) return false;
    data_[size_++] = c;
    data_[size_] = '\0';
    return true;
}

namespace {

// Appends the components of `text` to `out` (which holds an absolute normalized path).
bool append_components(std::string_view text, PathBuffer& out) {
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && text[i] == '/')
            ++i;
        std::size_t end = i;
        while (end < text.size() && text[end] != '/')
            ++end;
        const std::string_view component = text.substr(i, end - i);
        i = end;
        if (component.empty() || component == ".") continue;
        if (component == "..") {
            out.truncate(parent_of(out.view()).size());
            continue;
        }
        if (out.size() > 1 && !out.push_back('/')) return false;
        if (!out.append(component)) return false;
    }
    return true;
}

} // namespace

bool join_normalized(std::string_view base, std::string_view path, PathBuffer& out) noexcept {
    out.clear();
    out.push_back('/');
    if (path.empty() || path.front() != '/') {
        if (!append_components(base, out)) return false;
    }
    return append_components(path, out);
}

bool absolute_path(int dirfd, const char* path, PathBuffer& out) noexcept {
    if (path == nullptr) return false;
    const std::string_view text(path);
    if (!text.empty() && text.front() == '/') return join_normalized("/", text, out);
    char base[PATH_MAX];
    if (dirfd == AT_FDCWD) {
        if (getcwd(base, sizeof base) == nullptr) return false;
    } else {
        char link[40];
        std::snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
        const ssize_t n = readlink(link, base, sizeof base - 1);
        if (n <= 0 || base[0] != '/') return false;
        base[n] = '\0';
    }
    return join_normalized(base, text, out);
}

bool is_within(std::string_view path, std::string_view prefix) noexcept {
    while (prefix.size() > 1 && prefix.back() == '/')
        prefix.remove_suffix(1);
    if (prefix == "/") return !path.empty() && path.front() == '/';
    if (path.size() < prefix.size() || path.substr(0, prefix.size()) != prefix) return false;
    return path.size() == prefix.size() || path[prefix.size()] == '/';
}

std::string_view parent_of(std::string_view path) noexcept {
    const auto slash = path.rfind('/');
    if (slash == std::string_view::npos || slash == 0) return "/";
    return path.substr(0, slash);
}

std::string_view basename_of(std::string_view path) noexcept {
    const auto slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

} // namespace iosig::preload
