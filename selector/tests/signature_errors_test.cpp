// The signature language, rejected input: every error says where (byte offset and length), what,
// and when a fix is clear, the replacement text. Nothing wrong is ever accepted silently.
#include "signature_test_support.hpp"

#include <gtest/gtest.h>

using namespace iosig;
using iosig::testing::expect_error;
using iosig::testing::Expected;
using iosig::testing::single_error;

TEST(SignatureContradictions, RandomSequentialPointsAtTheSecondAndNamesTheFirst) {
    single_error("random sequential", {"sequential", 7, "contradicts the earlier 'random'"});
    single_error("sequential size-per-IO(4K) random",
                 {"random", 27, "contradicts the earlier 'sequential'"});
}

TEST(SignatureContradictions, TempPersist) {
    single_error("temp persist", {"persist", 5, "contradicts the earlier 'temp'"});
    single_error("persist temp", {"temp", 8, "contradicts the earlier 'persist'"});
}

TEST(SignatureContradictions, GlobalLocal) {
    single_error("global local", {"local", 7, "contradicts the earlier 'global'"});
    single_error("LOCAL Global", {"Global", 6, "contradicts the earlier 'LOCAL'"});
}

TEST(SignatureDuplicates, AFlagGivenTwiceIsAnErrorWithARemovalFix) {
    single_error("random random", {"random", 7, "'random' is given twice", ""});
    single_error("archive temp archive", {"archive", 13, "'archive' is given twice", ""});
    single_error("tamperproof TAMPERPROOF",
                 {"TAMPERPROOF", 12, "'tamperproof' is given twice", ""});
    single_error("global global", {"global", 7, "given twice", ""});
    single_error("temp temp", {"temp", 5, "given twice", ""});
}

TEST(SignatureDuplicates, AValueGivenTwiceIsAnErrorEvenWhenEqual) {
    single_error(
        "size-per-IO(4K) size-per-IO(4K)",
        {"size-per-IO(4K)", 16, "size-per-IO is given twice (first as 'size-per-IO(4K)')", ""});
    // Equal values in other spellings are still the same value: removing the second is safe.
    single_error("size-per-IO(4K) size-per-IO(4096)", {"size-per-IO(4096)", 16, "given twice", ""});
    // Different values: which one was meant is unknowable, so no fix is offered.
    single_error(
        "totalsize(1G) totalsize(2G)",
        {"totalsize(2G)", 14, "totalsize is given twice (first as 'totalsize(1G)'): keep one"});
    single_error("MTTDL(1y) MTTDL(2y)", {"MTTDL(2y)", 10, "MTTDL is given twice"});
    single_error("availability(0.1) availability(0.1)",
                 {"availability(0.1)", 18, "given twice", ""});
}

TEST(SignatureTypos, MisspelledKeywordGetsTheKeyword) {
    single_error("sequental persist",
                 {"sequental", 0, "unknown parameter 'sequental'; did you mean 'sequential'?",
                  "sequential"});
    single_error("random persit", {"persit", 7, "did you mean 'persist'?", "persist"});
    single_error("randon", {"randon", 0, "did you mean 'random'?", "random"});
    single_error("globl", {"globl", 0, "did you mean 'global'?", "global"});
    single_error("tamperprof", {"tamperprof", 0, "did you mean 'tamperproof'?", "tamperproof"});
    single_error("archiv", {"archiv", 0, "did you mean 'archive'?", "archive"});
    single_error("totalsiz(1G)", {"totalsiz", 0, "did you mean 'totalsize'?", "totalsize"});
    single_error("MTDDL(20y)", {"MTDDL", 0, "did you mean 'MTTDL'?", "MTTDL"});
    single_error("availabilty(1e-6)",
                 {"availabilty", 0, "did you mean 'availability'?", "availability"});
}

