// The keyword table of the signature language and the guesses behind "did you mean" (internal).
#include "signature_keywords.hpp"

#include "iosig/signature.hpp"
#include "signature_spelling.hpp"

#include <array>
#include <string>
#include <vector>

namespace iosig::sig {
namespace {

template <class E>
constexpr std::uint8_t choice(E value) {
    return static_cast<std::uint8_t>(value);
}

// Order = canonical order (to_canonical writes the slots in this order).
constexpr std::array<Keyword, 12> table{{
    {"global", "global", Slot::visibility, choice(Visibility::global), ValueKind::none, "global"},
    {"local", "local", Slot::visibility, choice(Visibility::local), ValueKind::none, "local"},
    {"random", "random", Slot::pattern, choice(AccessPattern::random), ValueKind::none, "random"},
    {"sequential", "sequential", Slot::pattern, choice(AccessPattern::sequential), ValueKind::none,
     "sequential"},
    {"persist", "persist", Slot::persistence, choice(Persistence::persist), ValueKind::none,
     "persist"},
    {"temp", "temp", Slot::persistence, choice(Persistence::temp), ValueKind::none, "temp"},
    {"size-per-io", "size-per-IO", Slot::size_per_io, 0, ValueKind::size, "size-per-IO(16M)"},
    {"totalsize", "totalsize", Slot::total_size, 0, ValueKind::size, "totalsize(1G)"},
    {"mttdl", "MTTDL", Slot::mttdl, 0, ValueKind::duration, "MTTDL(20y)"},
    {"availability", "availability", Slot::availability, 0, ValueKind::probability,
     "availability(1e-6)"},
    {"archive", "archive", Slot::archive, 0, ValueKind::none, "archive"},
    {"tamperproof", "tamperproof", Slot::tamperproof, 0, ValueKind::none, "tamperproof"},
}};

// The keywords without '-' ("sizeperio"), for matching respellings; same order as `table`.
constexpr std::array<std::string_view, table.size()> squeezed{
    "global",    "local",     "random", "sequential",   "persist", "temp",
    "sizeperio", "totalsize", "mttdl",  "availability", "archive", "tamperproof"};

// `squeezed` must stay in step with `table`.
constexpr bool same_without_hyphens(std::string_view with, std::string_view without) {
    std::size_t j = 0;
    for (char c : with) {
        if (c == '-') continue;
        if (j >= without.size() || without[j] != c) return false;
        ++j;
    }
    return j == without.size();
}
constexpr bool squeezed_matches_table() {
    for (std::size_t i = 0; i < table.size(); ++i)
        if (!same_without_hyphens(table[i].canonical, squeezed[i])) return false;
    return true;
}
static_assert(squeezed_matches_table());

std::size_t index_of(const Keyword& keyword) {
    return static_cast<std::size_t>(&keyword - table.data());
}

struct Synonym {
    std::string_view word; // squeezed: lower case, no '-' or '_'
    std::string_view keyword;
};

// Words people reach for instead of the paper's keywords.
constexpr std::array<Synonym, 46> synonyms{{
    {"tmp", "temp"},
    {"temporary", "temp"},
    {"scratch", "temp"},
    {"transient", "temp"},
    {"ephemeral", "temp"},
    {"volatile", "temp"},
    {"persistent", "persist"},
    {"persistence", "persist"},
    {"durable", "persist"},
    {"permanent", "persist"},
    {"nonvolatile", "persist"},
    {"shared", "global"},
    {"nodelocal", "local"},
    {"private", "local"},
    {"rand", "random"},
    {"randomaccess", "random"},
    {"seq", "sequential"},
    {"sequence", "sequential"},
    {"streaming", "sequential"},
    {"stream", "sequential"},
    {"linear", "sequential"},
    {"iosize", "size-per-io"},
    {"chunksize", "size-per-io"},
    {"chunk", "size-per-io"},
    {"blocksize", "size-per-io"},
    {"recordsize", "size-per-io"},
    {"transfersize", "size-per-io"},
    {"requestsize", "size-per-io"},
    {"sizeperop", "size-per-io"},
    {"bs", "size-per-io"},
    {"total", "totalsize"},
    {"filesize", "totalsize"},
    {"datasize", "totalsize"},
    {"mttf", "mttdl"},
    {"reliability", "mttdl"},
    {"mtdl", "mttdl"},
    {"avail", "availability"},
    {"lossprobability", "availability"},
    {"probability", "availability"},
    {"archival", "archive"},
    {"archived", "archive"},
    {"immutable", "tamperproof"},
    {"readonly", "tamperproof"},
    {"worm", "tamperproof"},
    {"tamperresistant", "tamperproof"},
    {"tamperevident", "tamperproof"},
}};

const Keyword* by_canonical(std::string_view canonical) {
    for (const Keyword& keyword : table)
        if (keyword.canonical == canonical) return &keyword;
    return nullptr;
}

bool arity_matches(const Keyword& keyword, bool takes_value) {
    return (keyword.value != ValueKind::none) == takes_value;
}

} // namespace

std::span<const Keyword> keywords() {
    return table;
}

const Keyword* find_keyword(std::string_view word) {
    for (const Keyword& keyword : table)
        if (spelling::equals_ignoring_case(word, keyword.canonical)) return &keyword;
    return nullptr;
}

const Keyword* find_respelled(std::string_view word) {
    const std::string key = spelling::squeeze(word);
    for (std::size_t i = 0; i < table.size(); ++i)
        if (squeezed[i] == key) return &table[i];
    return nullptr;
}

bool looks_like_keyword(std::string_view word) {
    return find_respelled(word) != nullptr;
}

const Keyword* suggest_keyword(std::string_view word, bool takes_value) {
    const std::string key = spelling::squeeze(word);
    if (key.empty()) return nullptr;
    if (const Keyword* keyword = find_respelled(key)) return keyword;
    for (const Synonym& synonym : synonyms)
        if (synonym.word == key) return by_canonical(synonym.keyword);

    // Prefixes either way ("seq", "persistently"), then typos; a keyword whose arity matches the
    // word's use wins over one that does not.
    for (bool require_arity : {true, false}) {
        for (const Keyword& keyword : table) {
            if (require_arity && !arity_matches(keyword, takes_value)) continue;
            const std::string_view name = squeezed[index_of(keyword)];
            if ((key.size() >= 3 && name.starts_with(key)) ||
                (key.starts_with(name) && key.size() <= name.size() + 4))
                return &keyword;
        }
        std::vector<std::string_view> names;
        std::vector<const Keyword*> owners;
        for (const Keyword& keyword : table) {
            if (require_arity && !arity_matches(keyword, takes_value)) continue;
            names.push_back(squeezed[index_of(keyword)]);
            owners.push_back(&keyword);
        }
        if (const auto index = spelling::closest(key, names)) return owners[*index];
    }
    return nullptr;
}

std::string_view describe_value(ValueKind kind) {
    switch (kind) {
    case ValueKind::size:
        return "a size such as 16M (base 1024)";
    case ValueKind::duration:
        return "a duration such as 20y";
    case ValueKind::probability:
        return "a probability between 0 and 1 such as 1e-6";
    case ValueKind::none:
        break;
    }
    return "no value";
}

std::string_view keyword_overview() {
    return "global, local, random, sequential, persist, temp, size-per-IO(<size>), "
           "totalsize(<size>), "
           "MTTDL(<duration>), availability(<probability>), archive, tamperproof";
}

} // namespace iosig::sig
