// Compressed trace files: published cache traces come as .zst (cacheMon's cache_dataset,
// libCacheSim's readers take them directly) or .gz. Recognised by their magic bytes, not the name.
#pragma once

#include <string>
#include <string_view>

namespace iosig::tier::detail {

enum class Compression { none, zstd, gzip };

Compression detect_compression(std::string_view bytes);

// The decompressed content of `bytes`; throws TraceError naming `name` and the problem (corrupt
// or truncated stream).
std::string decompress(std::string_view bytes, Compression kind, std::string_view name);

// `name` without a trailing .zst/.zstd/.gz, so that the format can be guessed from what is left.
std::string_view strip_compression_suffix(std::string_view name);

} // namespace iosig::tier::detail
