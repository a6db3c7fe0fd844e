// Path arithmetic that runs inside intercepted calls: fixed-size buffers, no allocation, no
// exceptions.
#pragma once

#include <climits>
#include <cstddef>
#include <string_view>

namespace iosig::preload {

// An absolute, lexically normalized path on the stack (PATH_MAX bytes including the terminator).
class PathBuffer {
public:
    static constexpr std::size_t capacity = PATH_MAX;

    std::string_view view() const { return {data_, size_}; }
    const char* c_str() const { return data_; }
    std::size_t size() const { return size_; }
    void clear() {
        size_ = 0;
        data_[0] = '\0';
    }
    bool append(std::string_view text);
    bool push_back(char c);
    void truncate(std::size_t size) {
        size_ = size;
        data_[size_] = '\0';
    }

private:
    char data_[capacity] = {};
    std::size_t size_ = 0;
};

// `base` (absolute) joined with `path` (absolute or relative) and normalized lexically: `//` and
// `.` removed, `..` drops the previous component (symlinks are not resolved). false if it does not
// fit.
bool join_normalized(std::string_view base, std::string_view path, PathBuffer& out) noexcept;

// Absolute normalized form of `path` as open/openat(dirfd, ...) would resolve its starting point:
// the cwd for relative paths with AT_FDCWD, /proc/self/fd/DIRFD's target otherwise.
// false when the start cannot be determined or the result does not fit.
bool absolute_path(int dirfd, const char* path, PathBuffer& out) noexcept;

// true if `path` is `prefix` or lies below it (component boundary: /usr matches /usr/x, not /usrx).
bool is_within(std::string_view path, std::string_view prefix) noexcept;

// The directory part of an absolute normalized path ("/a/b" -> "/a", "/a" -> "/").
std::string_view parent_of(std::string_view path) noexcept;
std::string_view basename_of(std::string_view path) noexcept;

} // namespace iosig::preload
