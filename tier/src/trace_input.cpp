// Reading trace files a block at a time (trace_input.hpp): zstd through libzstd's streaming API,
// gzip through zlib. Both accept concatenated frames/members, as `zstd`/`gzip` write them when
// appending.
#include "trace_input.hpp"

#include "iosig/tier/trace.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
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

// Grows `out` by `room` bytes to be written in place; the caller shrinks it to what was written.
char* grow(std::string& out, std::size_t room) {
    const std::size_t old = out.size();
    out.resize(old + room);
    return out.data() + old;
}

} // namespace

// The file's raw bytes; the compressed decoders below read through it.
class TraceInput::Decoder {
public:
    Decoder(std::ifstream in, std::string name) : in_(std::move(in)), name_(std::move(name)) {}
    virtual ~Decoder() = default;
    virtual std::size_t read(std::string& out, std::size_t max) { return read_raw(out, max); }

protected:
    std::size_t read_raw(std::string& out, std::size_t max) {
        if (max == 0 || eof_) return 0;
        char* to = grow(out, max);
        in_.read(to, static_cast<std::streamsize>(max));
        const auto got = static_cast<std::size_t>(in_.gcount());
        out.resize(out.size() - max + got);
        if (got < max) {
            if (in_.bad())
                throw TraceError(fmt::format("{}: read error: {}", name_, std::strerror(errno)));
            eof_ = true;
        }
        raw_bytes_ += got;
        return got;
    }
    std::ifstream in_;
    std::string name_;
    bool eof_ = false;
    std::uint64_t raw_bytes_ = 0; // compressed bytes read so far
};

namespace {

class ZstdDecoder final : public TraceInput::Decoder {
public:
    using Decoder::Decoder;
    ~ZstdDecoder() override { ZSTD_freeDCtx(context_); }

    std::size_t read(std::string& out, std::size_t max) override {
        if (!context_) throw TraceError(fmt::format("{}: cannot allocate a zstd context", name_));
        std::size_t produced = 0;
        while (produced < max) {
            if (input_.pos == input_.size && !eof_) refill();
            ZSTD_outBuffer output{grow(out, max - produced), max - produced, 0};
            const std::size_t before = input_.pos;
            const std::size_t hint = ZSTD_decompressStream(context_, &output, &input_);
            out.resize(out.size() - output.size + output.pos);
            if (ZSTD_isError(hint))
                throw TraceError(fmt::format("{}: corrupt zstd data near compressed byte {}: {}",
                                             name_, consumed(), ZSTD_getErrorName(hint)));
            produced += output.pos;
            const bool stuck = output.pos == 0 && input_.pos == before;
            // A call without input between frames asks for the next header: not a truncation.
            if (!stuck) pending_ = hint;
            if (stuck && eof_ && input_.pos == input_.size) {
                if (pending_ != 0) // 0: between frames
                    throw TraceError(fmt::format(
                        "{}: the zstd stream is truncated (ends inside a frame)", name_));
                break;
            }
        }
        return produced;
    }

private:
    void refill() {
        buffer_.clear();
        read_raw(buffer_, ZSTD_DStreamInSize());
        input_ = ZSTD_inBuffer{buffer_.data(), buffer_.size(), 0};
    }
    std::uint64_t consumed() const { return raw_bytes_ - (input_.size - input_.pos); }

    ZSTD_DCtx* context_ = ZSTD_createDCtx();
    std::string buffer_;
    ZSTD_inBuffer input_{nullptr, 0, 0};
    std::size_t pending_ = 0;
};

class GzipDecoder final : public TraceInput::Decoder {
public:
    GzipDecoder(std::ifstream in, std::string name) : Decoder(std::move(in), std::move(name)) {
        if (inflateInit2(&stream_, 15 + 32) != Z_OK) // 15 + 32: a gzip or zlib header, detected
            throw TraceError(fmt::format("{}: cannot initialise zlib", name_));
    }
    ~GzipDecoder() override { inflateEnd(&stream_); }

