// Trace files for tests: compressed as they are published, written to a temporary file, and
// compared request by request.
#pragma once

#include "iosig/tier/trace.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

namespace iosig::tier::test_support::files {

inline std::string zstd_compress(std::string_view bytes) {
    std::string out(ZSTD_compressBound(bytes.size()), '\0');
    const std::size_t n = ZSTD_compress(out.data(), out.size(), bytes.data(), bytes.size(), 3);
    if (ZSTD_isError(n)) throw std::runtime_error(ZSTD_getErrorName(n));
    out.resize(n);
    return out;
}

// A gzip member (not a zlib stream): what `gzip` writes.
inline std::string gzip_compress(std::string_view bytes) {
    z_stream s{};
    if (deflateInit2(&s, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::runtime_error("deflateInit2");
    std::string out(deflateBound(&s, bytes.size()), '\0');
    s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    s.avail_in = static_cast<uInt>(bytes.size());
    s.next_out = reinterpret_cast<Bytef*>(out.data());
    s.avail_out = static_cast<uInt>(out.size());
    const int status = deflate(&s, Z_FINISH);
    out.resize(out.size() - s.avail_out);
    deflateEnd(&s);
    if (status != Z_STREAM_END) throw std::runtime_error("deflate");
    return out;
}

inline std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

class TempFile {
public:
    TempFile(const std::string& name, std::string_view content)
        : path_(std::filesystem::temp_directory_path() /
                ("iosig-trace-" + std::to_string(::getpid()) + "-" + name)) {
        std::ofstream(path_, std::ios::binary)
            .write(content.data(), static_cast<std::streamsize>(content.size()));
    }
    ~TempFile() { std::filesystem::remove(path_); }
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

inline std::string oracle_record(std::uint32_t time, std::uint64_t id, std::uint32_t size) {
    std::string r(24, '\0');
    std::memcpy(r.data(), &time, 4);
    std::memcpy(r.data() + 4, &id, 8);
    std::memcpy(r.data() + 12, &size, 4);
    const std::int64_t next = -1;
    std::memcpy(r.data() + 16, &next, 8);
    return r;
}

inline void expect_same_requests(const Trace& a, const Trace& b) {
    ASSERT_EQ(a.requests.size(), b.requests.size());
    EXPECT_EQ(a.kind, b.kind);
    for (std::size_t i = 0; i < a.requests.size(); ++i) {
        ASSERT_EQ(a.requests[i].id, b.requests[i].id) << "request " << i;
        ASSERT_EQ(a.requests[i].size, b.requests[i].size) << "request " << i;
        ASSERT_EQ(a.requests[i].write, b.requests[i].write) << "request " << i;
    }
}

} // namespace iosig::tier::test_support::files
