// libFuzzer target for the signature language and its units. Beyond "no crash, no sanitizer report"
// it checks the parser's promises on every input:
//   - every error lies inside the text (offset + length <= size) and says something;
//   - a value is returned exactly when there is no error;
//   - a parsed signature round-trips: parse(to_canonical(s)) == s, and to_canonical is idempotent;
//   - the same for directives, and for sizes/durations/probabilities through format_*.
#include "iosig/signature.hpp"
#include "iosig/units.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

[[noreturn]] void fail(const char* what, std::string_view input, std::string_view detail = {}) {
    std::fprintf(stderr, "invariant violated: %s\ninput: '%.*s'\n%.*s\n", what,
                 static_cast<int>(input.size()), input.data(), static_cast<int>(detail.size()),
                 detail.data());
    std::abort();
}

void check_errors(const std::vector<iosig::SigError>& errors, std::string_view text) {
    std::size_t previous = 0;
    for (const auto& error : errors) {
        if (error.offset > text.size() || error.length > text.size() - error.offset)
            fail("error outside the text", text, error.message);
        if (error.message.empty()) fail("error without a message", text);
        if (error.offset < previous) fail("errors not in text order", text, error.message);
        previous = error.offset;
        (void)iosig::render_sig_error(text, error);
    }
    (void)iosig::apply_replacements(text, errors);
}

template <class T>
void check_unit_error(const iosig::UnitResult<T>& result, std::string_view text) {
    if (result) return;
    if (result.error.offset > text.size() ||
        result.error.length > text.size() - result.error.offset)
        fail("unit error outside the text", text, result.error.message);
    if (result.error.message.empty()) fail("unit error without a message", text);
}

void check_signature(std::string_view text) {
    const auto parsed = iosig::parse_signature(text);
    check_errors(parsed.errors, text);
    if (parsed.value.has_value() != parsed.errors.empty()) fail("value iff no errors", text);
    if (!parsed) return;
    const std::string canonical = iosig::to_canonical(*parsed.value);
    const auto again = iosig::parse_signature(canonical);
    if (!again) fail("canonical form does not parse", text, canonical);
    if (!(*again.value == *parsed.value))
        fail("canonical form does not round-trip", text, canonical);
    if (iosig::to_canonical(*again.value) != canonical)
        fail("to_canonical not idempotent", text, canonical);
}

void check_directive(std::string_view text) {
    const auto parsed = iosig::parse_directive(text);
    check_errors(parsed.errors, text);
    if (parsed.value.has_value() != parsed.errors.empty())
        fail("directive value iff no errors", text);
    if (!parsed) return;
    const std::string canonical = iosig::to_canonical(*parsed.value);
    const auto again = iosig::parse_directive(canonical);
    if (!again) fail("canonical directive does not parse", text, canonical);
    if (again.value->kind != parsed.value->kind || again.value->name != parsed.value->name ||
        !(again.value->params == parsed.value->params))
        fail("canonical directive does not round-trip", text, canonical);
}

void check_resolution(std::string_view text) {
    static const iosig::SigdefTable table = [] {
        iosig::SigdefTable t;
        iosig::Signature checkpoint;
        checkpoint.pattern = iosig::AccessPattern::sequential;
        checkpoint.persistence = iosig::Persistence::persist;
        checkpoint.size_per_io = 16u << 20;
        t.define("ckpt", checkpoint);
        t.define("scratch_files", iosig::Signature{});
        return t;
    }();
    const auto resolved = iosig::resolve_sig(text, table);
    check_errors(resolved.errors, text);
    if (resolved.value.has_value() != resolved.errors.empty())
        fail("resolved value iff no errors", text);
}

void check_units(std::string_view text) {
    if (const auto size = iosig::parse_size(text); size) {
        if (*iosig::parse_size(iosig::format_size(*size.value)).value != *size.value)
            fail("size does not round-trip", text, iosig::format_size(*size.value));
    } else {
        check_unit_error(size, text);
    }
    if (const auto seconds = iosig::parse_duration_seconds(text); seconds) {
        const std::string formatted = iosig::format_duration(*seconds.value);
        const auto again = iosig::parse_duration_seconds(formatted);
        if (!again || *again.value != *seconds.value)
            fail("duration does not round-trip", text, formatted);
    } else {
        check_unit_error(seconds, text);
    }
    if (const auto probability = iosig::parse_probability(text); probability) {
        const std::string formatted = iosig::format_probability(*probability.value);
        const auto again = iosig::parse_probability(formatted);
        if (!again || *again.value != *probability.value)
            fail("probability does not round-trip", text, formatted);
    } else {
        check_unit_error(probability, text);
    }
    check_unit_error(iosig::parse_bandwidth(text), text);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    check_signature(text);
    check_directive(text);
    check_resolution(text);
    check_units(text);
    return 0;
}
