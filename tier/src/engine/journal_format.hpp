// The journal's records on disk (journal.hpp): {u32 crc32(type..payload), u16 type, u16 length,
// payload}, shared by the appends and replay (journal.cpp) and the rewrite (journal_rewrite.cpp).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>
#include <zlib.h>

namespace iosig::tier::detail::journal_format {

enum Type : std::uint16_t {
    header = 1,
    file = 2,
    dirty = 3,
    clean = 4,
    size = 5,
    truncate = 6,
    truncate_done = 7, // the home file was cut to its last TRUNCATE record's length
    commit = 8,        // the records before a byte offset are backed by durable line data
    // A FILE record that also names the file's inode (session 32): recovery writes nothing into
    // another file found at the path. Replaces FILE in new journals; FILE is still read.
    file_at_inode = 9,
    // A FILE_AT_INODE record that also gives the file's birth time (session 35): recovery tells
    // the file from a later one in the same inode number. Replaces FILE_AT_INODE in new journals;
    // FILE_AT_INODE is still read.
    file_born = 10,
    // The handle of the file a FILE_BORN record just named (session 36): recovery finds the file
    // by it after a rename or a move (File::open_by_handle).
    file_handle = 11,
    // Bytes of a dirty line that a write changed (session 36, TierConfig::dirty_bytes_only):
    // recovery writes only the parts a slot's DIRTY_PART records name since its DIRTY record.
    dirty_part = 12,
    // The file id's records so far name a file the engine forgot, and the id now names another
    // (session 41, Journal::reuse_file_id): replay drops the old file's path, size, cut and any
    // DIRTY record of it left without its CLEAN, before it reads the new file's records.
    file_forgotten = 13,
};
inline constexpr std::uint64_t magic = 0x314a54474953'4f49ull; // "IOSIGTJ1" little-endian
// 2 (session 30): the header names its page cache, and COMMIT records say which DIRTY records a
// recovery after a power cut may trust. A version-1 journal synced every DIRTY record after its
// line's data: recovery trusts all of them. 3 (session 35): FILE_BORN records. 4 (session 36):
// FILE_HANDLE and DIRTY_PART records. 5 (session 41): FILE_FORGOTTEN records. Replay reads every
// version up to this one, and refuses a later one or a record type it does not know.
inline constexpr std::uint32_t version = 5;
inline constexpr std::size_t head = 8; // crc + type + length

#pragma pack(push, 1)
struct HeaderPayloadV1 {
    std::uint64_t magic, line_size, slots;
    std::uint32_t version;
};
struct HeaderPayload {
    std::uint64_t magic, line_size, slots;
    std::uint32_t version;
    std::uint64_t page_cache; // page_cache_instance() of the journal when it was started
};
struct CommitPayload {
    std::uint64_t end; // every record that ends at or before this byte offset
};
struct DirtyPayload {
    std::uint32_t slot, file;
    std::uint64_t line;
    std::int64_t size;
};
struct DirtyPartPayload {
    std::uint32_t slot, begin, end;
};
struct SizePayload {
    std::uint32_t file;
    std::int64_t size;
};
#pragma pack(pop)

inline std::uint32_t checksum(const char* data, std::size_t n) {
    return static_cast<std::uint32_t>(
        crc32(0, reinterpret_cast<const Bytef*>(data), static_cast<uInt>(n)));
}

// Appends one record to `out`.
inline void encode_record(std::vector<char>& out, std::uint16_t type, const void* payload,
                          std::uint16_t length) {
    const std::size_t at = out.size();
    out.resize(at + head + length);
    char* record = out.data() + at;
    std::memcpy(record + 4, &type, 2);
    std::memcpy(record + 6, &length, 2);
    std::memcpy(record + head, payload, length);
    const std::uint32_t crc = checksum(record + 4, 4u + length);
    std::memcpy(record, &crc, 4);
}

// A FILE_BORN record's payload: the id, the inode number, the birth time in ns (0: unknown), the
// file system's type and id (0: unknown), then the home path's bytes. (FILE_AT_INODE's: the id,
// the inode number and the path.)
inline constexpr std::size_t file_born_head = 36;
inline std::vector<char> file_payload(std::uint32_t id, std::uint64_t inode, std::int64_t born_ns,
                                      std::uint64_t fs_type, std::uint64_t fs_id,
                                      const std::string& path) {
    std::vector<char> payload(file_born_head + path.size());
    std::memcpy(payload.data(), &id, 4);
    std::memcpy(payload.data() + 4, &inode, 8);
    std::memcpy(payload.data() + 12, &born_ns, 8);
    std::memcpy(payload.data() + 20, &fs_type, 8);
    std::memcpy(payload.data() + 28, &fs_id, 8);
    std::memcpy(payload.data() + file_born_head, path.data(), path.size());
    return payload;
}

// A FILE_HANDLE record's payload: the id, the handle's type, then its bytes (1 to 128).
inline constexpr std::size_t file_handle_head = 8;
inline constexpr std::size_t file_handle_most = 128; // MAX_HANDLE_SZ
inline std::vector<char> handle_payload(std::uint32_t id, std::int32_t type,
                                        const std::string& bytes) {
    std::vector<char> payload(file_handle_head + bytes.size());
    std::memcpy(payload.data(), &id, 4);
    std::memcpy(payload.data() + 4, &type, 4);
    std::memcpy(payload.data() + file_handle_head, bytes.data(), bytes.size());
    return payload;
}

} // namespace iosig::tier::detail::journal_format
