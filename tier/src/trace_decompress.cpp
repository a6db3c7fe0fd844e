// Decompression of trace files (trace_decompress.hpp): zstd through libzstd's streaming API, gzip
// through zlib. Both accept concatenated frames/members, as `zstd`/`gzip` write them when
// appending.
#include "trace_decompress.hpp"

#include "iosig/tier/trace.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <memory>
#include <vector>
#include <zlib.h>
#include <zstd.h>

namespace iosig::tier::detail {
namespace {

constexpr unsigned char zstd_magic[] = {0x28, 0xb5, 0x2f, 0xfd};
constexpr unsigned char gzip_magic[] = {0x1f, 0x8b};

bool starts_with(std::string_view bytes, const auto& magic) {
    if (bytes.size() < sizeof(magic)) return false;
    return std::equal(std::begin(magic), std::end(magic), bytes.begin(),
                      [](unsigned char m, char b) { return m == static_cast<unsigned char>(b); });
}

std::string zstd_decompress(std::string_view bytes, std::string_view name) {
    const std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)> context(ZSTD_createDCtx(),
                                                                       &ZSTD_freeDCtx);
    if (!context) throw TraceError(fmt::format("{}: cannot allocate a zstd context", name));
    std::string out;
    std::vector<char> chunk(ZSTD_DStreamOutSize());
    ZSTD_inBuffer input{bytes.data(), bytes.size(), 0};
    std::size_t pending = 0; // 0: between frames
    while (true) {
        ZSTD_outBuffer output{chunk.data(), chunk.size(), 0};
        const std::size_t before = input.pos;
        pending = ZSTD_decompressStream(context.get(), &output, &input);
        if (ZSTD_isError(pending))
            throw TraceError(fmt::format("{}: corrupt zstd data near compressed byte {}: {}", name,
                                         input.pos, ZSTD_getErrorName(pending)));
        out.append(chunk.data(), output.pos);
        const bool output_full = output.pos == output.size;
        if (input.pos == input.size && !output_full) break;
        if (input.pos == before && output.pos == 0) break; // no progress possible
    }
    if (pending != 0)
        throw TraceError(
            fmt::format("{}: the zstd stream is truncated (ends inside a frame)", name));
    return out;
}

std::string gzip_decompress(std::string_view bytes, std::string_view name) {
    z_stream stream{};
    if (inflateInit2(&stream, 15 + 32) != Z_OK) // 15 + 32: a gzip or zlib header, detected
        throw TraceError(fmt::format("{}: cannot initialise zlib", name));
    const std::unique_ptr<z_stream, decltype(&inflateEnd)> guard(&stream, &inflateEnd);
    std::string out;
    std::vector<char> chunk(1 << 20);
    std::size_t offset = 0;
    int status = Z_OK;
    while (true) {
        if (stream.avail_in == 0 && offset < bytes.size()) {
            const std::size_t n = std::min<std::size_t>(bytes.size() - offset, 1u << 30);
            stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + offset));
            stream.avail_in = static_cast<uInt>(n);
            offset += n;
        }
        stream.next_out = reinterpret_cast<Bytef*>(chunk.data());
        stream.avail_out = static_cast<uInt>(chunk.size());
        status = inflate(&stream, Z_NO_FLUSH);
        out.append(chunk.data(), chunk.size() - stream.avail_out);
        if (status == Z_STREAM_END) {
            if (stream.avail_in == 0 && offset == bytes.size()) break;
            if (inflateReset(&stream) != Z_OK) break; // another member follows
            continue;
        }
        if (status == Z_BUF_ERROR && stream.avail_in == 0 && offset == bytes.size()) break;
        if (status != Z_OK)
            throw TraceError(fmt::format("{}: corrupt gzip data near compressed byte {}: {}", name,
                                         offset - stream.avail_in,
                                         stream.msg ? stream.msg : zError(status)));
    }
    if (status != Z_STREAM_END)
        throw TraceError(fmt::format("{}: the gzip stream is truncated", name));
    return out;
}

} // namespace

Compression detect_compression(std::string_view bytes) {
    if (starts_with(bytes, zstd_magic)) return Compression::zstd;
    if (starts_with(bytes, gzip_magic)) return Compression::gzip;
    return Compression::none;
}

std::string decompress(std::string_view bytes, Compression kind, std::string_view name) {
    switch (kind) {
    case Compression::zstd:
        return zstd_decompress(bytes, name);
    case Compression::gzip:
        return gzip_decompress(bytes, name);
    case Compression::none:
        break;
    }
    return std::string(bytes);
}

std::string_view strip_compression_suffix(std::string_view name) {
    for (const std::string_view suffix : {".zst", ".zstd", ".gz"})
        if (name.size() > suffix.size() && name.ends_with(suffix))
            return name.substr(0, name.size() - suffix.size());
    return name;
}

} // namespace iosig::tier::detail
