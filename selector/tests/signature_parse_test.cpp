// The signature language, accepted input: every keyword of the IOSIG paper, every unit, spacing,
// separators and the token-by-token text the Clang plugin reconstructs.
#include "iosig/units.hpp"
#include "signature_test_support.hpp"

#include <gtest/gtest.h>

using namespace iosig;
using iosig::testing::parse_ok;

namespace {
constexpr std::uint64_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024, TiB = GiB * 1024,
                        PiB = TiB * 1024;
}

TEST(SignatureKeywords, EmptyTextIsAValidSignatureWithoutDemands) {
    EXPECT_EQ(parse_ok(""), Signature{});
    EXPECT_EQ(parse_ok("  \t\n "), Signature{});
}

TEST(SignatureKeywords, VisibilityGlobalOrLocal) {
    EXPECT_EQ(parse_ok("global").visibility, Visibility::global);
    EXPECT_EQ(parse_ok("local").visibility, Visibility::local);
    EXPECT_EQ(parse_ok("random").visibility, Visibility::unspecified);
}

TEST(SignatureKeywords, PatternRandomOrSequential) {
    EXPECT_EQ(parse_ok("random").pattern, AccessPattern::random);
    EXPECT_EQ(parse_ok("sequential").pattern, AccessPattern::sequential);
    EXPECT_EQ(parse_ok("global").pattern, AccessPattern::unspecified);
}

TEST(SignatureKeywords, PersistenceIsPersistOrTemp) {
    EXPECT_EQ(parse_ok("persist").persistence, Persistence::persist);
    EXPECT_EQ(parse_ok("temp").persistence, Persistence::temp);
    EXPECT_EQ(parse_ok("random").persistence, Persistence::unspecified);
}

TEST(SignatureKeywords, SizePerIoAndTotalsizeTakeSizes) {
    EXPECT_EQ(parse_ok("size-per-IO(16M)").size_per_io, 16 * MiB);
    EXPECT_EQ(parse_ok("totalsize(6G)").total_size, 6 * GiB);
    EXPECT_FALSE(parse_ok("random").size_per_io.has_value());
    EXPECT_FALSE(parse_ok("random").total_size.has_value());
}

TEST(SignatureKeywords, MttdlTakesADuration) {
    EXPECT_DOUBLE_EQ(*parse_ok("MTTDL(20y)").mttdl_seconds, 20 * seconds_per_year);
    EXPECT_FALSE(parse_ok("random").mttdl_seconds.has_value());
}

TEST(SignatureKeywords, AvailabilityTakesAProbability) {
    EXPECT_DOUBLE_EQ(*parse_ok("availability(1e-6)").availability, 1e-6);
    EXPECT_DOUBLE_EQ(*parse_ok("availability(0.001)").availability, 0.001);
    EXPECT_FALSE(parse_ok("random").availability.has_value());
}

TEST(SignatureKeywords, ArchiveAndTamperproofAreFlags) {
    EXPECT_TRUE(parse_ok("archive").archive);
    EXPECT_TRUE(parse_ok("tamperproof").tamperproof);
    EXPECT_FALSE(parse_ok("random").archive);
    EXPECT_FALSE(parse_ok("random").tamperproof);
}

TEST(SignatureKeywords, AllParametersTogetherInAnyOrder) {
    const Signature s = parse_ok("tamperproof availability(1e-6) archive MTTDL(20y) totalsize(1G) "
                                 "size-per-IO(512K) temp sequential local");
    EXPECT_EQ(s.visibility, Visibility::local);
    EXPECT_EQ(s.pattern, AccessPattern::sequential);
    EXPECT_EQ(s.persistence, Persistence::temp);
    EXPECT_EQ(s.size_per_io, 512 * KiB);
    EXPECT_EQ(s.total_size, 1 * GiB);
    EXPECT_DOUBLE_EQ(*s.mttdl_seconds, 20 * seconds_per_year);
    EXPECT_DOUBLE_EQ(*s.availability, 1e-6);
    EXPECT_TRUE(s.archive);
    EXPECT_TRUE(s.tamperproof);
}

TEST(SignatureKeywords, KeywordsAreCaseInsensitive) {
    const Signature expected =
        parse_ok("global random persist size-per-IO(4K) totalsize(1G) MTTDL(1y) "
                 "availability(0.01) archive tamperproof");
    EXPECT_EQ(
        parse_ok("GLOBAL RANDOM PERSIST SIZE-PER-IO(4K) TOTALSIZE(1G) mttdl(1y) AVAILABILITY(0.01) "
                 "ARCHIVE TAMPERPROOF"),
        expected);
    EXPECT_EQ(
        parse_ok("Global Random Persist Size-Per-Io(4k) TotalSize(1g) Mttdl(1Y) Availability(0.01) "
                 "Archive TamperProof"),
        expected);
}

TEST(SignatureKeywords, ThePapersEvaluationSignatures) {
    // Section 7 of the IOSIG paper: the streams whose placements the selection tests check.
    EXPECT_EQ(parse_ok("global random size-per-IO(512K) totalsize(1G)").visibility,
              Visibility::global);
    EXPECT_DOUBLE_EQ(*parse_ok("random MTTDL(20y) size-per-IO(512K) totalsize(1G)").mttdl_seconds,
                     20 * seconds_per_year);
    EXPECT_EQ(parse_ok("random persist size-per-IO(512K) totalsize(1G)").persistence,
              Persistence::persist);
    EXPECT_EQ(parse_ok("sequential persist size-per-IO(16M) totalsize(6G)").size_per_io, 16 * MiB);
    EXPECT_EQ(parse_ok("sequential persist size-per-IO(1G) totalsize(6G)").size_per_io, 1 * GiB);
}

