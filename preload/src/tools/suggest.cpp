// `iosig report --suggest`: the signature a file's observed behaviour calls for.
//
//   random | sequential   from the share of writes that continued where the previous one ended
//                         (>= 80 % sequential -> sequential, else random)
//   size-per-IO           the IO size carrying the most bytes; for stdio streams at least the
//   stream
//                         buffer (4 KiB), since that is what reaches the file
//   totalsize             the final size (bytes written if it was never seen) rounded up to a power
//   of
//                         two
//   temp | persist        temp if the program deleted the file before it exited
//
// Files in one directory with the same extension and the same inferred access become one glob rule.
#include "common/paths.hpp"
#include "iosig/units.hpp"
#include "report_model.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

namespace iosig::preload {
namespace {

constexpr double sequential_threshold = 0.8;
constexpr std::uint64_t stdio_buffer = 4096;

std::uint64_t round_up_power_of_two(std::uint64_t value) {
    if (value <= 1) return 1;
    std::uint64_t p = 1;
    while (p < value && p < (std::uint64_t{1} << 62))
        p <<= 1;
    return p;
}

// The size class that carries most of the bytes (calls x class size).
std::uint64_t dominant_io_size(const FileSummary& f) {
    std::uint64_t best = 0, best_weight = 0;
    for (const auto& [bucket, calls] : f.histogram) {
        const std::uint64_t weight = calls * std::max<std::uint64_t>(bucket, 1);
        if (weight >= best_weight) {
            best_weight = weight;
            best = bucket;
        }
    }
    return best;
}

std::string extension_of(std::string_view path) {
    const auto base = basename_of(path);
    const auto dot = base.rfind('.');
    return dot == std::string_view::npos || dot == 0 ? std::string()
                                                     : std::string(base.substr(dot));
}

// A literal path as a rule pattern: glob metacharacters escaped.
std::string escape_glob(std::string_view path) {
    std::string out;
    for (const char c : path) {
        if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

// A YAML double-quoted scalar.
std::string yaml_quoted(std::string_view text) {
    std::string out = "\"";
    for (const char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            out += fmt::format("\\x{:02X}", static_cast<unsigned char>(c));
        else
            out += c;
    }
    return out + "\"";
}

} // namespace

Signature infer_signature(const FileSummary& f, std::string* rationale) {
    Signature s;
    const double sequential = f.sequential_fraction();
    s.pattern =
        sequential >= sequential_threshold ? AccessPattern::sequential : AccessPattern::random;
    std::uint64_t io = dominant_io_size(f);
    const bool stdio_mostly = f.ops.count("stdio") && f.ops.at("stdio") * 2 >= f.total_ops();
    if (stdio_mostly) io = std::max(io, stdio_buffer);
    if (io > 0) s.size_per_io = round_up_power_of_two(io);
    // The space the file needs: its final size (overwrites do not add to it); for a file deleted
    // before anyone saw its size, the bytes written.
    const std::uint64_t size = f.size() != 0 ? f.size() : f.total_bytes();
    if (size > 0) s.total_size = round_up_power_of_two(size);
    s.persistence = f.deleted ? Persistence::temp : Persistence::persist;
    if (rationale != nullptr) {
        *rationale = fmt::format(
            "{} writes ({:.0f}% sequential), {} per IO{}, {} written, size {}, {}", f.total_ops(),
            sequential * 100, human_size(static_cast<double>(io)),
            stdio_mostly ? " (stdio buffer)" : "", human_size(static_cast<double>(f.total_bytes())),
            human_size(static_cast<double>(size)),
            f.deleted ? "deleted before exit" : "kept after exit");
    }
    return s;
}

std::vector<Suggestion> suggest(const JobReport& report) {
    std::vector<Suggestion> out;
    // Group by (directory, extension, access pattern, size-per-IO, persistence).
    std::map<std::string, std::size_t> groups;
    for (const auto& f : report.files) {
        if (f.total_ops() == 0 && !f.deleted) continue; // nothing observed to infer from
        std::string rationale;
        Signature s = infer_signature(f, &rationale);
        const std::string directory(parent_of(f.path));
        const std::string extension = extension_of(f.path);
        const std::string key = directory + "\n" + extension + "\n" +
                                std::to_string(static_cast<int>(s.pattern)) + "\n" +
                                std::to_string(s.size_per_io.value_or(0)) + "\n" +
                                std::to_string(static_cast<int>(s.persistence));
        auto [it, fresh] = groups.emplace(key, out.size());
        if (fresh || extension.empty()) {
            if (!fresh) it->second = out.size();
            out.push_back({escape_glob(f.path), s, rationale, {f.path}});
            continue;
        }
        Suggestion& group = out[it->second];
        group.files.push_back(f.path);
        group.match =
            escape_glob(directory == "/" ? "" : directory) + "/*" + escape_glob(extension);
        if (s.total_size &&
            (!group.signature.total_size || *s.total_size > *group.signature.total_size))
            group.signature.total_size = s.total_size;
        group.rationale =
            fmt::format("{} files; largest {}", group.files.size(),
                        human_size(static_cast<double>(group.signature.total_size.value_or(0))));
    }
    return out;
}

std::string render_suggestions(const std::vector<Suggestion>& suggestions) {
    if (suggestions.empty()) return "# no tracked file was written: nothing to suggest\n";
    std::string out =
        "# Suggested from what was observed (iosig report --suggest). Rules file:\nrules:\n";
    for (const auto& s : suggestions) {
        out += fmt::format("  # {}\n  - match: {}\n    sig: \"{}\"\n", s.rationale,
                           yaml_quoted(s.match), to_canonical(s.signature));
    }
    // The pragma lines are YAML comments too: the whole output is a valid rules file.
    out += "\n# The same as pragmas, before the call that creates each file:\n";
    for (const auto& s : suggestions)
        out +=
            fmt::format("#   {}:\n#pragma sig {}\n",
                        s.files.size() == 1 ? s.files.front() : s.match, to_canonical(s.signature));
    return out;
}

nlohmann::json to_json(const std::vector<Suggestion>& suggestions) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& s : suggestions)
        out.push_back({{"match", s.match},
                       {"sig", to_canonical(s.signature)},
                       {"pragma", "#pragma sig " + to_canonical(s.signature)},
                       {"rationale", s.rationale},
                       {"files", s.files}});
    return out;
}

} // namespace iosig::preload