TEST(SignatureTypos, CommonSynonymsAndAbbreviations) {
    single_error("tmp", {"tmp", 0, "did you mean 'temp'?", "temp"});
    single_error("temporary", {"temporary", 0, "did you mean 'temp'?", "temp"});
    single_error("persistent", {"persistent", 0, "did you mean 'persist'?", "persist"});
    single_error("shared", {"shared", 0, "did you mean 'global'?", "global"});
    single_error("seq", {"seq", 0, "did you mean 'sequential'?", "sequential"});
    single_error("chunksize(16M)", {"chunksize", 0, "did you mean 'size-per-IO'?", "size-per-IO"});
    single_error("MTTF(10y)", {"MTTF", 0, "did you mean 'MTTDL'?", "MTTDL"});
}

TEST(SignatureTypos, KeywordWithoutItsHyphensOrWithUnderscores) {
    single_error("sizeperIO(4K)",
                 {"sizeperIO", 0, "'sizeperIO' is spelled 'size-per-IO'", "size-per-IO"});
    single_error("size_per_io(4K)", {"size_per_io", 0, "is spelled 'size-per-IO'", "size-per-IO"});
    single_error("total-size(1G)", {"total-size", 0, "is spelled 'totalsize'", "totalsize"});
    single_error("tamper-proof", {"tamper-proof", 0, "is spelled 'tamperproof'", "tamperproof"});
}

TEST(SignatureTypos, KeywordSplitIntoSeveralWords) {
    single_error("size per IO(4K)",
                 {"size per IO", 0, "write 'size-per-IO' as one word", "size-per-IO"});
    single_error("random total size(1G)",
                 {"total size", 7, "write 'totalsize' as one word", "totalsize"});
}

TEST(SignatureTypos, UnknownWordWithoutAnyLikelyKeywordListsTheKeywords) {
    single_error("random fast",
                 {"fast", 7, "unknown parameter 'fast'; expected one of: global, local"});
}

TEST(SignatureValues, UnknownSizeUnitGetsAUnit) {
    // One unknown letter: edit distance cannot choose, a neighbouring key or M (the commonest) is
    // offered.
    single_error("size-per-io(16Q)",
                 {"Q", 14, "size-per-IO: unknown size unit 'Q' (use B, K, M, G, T or P", "M"});
    single_error("size-per-IO(16N)", {"N", 14, "unknown size unit 'N'", "M"});
    single_error("size-per-IO(16J)", {"J", 14, "unknown size unit 'J'", "K"});
    single_error("totalsize(1Gi)", {"Gi", 11, "unknown size unit 'Gi'", "GiB"});
    single_error("totalsize(1MBB)", {"MBB", 11, "unknown size unit 'MBB'", "MB"});
    single_error("totalsize(1xyz)", {"xyz", 11, "unknown size unit 'xyz'"});
}

TEST(SignatureValues, SizesMustBePositiveWholeBytesThatFit) {
    single_error("size-per-IO(0)", {"0", 12, "size-per-IO must be at least 1 byte"});
    single_error("totalsize(0.4)", {"0.4", 10, "totalsize must be at least 1 byte"});
    single_error("size-per-IO(-4K)", {"-", 12, "cannot be negative"});
    single_error("totalsize(16384P)", {"16384P", 10, "too large"});
    single_error("size-per-IO(1,5G)", {"1,5", 12, "use '.' as the decimal point", "1.5"});
    single_error("size-per-IO(M)", {"M", 12, "expected a size starting with a number"});
}

TEST(SignatureValues, DurationsNeedAUnitForMttdl) {
    // A bare number would be seconds: an MTTDL of 20 seconds is never what was meant.
    single_error("MTTDL(20)",
                 {"", 8, "MTTDL needs a unit (s, min, h, d, w or y): did you mean 20y?", "y"});
    single_error("MTTDL(6m)", {"m", 7, "'m' is ambiguous (minutes or months?)", "min"});
    single_error("MTTDL(6months)", {"months", 7, "months vary in length"});
    single_error("MTTDL(20yaers)", {"yaers", 8, "unknown duration unit 'yaers'", "years"});
    single_error("MTTDL(0s)", {"0s", 6, "MTTDL must be longer than zero"});
    single_error("MTTDL(1e400y)", {"1e400", 6, "out of range"});
}

