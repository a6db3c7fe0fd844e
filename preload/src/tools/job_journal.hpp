// A job's journal read back: one entry per redirected file with everything that happened to it
// (renames, deletion, relocation, finalize), in journal order.
#pragma once

#include "common/journal_format.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace iosig::preload {

struct Redirection {
    std::string staged;   // key: unique per redirection
    std::string original; // where the program created it
    std::string current;  // `original` after the journaled renames
    std::string mount;
    std::string persistence; // persist | temp | unspecified
    bool global = false;
    bool keep_global = false;
    std::string source; // rule | pragma
    std::string signature;
    std::string why;
    std::string rule;
    std::string rule_where;
    std::string run;
    long pid = 0;
    std::int64_t time_ns = 0;
    bool deleted = false;                 // the program deleted it
    bool abandoned = false;               // never used (the path appeared meanwhile)
    bool migrated = false;                // the shim moved it home when the destination filled up
    std::optional<std::string> finalized; // finalize's outcome, once done
};

struct RunRecord {
    std::string run;
    std::int64_t begin_ns = 0;
    std::int64_t end_ns = 0; // 0: no end record (running, or the run crashed)
    std::string command;
    std::optional<int> exit_status;
};

struct JobJournal {
    std::vector<Redirection> redirections; // journal order
    std::vector<RunRecord> runs;
    std::size_t damaged_lines = 0;
    bool exists = false;

    Redirection* find(std::string_view staged);
};

JobJournal read_job_journal(const std::filesystem::path& journal);
JobJournal interpret_journal(const JournalContents& contents);

// Appends one record durably (write + fdatasync); false with errno set on failure.
bool append_journal_record(const std::filesystem::path& journal, RecordType type,
                           const std::string& run, const std::vector<std::string>& fields);

} // namespace iosig::preload