TEST(SignatureUnits, EverySizeUnitIsBase1024) {
    const std::pair<const char*, std::uint64_t> cases[] = {
        {"1", 1},      {"1B", 1},
        {"1b", 1},     {"1bytes", 1},
        {"1K", KiB},   {"1k", KiB},
        {"1KB", KiB},  {"1KiB", KiB},
        {"1kib", KiB}, {"1M", MiB},
        {"1MB", MiB},  {"1MiB", MiB},
        {"1G", GiB},   {"1GB", GiB},
        {"1GiB", GiB}, {"1T", TiB},
        {"1TB", TiB},  {"1TiB", TiB},
        {"1P", PiB},   {"1PB", PiB},
        {"1PiB", PiB}, {"1.5G", 3 * GiB / 2},
        {"0.5K", 512}, {"1536", 1536},
        {"1e3", 1000}, {"2.5e1K", 25 * KiB},
    };
    for (const auto& [text, bytes] : cases) {
        SCOPED_TRACE(text);
        EXPECT_EQ(parse_ok(std::string("size-per-IO(") + text + ")").size_per_io, bytes);
        EXPECT_EQ(parse_ok(std::string("totalsize(") + text + ")").total_size, bytes);
    }
}

TEST(SignatureUnits, EveryDurationUnit) {
    const std::pair<const char*, double> cases[] = {
        {"1s", 1},
        {"1sec", 1},
        {"2seconds", 2},
        {"1min", 60},
        {"3mins", 180},
        {"1minute", 60},
        {"1h", 3600},
        {"1hr", 3600},
        {"2hours", 7200},
        {"1d", 86400},
        {"2days", 172800},
        {"1w", 604800},
        {"1week", 604800},
        {"1y", seconds_per_year},
        {"20years", 20 * seconds_per_year},
        {"20yr", 20 * seconds_per_year},
        {"1.5y", 1.5 * seconds_per_year},
        {"5ms", 0.005},
        {"5us", 5e-6},
        {"5ns", 5e-9},
        {"5\u00b5s", 5e-6},
    };
    for (const auto& [text, seconds] : cases) {
        SCOPED_TRACE(text);
        EXPECT_DOUBLE_EQ(*parse_ok(std::string("MTTDL(") + text + ")").mttdl_seconds, seconds);
    }
}

TEST(SignatureUnits, ProbabilityInDecimalOrExponentNotation) {
    EXPECT_DOUBLE_EQ(*parse_ok("availability(1e-6)").availability, 1e-6);
    EXPECT_DOUBLE_EQ(*parse_ok("availability(1E-6)").availability, 1e-6);
    EXPECT_DOUBLE_EQ(*parse_ok("availability(0.5)").availability, 0.5);
    EXPECT_DOUBLE_EQ(*parse_ok("availability(.25)").availability, 0.25);
    EXPECT_DOUBLE_EQ(*parse_ok("availability(0.999999)").availability, 0.999999);
}

TEST(SignatureSpacing, BlanksAroundParenthesesAndBetweenNumberAndUnit) {
    const Signature expected = parse_ok("size-per-IO(16M) MTTDL(20y)");
    EXPECT_EQ(parse_ok("size-per-IO (16M) MTTDL (20y)"), expected);
    EXPECT_EQ(parse_ok("size-per-IO( 16M ) MTTDL( 20y )"), expected);
    EXPECT_EQ(parse_ok("size-per-IO(16 M) MTTDL(20 y)"), expected);
    EXPECT_EQ(parse_ok("size-per-IO(16 MiB) MTTDL(20 years)"), expected);
    EXPECT_EQ(parse_ok("  size-per-IO(16M)\t\n MTTDL(20y)  "), expected);
}

TEST(SignatureSpacing, ClangPluginTokenTextWithBlanksAroundEveryToken) {
    // A pragma's tokens joined with blanks, as a plugin that ignores hasLeadingSpace() would pass
    // them.
    const Signature expected = parse_ok("random persist size-per-IO(16M) totalsize(1G) MTTDL(20y)");
    EXPECT_EQ(parse_ok("random persist size - per - IO ( 16M ) totalsize ( 1G ) MTTDL ( 20y )"),
              expected);
    EXPECT_EQ(parse_ok("random persist size - per - IO ( 16 M ) totalsize ( 1 G ) MTTDL ( 20 y )"),
              expected);
    EXPECT_EQ(parse_ok("random persist size -per- IO(16M) totalsize(1G) MTTDL(20y)"), expected);
}

TEST(SignatureSpacing, CommasMaySeparateParameters) {
    const Signature expected = parse_ok("random persist size-per-IO(4K)");
    EXPECT_EQ(parse_ok("random, persist, size-per-IO(4K)"), expected);
    EXPECT_EQ(parse_ok("random,persist,size-per-IO(4K)"), expected);
    EXPECT_EQ(parse_ok("random ,persist , size-per-IO(4K)"), expected);
}

TEST(SignatureSpacing, AnyAsciiWhitespaceSeparates) {
    EXPECT_EQ(parse_ok("random\tpersist\nsize-per-IO(4K)\r\nglobal\varchive\f").size_per_io,
              4 * KiB);
}