TEST(SignatureValues, ProbabilitiesLieStrictlyBetweenZeroAndOne) {
    single_error("availability(0)", {"0", 13, "strictly between 0 and 1"});
    single_error("availability(1)", {"1", 13, "strictly between 0 and 1"});
    single_error("availability(1.5)", {"1.5", 13, "strictly between 0 and 1"});
    single_error("availability(1e-6s)", {"s", 17, "a probability takes no unit"});
    single_error("availability(0.1%)", {"0.1%", 13, "not a percentage", "0.001"});
    single_error("availability(1/1000)", {"1/1000", 13, "not a fraction", "0.001"});
}

TEST(SignatureSyntax, ValueWithoutParentheses) {
    single_error("size-per-IO 16M",
                 {"size-per-IO 16M", 0, "takes its value in parentheses", "size-per-IO(16M)"});
    single_error("size-per-IO=16M",
                 {"size-per-IO=16M", 0, "takes its value in parentheses", "size-per-IO(16M)"});
    single_error("MTTDL: 20y", {"MTTDL: 20y", 0, "takes its value in parentheses", "MTTDL(20y)"});
    single_error("size-per-IO16M",
                 {"size-per-IO16M", 0, "takes its value in parentheses", "size-per-IO(16M)"});
}

TEST(SignatureSyntax, MissingValue) {
    single_error("size-per-IO random", {"size-per-IO", 0, "size-per-IO needs a size such as 16M"});
    single_error("random totalsize", {"totalsize", 7, "totalsize needs a size"});
    single_error("MTTDL()",
                 {"()", 5, "MTTDL needs a duration such as 20y between the parentheses"});
    single_error("availability", {"availability", 0, "availability needs a probability"});
}

TEST(SignatureSyntax, MissingClosingParenthesisIsInsertedAfterTheValue) {
    single_error("size-per-IO(16M", {"", 15, "missing ')' after 'size-per-IO(16M'", ")"});
    single_error("size-per-IO(16M random", {"", 15, "missing ')'", ")"});
    single_error("MTTDL(20y totalsize(1G)", {"", 9, "missing ')'", ")"});
}

TEST(SignatureSyntax, UnterminatedParenthesisWithoutValue) {
    single_error("random size-per-IO(", {"(", 18, "unterminated 'size-per-IO('"});
}

TEST(SignatureSyntax, FlagWithAValue) {
    single_error("random(4K)", {"(4K)", 6, "'random' takes no value", ""});
    single_error("archive()", {"()", 7, "'archive' takes no value", ""});
}

TEST(SignatureSyntax, ExtraJunk) {
    single_error("random;", {";", 6, "unexpected ';': a signature needs no terminator", ""});
    single_error("random => persist", {"=>", 7, "unexpected '=>'", ""});
    single_error("random)", {")", 6, "unmatched ')'", ""});
    single_error("(4K) random", {"(4K)", 0, "must follow the parameter it belongs to"});
    single_error("random 16M", {"16M", 7, "'16M' is a value without its parameter"});
    single_error("size-per-IO(4K 8K)",
                 {"8K", 15, "unexpected '8K' in size-per-IO(...): it takes one value", ""});
    single_error("random\x01", {"\x01", 6, "unexpected '\\x01'", ""});
}

TEST(SignatureSyntax, MissingSeparatorAfterAParenthesis) {
    single_error("size-per-IO(16M)random", {"", 16, "missing space between two parameters", " "});
}

TEST(SignatureSyntax, CommasOnlyBetweenParameters) {
    single_error(", random", {",", 0, "unexpected ',' before the first parameter", ""});
    single_error("random,, persist", {",", 7, "unexpected second ','", ""});
    single_error("random, persist,", {",", 15, "trailing ','", ""});
}

