// The IO signature language of the IOSIG paper ("Declaring IO Demand"), one parser for the Clang
// plugin's pragmas, the shim's rule files and every CLI. Reference: docs/signatures.md.
//
//   sigdef NAME params...      define a named signature
//   sig [NAME] params...       use one (NAME's params, overridden by the ones given)
//
// params (case-insensitive): global|local, random|sequential, persist|temp, size-per-IO(<size>),
// totalsize(<size>), MTTDL(<duration>), availability(<probability>), archive, tamperproof.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iosig {

enum class Visibility : std::uint8_t { unspecified, global, local };
enum class AccessPattern : std::uint8_t { unspecified, random, sequential };
enum class Persistence : std::uint8_t { unspecified, persist, temp };

// One stream's declared demand. An unset field states no demand.
struct Signature {
    Visibility visibility = Visibility::unspecified;
    AccessPattern pattern = AccessPattern::unspecified;
    Persistence persistence = Persistence::unspecified;
    std::optional<std::uint64_t> size_per_io; // bytes
    std::optional<std::uint64_t> total_size;  // bytes
    std::optional<double> mttdl_seconds;      // minimum mean time to data loss demanded
    std::optional<double>
        availability; // maximum probability of losing the data in the job's lifetime
    bool archive = false;
    bool tamperproof = false;

    friend bool operator==(const Signature&, const Signature&) = default;
};

// A problem in signature text. Offsets are bytes into the text given to the parser, so a caller
// that knows where that text sits (a pragma's tokens, a YAML scalar, a CLI argument) can point at
// it.
struct SigError {
    std::size_t offset = 0;
    std::size_t length = 0;
    std::string message;
    std::optional<std::string> replacement; // suggested text for [offset, offset+length): a fix-it
};

template <class T>
struct Parsed {
    std::optional<T> value;       // set iff errors is empty
    std::vector<SigError> errors; // every problem found, in text order
    explicit operator bool() const { return value.has_value(); }
};

enum class DirectiveKind : std::uint8_t { sig, sigdef };

// "sig [NAME] params" or "sigdef NAME params", as written (NAME not yet resolved).
struct Directive {
    DirectiveKind kind = DirectiveKind::sig;
    std::optional<std::string> name; // the sigdef's name, or the named signature a sig uses
    std::size_t name_offset = 0;     // where `name` sits in the text (for "undefined NAME" errors)
    Signature params;                // only the parameters written here
};

// Parameters only ("random persist size-per-IO(16M)"). An empty text is a valid, empty signature.
Parsed<Signature> parse_signature(std::string_view text);

// A whole directive, starting with the keyword `sig` or `sigdef`.
Parsed<Directive> parse_directive(std::string_view text);

// `base` with every parameter set in `overrides` replacing base's. A choice in `overrides` replaces
// the opposite choice in `base` (sig NAME temp overrides NAME's persist): that is an override, not
// a contradiction.
Signature apply_overrides(Signature base, const Signature& overrides);

// Canonical text: fixed parameter order, lower-case keywords, exact shortest units. For every s,
// parse_signature(to_canonical(s)).value == s, and to_canonical is idempotent on its own output.
std::string to_canonical(const Signature& signature);

// "sig [NAME] params" / "sigdef NAME params" with the parameters in canonical form.
std::string to_canonical(const Directive& directive);

// Named signatures visible at some point (a translation unit, a rules file).
class SigdefTable {
public:
    // false if `name` is defined already (the caller reports the redefinition).
    bool define(std::string name, Signature signature);
    const Signature* find(std::string_view name) const;
    const std::map<std::string, Signature, std::less<>>& all() const { return definitions_; }

private:
    std::map<std::string, Signature, std::less<>> definitions_;
};

// Parses a `sig` use with or without the leading `sig` keyword ("sig ckpt temp", "ckpt temp",
// "random persist") and resolves its NAME in `table`. A leading word that is neither a keyword nor
// a parameter is taken as a NAME; an unknown NAME is an error (with a suggestion if one is close).
Parsed<Signature> resolve_sig(std::string_view text, const SigdefTable& table);

// For terminals and logs: the message, the text, a caret line under [offset, offset+length) (tabs
// and UTF-8 kept aligned) and, if there is one, the replacement under it. Every line ends in '\n'.
//   unknown parameter 'sequental'; did you mean 'sequential'?
//     sequental persist
//     ^~~~~~~~~
//     sequential
std::string render_sig_error(std::string_view text, const SigError& error);

// `text` with every error's replacement applied, if every error has one and no two overlap (the
// basis of "did you mean: ..." for a whole signature); nothing otherwise. The result is not
// re-checked.
std::optional<std::string> apply_replacements(std::string_view text,
                                              const std::vector<SigError>& errors);

} // namespace iosig
