// The per-job journal: one line per record, appended with a single write(2) by any process of the
// job and made durable with fdatasync before the action it announces (docs/preload.md, "Journal").
//
//   iosig1 <TAB> TYPE <TAB> time_ns <TAB> pid <TAB> run <TAB> field... <TAB> checksum <LF>
//
// Fields are percent-escaped (bytes < 0x20, 0x7f, '%'), so a path may hold any byte. The checksum
// (FNV-1a 64, hex) covers everything before it; a torn or damaged line fails it and is ignored.
// Writing uses caller-provided buffers only: it runs inside intercepted calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iosig::preload {

enum class RecordType : char {
    run_begin = 'B', // fields: command line
    redirect = 'R',  // staged, original, mount, persistence, global, keep_global, source, sig, why
    moved = 'M',     // staged, new original path (a rename of the symlink)
    deleted = 'D',   // staged (the program deleted the file: symlink and data)
    abandoned =
        'A',        // staged (the path appeared meanwhile: staged file removed, original call made)
    migrated = 'X', // staged, original (destination filled up: the data now lives at original)
    run_end = 'E',  // exit status
    finalized = 'F', // staged, outcome (home | deleted | kept)
};

// persistence field of a redirect record
inline constexpr std::string_view persistence_persist = "persist";
inline constexpr std::string_view persistence_temp = "temp";
inline constexpr std::string_view persistence_unspecified = "unspecified";

// Fixed-buffer record builder.
class RecordWriter {
public:
    RecordWriter(char* buffer, std::size_t capacity) : buffer_(buffer), capacity_(capacity) {}

    void begin(RecordType type, std::int64_t time_ns, long pid, std::string_view run);
    void field(std::string_view value);
    void field(std::int64_t value);
    // Appends the checksum and the newline; false if anything did not fit.
    bool finish();
    std::string_view text() const { return {buffer_, size_}; }

private:
    void raw(std::string_view text);

    char* buffer_;
    std::size_t capacity_;
    std::size_t size_ = 0;
    bool overflow_ = false;
};

struct JournalRecord {
    RecordType type{};
    std::int64_t time_ns = 0;
    long pid = 0;
    std::string run;
    std::vector<std::string> fields; // after the common ones, unescaped

    const std::string& at(std::size_t i) const; // "" when absent
};

struct JournalContents {
    std::vector<JournalRecord> records;
    std::size_t damaged_lines = 0; // checksum mismatch or torn tail: ignored
};

std::optional<JournalRecord> parse_record(std::string_view line);
JournalContents parse_journal(std::string_view text);

std::uint64_t fnv1a64(std::string_view data);

} // namespace iosig::preload