TEST(SignatureSyntax, DirectiveKeywordInAParameterList) {
    single_error("sig random",
                 {"sig", 0, "'sig' starts a directive; only parameters are expected here", ""});
}

TEST(SignatureSyntax, LookAlikeCharactersFromDocumentsAreNamed) {
    // Copied from a PDF: typographic hyphens, a no-break space.
    single_error("size\u2010per-IO(4K)",
                 {"\u2010", 4, "U+2010 (hyphen) is not the ASCII hyphen '-'", "-"});
    single_error("random\u00a0persist",
                 {"\u00a0", 6, "U+00A0 (no-break space) looks like a space", " "});
    single_error("size-per-IO(16\u00a0M)",
                 {"\u00a0", 14, "U+00A0 in the value of size-per-IO", " "});
    single_error("random \u2013", {"\u2013", 7, "unexpected character U+2013 (en dash)", ""});
    single_error("random \xff", {"\xff", 7, "invalid UTF-8 byte 0xFF", ""});
}

TEST(SignatureErrors, AllProblemsAreReportedInOnePassInTextOrder) {
    const std::string_view text = "sequental persist size-per-IO(16Q) temp MTTDL(20)";
    const auto parsed = parse_signature(text);
    ASSERT_FALSE(parsed);
    ASSERT_EQ(parsed.errors.size(), 4u);
    expect_error(text, parsed.errors[0],
                 {"sequental", 0, "did you mean 'sequential'?", "sequential"});
    expect_error(text, parsed.errors[1], {"Q", 32, "unknown size unit 'Q'", "M"});
    expect_error(text, parsed.errors[2], {"temp", 35, "'temp' contradicts the earlier 'persist'"});
    expect_error(text, parsed.errors[3], {"", 48, "MTTDL needs a unit", "y"});
}

TEST(SignatureErrors, AGuessedKeywordIsNotCountedAsGiven) {
    // "sequental" is probably "sequential", but that is a guess: no contradiction with "random" is
    // reported on top of the typo.
    const auto parsed = parse_signature("random sequental");
    ASSERT_EQ(parsed.errors.size(), 1u);
    EXPECT_EQ(parsed.errors[0].replacement, "sequential");
}

TEST(SignatureErrors, ValueOfAGuessedKeywordIsStillChecked) {
    const std::string_view text = "sizeperIO(16Q)";
    const auto parsed = parse_signature(text);
    ASSERT_EQ(parsed.errors.size(), 2u);
    expect_error(text, parsed.errors[0],
                 {"sizeperIO", 0, "is spelled 'size-per-IO'", "size-per-IO"});
    expect_error(text, parsed.errors[1], {"Q", 12, "unknown size unit 'Q'", "M"});
}

TEST(SignatureErrors, ApplyingEveryReplacementGivesAValidSignature) {
    for (std::string_view text :
         {"sequental persist size-per-IO(16Q)", "sizeperIO(4K), random;",
          "size-per-IO 16M MTTDL(20)", "size-per-IO(16M random", "tmp random random"}) {
        const auto parsed = parse_signature(text);
        ASSERT_FALSE(parsed) << text;
        const auto fixed = apply_replacements(text, parsed.errors);
        ASSERT_TRUE(fixed.has_value()) << text;
        EXPECT_TRUE(parse_signature(*fixed)) << text << " -> " << *fixed;
    }
    EXPECT_EQ(*apply_replacements("sequental persist size-per-IO(16Q)",
                                  parse_signature("sequental persist size-per-IO(16Q)").errors),
              "sequential persist size-per-IO(16M)");
}

TEST(SignatureErrors, NoCorrectionWhenAnErrorHasNoReplacement) {
    const std::string_view text = "random sequential";
    EXPECT_FALSE(apply_replacements(text, parse_signature(text).errors).has_value());
}
