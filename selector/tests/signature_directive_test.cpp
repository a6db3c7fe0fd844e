// Directives: `sigdef NAME params` defines a named signature, `sig [NAME] params` uses one and may
// override its values; resolve_sig looks NAMEs up with "did you mean" for unknown ones.
#include "iosig/units.hpp"
#include "signature_test_support.hpp"

#include <gtest/gtest.h>

using namespace iosig;
using iosig::testing::expect_error;

namespace {

Directive directive_ok(std::string_view text) {
    const auto parsed = parse_directive(text);
    std::string details;
    for (const auto& error : parsed.errors)
        details += render_sig_error(text, error);
    EXPECT_TRUE(parsed.value.has_value()) << "'" << text << "' was rejected:\n" << details;
    return parsed.value.value_or(Directive{});
}

SigError single_directive_error(std::string_view text, const iosig::testing::Expected& expected) {
    const auto parsed = parse_directive(text);
    EXPECT_FALSE(parsed.value.has_value()) << "'" << text << "' was accepted";
    std::string all;
    for (const auto& error : parsed.errors)
        all += render_sig_error(text, error);
    EXPECT_EQ(parsed.errors.size(), 1u) << all;
    if (parsed.errors.empty()) return {};
    expect_error(text, parsed.errors.front(), expected);
    return parsed.errors.front();
}

// sigdef ckpt sequential persist size-per-IO(64M) MTTDL(20y); sigdef scratch temp random
SigdefTable paper_table() {
    SigdefTable table;
    EXPECT_TRUE(table.define(
        "ckpt", parse_signature("sequential persist size-per-IO(64M) MTTDL(20y)").value.value()));
    EXPECT_TRUE(
        table.define("scratch", parse_signature("temp random size-per-IO(4K)").value.value()));
    EXPECT_TRUE(table.define("Mesh-Output", parse_signature("global sequential").value.value()));
    return table;
}

Signature resolve_ok(std::string_view text, const SigdefTable& table) {
    const auto resolved = resolve_sig(text, table);
    std::string details;
    for (const auto& error : resolved.errors)
        details += render_sig_error(text, error);
    EXPECT_TRUE(resolved.value.has_value()) << "'" << text << "' was rejected:\n" << details;
    return resolved.value.value_or(Signature{});
}

} // namespace

TEST(SignatureDirective, SigdefNamesItsParameters) {
    const Directive d = directive_ok("sigdef ckpt sequential persist size-per-IO(64M)");
    EXPECT_EQ(d.kind, DirectiveKind::sigdef);
    EXPECT_EQ(d.name, "ckpt");
    EXPECT_EQ(d.name_offset, 7u);
    EXPECT_EQ(d.params, parse_signature("sequential persist size-per-IO(64M)").value);
}

TEST(SignatureDirective, SigWithParametersOnly) {
    const Directive d = directive_ok("sig random persist");
    EXPECT_EQ(d.kind, DirectiveKind::sig);
    EXPECT_FALSE(d.name.has_value());
    EXPECT_EQ(d.params, parse_signature("random persist").value);
}

TEST(SignatureDirective, SigWithANameAndOverrides) {
    const Directive d = directive_ok("sig ckpt temp size-per-IO(1M)");
    EXPECT_EQ(d.kind, DirectiveKind::sig);
    EXPECT_EQ(d.name, "ckpt");
    EXPECT_EQ(d.name_offset, 4u);
    EXPECT_EQ(d.params, parse_signature("temp size-per-IO(1M)").value); // only what is written here
}

TEST(SignatureDirective, DirectiveKeywordsAreCaseInsensitiveNamesAreNot) {
    EXPECT_EQ(directive_ok("SIGDEF Ckpt RANDOM").name, "Ckpt");
    EXPECT_EQ(directive_ok("Sig ckpt").kind, DirectiveKind::sig);
}

TEST(SignatureDirective, NamesAreIdentifiersWithDigitsUnderscoresAndHyphens) {
    for (std::string_view name : {"ps1", "ps_2", "_private", "mesh-output", "A9"}) {
        EXPECT_EQ(directive_ok(std::string("sigdef ") + std::string(name) + " random").name, name);
    }
    // A plugin that joins pragma tokens with blanks: "mesh - output".
    EXPECT_EQ(directive_ok("sigdef mesh - output random").name, "mesh-output");
}

