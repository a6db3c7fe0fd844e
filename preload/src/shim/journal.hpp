// Appending to the job's journal: one record per write(2) on an O_APPEND descriptor, then
// fdatasync, before the action the record announces (the symlink, a rename, a deletion) is taken.
// Several processes of a job append to the same file; each record is one line with its own
// checksum.
#pragma once

#include "../common/journal_format.hpp"
#include "process.hpp"

#include <initializer_list>
#include <string_view>

namespace iosig::shim {

// false if the record is not durable (the caller then does not take the action).
bool journal_append(Process& p, preload::RecordType type,
                    std::initializer_list<std::string_view> fields);

} // namespace iosig::shim
