// iosig-tier-recover: writes home the dirty lines crashed engines left in their cache files,
// without opening a cache (TierCache::recover), for a node's boot before programs touch the home
// files.
#include "iosig/tier/engine.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

using iosig::tier::RecoveryReport;

std::string describe(const RecoveryReport& r) {
    if (!r.journal_found) return "no journal: nothing to recover";
    std::string text = fmt::format("{} dirty lines in the journal, {} written home", r.dirty_lines,
                                   r.lines_written_home);
    if (r.files_found_moved)
        text += fmt::format(" ({} files found moved since)", r.files_found_moved);
    if (r.missing_files) text += fmt::format("; {} of files gone", r.missing_files);
    if (r.lines_of_replaced_files)
        text += fmt::format("; {} of files another replaced", r.lines_of_replaced_files);
    if (r.power_cut)
        text += fmt::format("; after a power cut, {} uncommitted left out", r.uncommitted_lines);
    if (r.torn_tail) text += "; the journal's last record was torn";
    return text;
}

nlohmann::json as_json(const RecoveryReport& r) {
    return {{"journal_found", r.journal_found},
            {"dirty_lines", r.dirty_lines},
            {"lines_written_home", r.lines_written_home},
            {"files_found_moved", r.files_found_moved},
            {"missing_files", r.missing_files},
            {"lines_of_replaced_files", r.lines_of_replaced_files},
            {"power_cut", r.power_cut},
            {"uncommitted_lines", r.uncommitted_lines},
            {"torn_tail", r.torn_tail}};
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"Writes home the dirty lines crashed iosig tier engines left in their cache files "
                 "(each cache file's journal is <cache file>.journal), and empties the journals. "
                 "Run it before programs use the home files, e.g. at boot. Exit status: 0 when "
                 "every cache file was recovered (or had nothing to recover), 1 when one could not "
                 "be (its journal is kept; the message says why), 2 for bad arguments.",
                 "iosig-tier-recover"};
    std::vector<std::string> cache_files;
    bool json = false;
    app.add_option("cache_files", cache_files, "the cache files of the engines to recover")
        ->required();
    app.add_flag("--json", json, "one JSON object per cache file, keyed by its path");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        return app.exit(error) == 0 ? 0 : 2; // --help: 0
    }

    int status = 0;
    nlohmann::json reports = nlohmann::json::object();
    for (const std::string& cache_file : cache_files) {
        try {
            const RecoveryReport report = iosig::tier::TierCache::recover(cache_file);
            if (json)
                reports[cache_file] = as_json(report);
            else
                std::printf("%s: %s\n", cache_file.c_str(), describe(report).c_str());
        } catch (const iosig::tier::TierError& e) {
            std::fprintf(stderr, "iosig-tier-recover: %s\n", e.what());
            if (json) reports[cache_file] = {{"error", e.what()}};
            status = 1;
        }
    }
    if (json) std::printf("%s\n", reports.dump(2).c_str());
    return status;
}