TEST(SignatureDirective, EmptySigAndEmptySigdefAreValid) {
    EXPECT_EQ(directive_ok("sig").params, Signature{});
    const Directive d = directive_ok("sigdef baseline");
    EXPECT_EQ(d.name, "baseline");
    EXPECT_EQ(d.params, Signature{});
}

TEST(SignatureDirective, SigdefWithoutAName) {
    single_directive_error("sigdef", {"", 6, "sigdef needs a NAME first"});
    single_directive_error("sigdef random temp",
                           {"", 7,
                            "sigdef needs a NAME before its parameters; 'random' is a "
                            "parameter"});
    single_directive_error("sigdef size-per-IO(4K)", {"", 7, "needs a NAME"});
}

TEST(SignatureDirective, DirectiveKeywordsCannotBeNames) {
    single_directive_error("sigdef sig random", {"sig", 7, "'sig' cannot be a NAME"});
    single_directive_error("sig SIGDEF", {"SIGDEF", 4, "cannot be a NAME"});
}

TEST(SignatureDirective, ContradictionsAndDuplicatesInsideADirective) {
    single_directive_error("sigdef ckpt random sequential",
                           {"sequential", 19, "contradicts the earlier 'random'"});
    single_directive_error("sig ckpt temp temp", {"temp", 14, "given twice", ""});
}

TEST(SignatureDirective, MissingOrMisspelledDirectiveKeyword) {
    single_directive_error("", {"", 0, "expected a directive"});
    single_directive_error("random persist",
                           {"", 0, "a directive starts with 'sig' or 'sigdef'", "sig "});
    single_directive_error("sigdfe ckpt random", {"sigdfe", 0, "did you mean 'sigdef'?", "sigdef"});
    single_directive_error("sgi random", {"sgi", 0, "did you mean 'sig'?", "sig"});
    single_directive_error("#pragma sig random", {"#pragma ", 0, "leave out '#pragma'", ""});
}

TEST(SignatureDirective, ANameMustComeFirst) {
    const std::string_view text = "sig random ckpt";
    const auto parsed = parse_directive(text);
    ASSERT_EQ(parsed.errors.size(), 1u);
    expect_error(text, parsed.errors[0], {"ckpt", 11, "(a signature NAME goes right after 'sig')"});
}

TEST(SignatureDirective, CanonicalDirective) {
    EXPECT_EQ(to_canonical(directive_ok("SIGDEF ckpt Persist Sequential size-per-IO(65536K)")),
              "sigdef ckpt sequential persist size-per-io(64M)");
    EXPECT_EQ(to_canonical(directive_ok("sig  ckpt   temp")), "sig ckpt temp");
    EXPECT_EQ(to_canonical(directive_ok("sig random")), "sig random");
    EXPECT_EQ(to_canonical(directive_ok("sig")), "sig");
    EXPECT_EQ(to_canonical(directive_ok("sigdef empty")), "sigdef empty");
}

TEST(SignatureOverrides, OverridesReplaceEveryValueTheySet) {
    const Signature base =
        parse_signature("global sequential persist size-per-IO(64M) totalsize(10G) MTTDL(20y) "
                        "availability(1e-6)")
            .value.value();
    const Signature overrides =
        parse_signature(
            "local random temp size-per-IO(4K) totalsize(1G) MTTDL(1y) availability(0.01)")
            .value.value();
    EXPECT_EQ(apply_overrides(base, overrides), overrides);
}

TEST(SignatureOverrides, UnsetOverridesKeepTheBase) {
    const Signature base =
        parse_signature("global sequential persist size-per-IO(64M) MTTDL(20y) archive")
            .value.value();
    EXPECT_EQ(apply_overrides(base, Signature{}), base);
    const Signature merged = apply_overrides(base, parse_signature("temp").value.value());
    EXPECT_EQ(merged,
              parse_signature("global sequential temp size-per-IO(64M) MTTDL(20y) archive").value);
}

TEST(SignatureOverrides, FlagsCanBeAddedButNotRemoved) {
    const Signature base = parse_signature("archive").value.value();
    EXPECT_TRUE(apply_overrides(base, Signature{}).archive);
    EXPECT_TRUE(
        apply_overrides(Signature{}, parse_signature("tamperproof").value.value()).tamperproof);
}

TEST(SigdefTableSpec, DefineFindAndRefuseRedefinition) {
    SigdefTable table;
    EXPECT_EQ(table.find("ckpt"), nullptr);
    EXPECT_TRUE(table.define("ckpt", parse_signature("random").value.value()));
    EXPECT_FALSE(table.define("ckpt", parse_signature("sequential").value.value()));
    ASSERT_NE(table.find("ckpt"), nullptr);
    EXPECT_EQ(table.find("ckpt")->pattern, AccessPattern::random); // the first definition stays
    EXPECT_EQ(table.find("CKPT"), nullptr);                        // names are case-sensitive
    EXPECT_EQ(table.all().size(), 1u);
}