    std::size_t read(std::string& out, std::size_t max) override {
        std::size_t produced = 0;
        while (produced < max && !finished_) {
            if (stream_.avail_in == 0) refill();
            const std::size_t room = std::min<std::size_t>(max - produced, UINT_MAX);
            stream_.next_out = reinterpret_cast<Bytef*>(grow(out, room));
            stream_.avail_out = static_cast<uInt>(room);
            const int status = inflate(&stream_, Z_NO_FLUSH);
            const std::size_t written = room - stream_.avail_out;
            out.resize(out.size() - room + written);
            produced += written;
            if (status == Z_STREAM_END) {
                if (stream_.avail_in == 0) refill();
                if (stream_.avail_in == 0) {
                    finished_ = true;
                } else if (inflateReset(&stream_) != Z_OK) { // another member follows
                    finished_ = true;
                }
                continue;
            }
            if (status == Z_BUF_ERROR && stream_.avail_in == 0 && eof_)
                throw TraceError(fmt::format("{}: the gzip stream is truncated", name_));
            if (status != Z_OK && status != Z_BUF_ERROR)
                throw TraceError(fmt::format("{}: corrupt gzip data near compressed byte {}: {}",
                                             name_, raw_bytes_ - stream_.avail_in,
                                             stream_.msg ? stream_.msg : zError(status)));
        }
        return produced;
    }

private:
    void refill() {
        buffer_.clear();
        read_raw(buffer_, std::size_t{1} << 20);
        stream_.next_in = reinterpret_cast<Bytef*>(buffer_.data());
        stream_.avail_in = static_cast<uInt>(buffer_.size());
    }

    z_stream stream_{};
    std::string buffer_;
    bool finished_ = false;
};

// A gzip member ends with its content's size modulo 2^32 (ISIZE, RFC 1952), little-endian: the
// whole content when the file is one member of less than 4 GiB, as `gzip FILE` writes it. Leaves
// `in` at the start of the file.
std::optional<std::uint64_t> gzip_trailer_size(std::ifstream& in, std::uint64_t file_size) {
    constexpr std::uint64_t smallest_member = 18; // 10-byte header, empty deflate, 8-byte trailer
    if (file_size < smallest_member) return std::nullopt;
    unsigned char trailer[4] = {};
    in.seekg(static_cast<std::streamoff>(file_size - sizeof trailer));
    in.read(reinterpret_cast<char*>(trailer), sizeof trailer);
    const bool read = in.gcount() == sizeof trailer;
    in.clear();
    in.seekg(0);
    if (!read) return std::nullopt;
    return std::uint64_t{trailer[0]} | std::uint64_t{trailer[1]} << 8 |
           std::uint64_t{trailer[2]} << 16 | std::uint64_t{trailer[3]} << 24;
}

} // namespace

Compression detect_compression(std::string_view bytes) {
    if (starts_with(bytes, zstd_magic)) return Compression::zstd;
    if (starts_with(bytes, gzip_magic)) return Compression::gzip;
    return Compression::none;
}

TraceInput::TraceInput(const std::filesystem::path& file) {
    const std::string name = file.string();
    std::ifstream in(file, std::ios::binary);
    if (!in) throw TraceError(fmt::format("{}: cannot open: {}", name, std::strerror(errno)));
    std::error_code ec;
    file_size_ = std::filesystem::file_size(file, ec);
    if (ec) throw TraceError(fmt::format("{}: {}", name, ec.message()));
    // 18 bytes: the largest zstd frame header (ZSTD_FRAMEHEADERSIZE_MAX, not in the stable API).
    char header[18] = {};
    in.read(header, sizeof header);
    const auto header_bytes = static_cast<std::size_t>(in.gcount());
    compression_ = detect_compression(std::string_view(header, header_bytes));
    in.clear();
    in.seekg(0);
    if (compression_ == Compression::none) content_size_hint_ = file_size_;
    if (compression_ == Compression::zstd) {
        const unsigned long long size = ZSTD_getFrameContentSize(header, header_bytes);
        if (size != ZSTD_CONTENTSIZE_UNKNOWN && size != ZSTD_CONTENTSIZE_ERROR)
            content_size_hint_ = size;
    }
    if (compression_ == Compression::gzip) content_size_hint_ = gzip_trailer_size(in, file_size_);
    switch (compression_) {
    case Compression::zstd:
        decoder_ = std::make_unique<ZstdDecoder>(std::move(in), name);
        break;
    case Compression::gzip:
        decoder_ = std::make_unique<GzipDecoder>(std::move(in), name);
        break;
    case Compression::none:
        decoder_ = std::make_unique<Decoder>(std::move(in), name);
        break;
    }
}

TraceInput::~TraceInput() = default;

std::size_t TraceInput::read(std::string& out, std::size_t max) {
    return decoder_->read(out, max);
}

std::string_view strip_compression_suffix(std::string_view name) {
    for (const std::string_view suffix : {".zst", ".zstd", ".gz"})
        if (name.size() > suffix.size() && name.ends_with(suffix))
            return name.substr(0, name.size() - suffix.size());
    return name;
}

} // namespace iosig::tier::detail
