// Crash recovery (recovery.cpp): the dirty lines a crashed engine left in its cache file, written
// to their home files before the engine opens again (docs/tier.md, "The journal and crash
// recovery").
#pragma once

#include "iosig/tier/engine.hpp"
#include "journal.hpp"

#include <cstdint>
#include <filesystem>

namespace iosig::tier::detail {

// The journal beside a cache file: <cache file>.journal.
std::filesystem::path journal_path(const TierConfig& config);

// The journal's records (Journal::replay), or TierError naming what this iosig cannot read in it
// (a journal of a newer one: it is kept).
JournalState replay_or_refuse(Journal& journal);

// Writes the dirty lines `state` lists to their home files and syncs them. `page_cache`: the one
// this engine runs under (page_cache_instance); another in the journal's header means a power
// cut, after which only committed DIRTY records are trusted. Throws TierError, naming the file
// and the cause, when a line cannot be written home now but might be later (the caller keeps the
// journal then).
RecoveryReport write_home_after_crash(const TierConfig& config, JournalState state,
                                      std::uint64_t page_cache);

} // namespace iosig::tier::detail