TEST(SignatureResolve, ANameWithOverridesFromTheTable) {
    const SigdefTable table = paper_table();
    // The paper's Fig. 2: a sig uses a defined signature and overwrites some of its parameters.
    EXPECT_EQ(resolve_ok("sig ckpt temp", table),
              parse_signature("sequential temp size-per-IO(64M) MTTDL(20y)").value);
    EXPECT_EQ(resolve_ok("ckpt temp", table), resolve_ok("sig ckpt temp", table));
    EXPECT_EQ(resolve_ok("ckpt random size-per-IO(1M)", table),
              parse_signature("random persist size-per-IO(1M) MTTDL(20y)").value);
    EXPECT_EQ(resolve_ok("sig ckpt", table), *table.find("ckpt"));
    EXPECT_EQ(resolve_ok("Mesh-Output", table), *table.find("Mesh-Output"));
}

TEST(SignatureResolve, WithoutANameItIsJustTheParameters) {
    const SigdefTable table = paper_table();
    EXPECT_EQ(resolve_ok("random persist", table), parse_signature("random persist").value);
    EXPECT_EQ(resolve_ok("sig random persist", table), parse_signature("random persist").value);
    EXPECT_EQ(resolve_ok("", table), Signature{});
    EXPECT_EQ(resolve_ok("sig", table), Signature{});
}

TEST(SignatureResolve, UnknownNameSuggestsTheClosestDefinedName) {
    const SigdefTable table = paper_table();
    const std::string_view text = "sig ckp temp";
    const auto resolved = resolve_sig(text, table);
    ASSERT_FALSE(resolved);
    ASSERT_EQ(resolved.errors.size(), 1u);
    expect_error(text, resolved.errors[0],
                 {"ckp", 4, "unknown signature 'ckp'; did you mean 'ckpt'?", "ckpt"});
}

TEST(SignatureResolve, UnknownNameInTheWrongCaseSuggestsTheRightCase) {
    const SigdefTable table = paper_table();
    const std::string_view text = "CKPT";
    const auto resolved = resolve_sig(text, table);
    ASSERT_EQ(resolved.errors.size(), 1u);
    expect_error(text, resolved.errors[0], {"CKPT", 0, "did you mean 'ckpt'?", "ckpt"});
}

TEST(SignatureResolve, AMisspelledKeywordFirstIsNeitherNameNorParameter) {
    const SigdefTable table = paper_table();
    const std::string_view text = "sequental persist";
    const auto resolved = resolve_sig(text, table);
    ASSERT_EQ(resolved.errors.size(), 1u);
    expect_error(text, resolved.errors[0],
                 {"sequental", 0,
                  "'sequental' is neither a parameter nor a defined signature; did you "
                  "mean 'sequential'?",
                  "sequential"});
}

TEST(SignatureResolve, UnknownNameWithNothingCloseListsTheDefinedNames) {
    const SigdefTable table = paper_table();
    const std::string_view text = "sig output temp";
    const auto resolved = resolve_sig(text, table);
    ASSERT_EQ(resolved.errors.size(), 1u);
    expect_error(
        text, resolved.errors[0],
        {"output", 4,
         "'output' is neither a parameter nor a defined signature (defined: Mesh-Output, ckpt, "
         "scratch)"});
}

TEST(SignatureResolve, ErrorsInTheOverridesAreReportedWithTheUnknownName) {
    const SigdefTable table = paper_table();
    const std::string_view text = "sig ckp temp persist";
    const auto resolved = resolve_sig(text, table);
    ASSERT_EQ(resolved.errors.size(), 2u);
    expect_error(text, resolved.errors[0], {"ckp", 4, "did you mean 'ckpt'?", "ckpt"});
    expect_error(text, resolved.errors[1], {"persist", 13, "contradicts the earlier 'temp'"});
}

TEST(SignatureResolve, ASigdefIsNotAUse) {
    const SigdefTable table = paper_table();
    const std::string_view text = "sigdef ckpt temp";
    const auto resolved = resolve_sig(text, table);
    ASSERT_FALSE(resolved);
    expect_error(text, resolved.errors[0], {"sigdef", 0, "not a definition", "sig"});
}
