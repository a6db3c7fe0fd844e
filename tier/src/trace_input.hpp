// A trace file's content, read a block at a time and decompressed on the way: published cache
// traces come as .zst (cacheMon's cache_dataset; libCacheSim's readers take them directly) or .gz.
// Compression is recognised by the magic bytes, not the name. Reading in blocks keeps the file's
// bytes (and their decompressed copy) out of memory: a loaded trace costs its requests only.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace iosig::tier::detail {

enum class Compression { none, zstd, gzip };

Compression detect_compression(std::string_view bytes);

class TraceInput {
public:
    // Throws TraceError naming the file when it cannot be opened.
    explicit TraceInput(const std::filesystem::path& file);
    ~TraceInput();
    TraceInput(const TraceInput&) = delete;
    TraceInput& operator=(const TraceInput&) = delete;

    // Appends up to `max` bytes of the (decompressed) content to `out` and returns how many; 0 only
    // at the end. Throws TraceError naming the file and the problem: a read error, corrupt data
    // (with the compressed byte where it broke), a stream that ends inside a frame or member.
    std::size_t read(std::string& out, std::size_t max);

    Compression compression() const { return compression_; }
    // The file's size on disk (for an uncompressed file, the content's size).
    std::uint64_t file_size() const { return file_size_; }
    // The content's size where the file says it before it is read: an uncompressed file's size,
    // the size a zstd file's first frame header records (the whole content when, as `zstd FILE`
    // writes it, there is one frame), or the size modulo 2^32 a gzip file's last member's trailer
    // records (the whole content when, as `gzip FILE` writes it, there is one member under 4 GiB).
    // A hint for reserving memory, nothing more.
    std::optional<std::uint64_t> content_size_hint() const { return content_size_hint_; }

    class Decoder; // one per Compression, in trace_input.cpp

private:
    Compression compression_ = Compression::none;
    std::uint64_t file_size_ = 0;
    std::optional<std::uint64_t> content_size_hint_;
    std::unique_ptr<Decoder> decoder_;
};

// `name` without a trailing .zst/.zstd/.gz, so that the format can be guessed from what is left.
std::string_view strip_compression_suffix(std::string_view name);

} // namespace iosig::tier::detail
