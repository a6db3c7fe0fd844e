// Units: sizes are base 1024, durations go from ns to years, every format round-trips.
#include "iosig/units.hpp"

#include <gtest/gtest.h>

using namespace iosig;

TEST(Units, SizesAreBase1024WithAnySpelling) {
    EXPECT_EQ(*parse_size("512").value, 512u);
    EXPECT_EQ(*parse_size("4K").value, 4096u);
    EXPECT_EQ(*parse_size("4kb").value, 4096u);
    EXPECT_EQ(*parse_size("4KiB").value, 4096u);
    EXPECT_EQ(*parse_size("16M").value, 16u << 20);
    EXPECT_EQ(*parse_size("1.5G").value, 3ull << 29);
    EXPECT_EQ(*parse_size("2T").value, 2ull << 40);
    EXPECT_EQ(*parse_size("1P").value, 1ull << 50);
}

TEST(Units, BadSizeUnitIsLocatedAndExplained) {
    auto r = parse_size("16Q");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error.offset, 2u);
    EXPECT_EQ(r.error.length, 1u);
    EXPECT_NE(r.error.message.find("unknown size unit 'Q'"), std::string::npos);
    EXPECT_FALSE(parse_size("").value);
    EXPECT_FALSE(parse_size("M").value);
}

TEST(Units, Durations) {
    EXPECT_DOUBLE_EQ(*parse_duration_seconds("20y").value, 20 * seconds_per_year);
    EXPECT_DOUBLE_EQ(*parse_duration_seconds("1d").value, 86400);
    EXPECT_DOUBLE_EQ(*parse_duration_seconds("90min").value, 5400);
    EXPECT_DOUBLE_EQ(*parse_duration_seconds("2w").value, 14 * 86400);
    EXPECT_DOUBLE_EQ(*parse_duration_seconds("5ms").value, 0.005);
    EXPECT_FALSE(parse_duration_seconds("3x").value);
}

TEST(Units, BandwidthAndProbability) {
    EXPECT_DOUBLE_EQ(*parse_bandwidth("500M/s").value, 500.0 * (1 << 20));
    EXPECT_DOUBLE_EQ(*parse_bandwidth("500MiB/s").value, 500.0 * (1 << 20));
    EXPECT_DOUBLE_EQ(*parse_bandwidth("1000").value, 1000);
    EXPECT_DOUBLE_EQ(*parse_probability("1e-6").value, 1e-6);
    EXPECT_FALSE(parse_probability("1").value);
    EXPECT_FALSE(parse_probability("0").value);
    EXPECT_FALSE(parse_probability("1e-6s").value);
}

TEST(Units, FormatsRoundTrip) {
    for (std::uint64_t v :
         {0ull, 1ull, 1000ull, 4096ull, 16ull << 20, 3ull << 29, 1ull << 50, 1536ull})
        EXPECT_EQ(*parse_size(format_size(v)).value, v) << format_size(v);
    EXPECT_EQ(format_size(16u << 20), "16M");
    for (double d : {1.0, 60.0, 86400.0, 20 * seconds_per_year, 0.5, 1e-6, 12345.678})
        EXPECT_DOUBLE_EQ(*parse_duration_seconds(format_duration(d)).value, d)
            << format_duration(d);
    EXPECT_EQ(format_duration(20 * seconds_per_year), "20y");
    EXPECT_DOUBLE_EQ(*parse_probability(format_probability(1e-6)).value, 1e-6);
}

TEST(Units, SizesAreExactUpTo2To64Minus1) {
    EXPECT_EQ(*parse_size("18446744073709551615").value, 18446744073709551615ull);
    EXPECT_EQ(*parse_size("9007199254740993").value,
              9007199254740993ull); // 2^53 + 1: no detour via double
    EXPECT_EQ(*parse_size("16383P").value, 16383ull << 50);
    EXPECT_FALSE(parse_size("16384P").value);
    EXPECT_FALSE(parse_size("18446744073709551616").value);
    EXPECT_FALSE(parse_size("1e20").value);
}

TEST(Units, DecimalSizesRoundToTheNearestByte) {
    EXPECT_EQ(*parse_size("1.5").value, 2u);
    EXPECT_EQ(*parse_size("0.1K").value, 102u); // 102.4
    EXPECT_EQ(*parse_size("1e3").value, 1000u);
    EXPECT_EQ(*parse_size(".5K").value, 512u);
}

TEST(Units, BlanksAroundAndBetweenNumberAndUnit) {
    EXPECT_EQ(*parse_size("16 M").value, 16u << 20);
    EXPECT_EQ(*parse_size(" 16MiB ").value, 16u << 20);
    EXPECT_EQ(*parse_size("16\tGB").value, 16ull << 30);
    EXPECT_DOUBLE_EQ(*parse_duration_seconds("20 y").value, 20 * seconds_per_year);
    EXPECT_DOUBLE_EQ(*parse_bandwidth("500 MiB/s").value, 500.0 * (1 << 20));
}

TEST(Units, SizeUnitSuggestions) {
    // Nearest spelling; among equally near ones the longest shared prefix.
    EXPECT_EQ(parse_size("1Gi").error.replacement, "GiB");
    EXPECT_EQ(parse_size("1MBB").error.replacement, "MB");
    EXPECT_EQ(parse_size("1kibb").error.replacement, "KiB");
    EXPECT_EQ(parse_size("1bytess").error.replacement, "bytes");
    // One unknown letter: the nearest neighbouring key, else M.
    EXPECT_EQ(parse_size("1J").error.replacement, "K");
    EXPECT_EQ(parse_size("1N").error.replacement, "M");
    EXPECT_EQ(parse_size("1H").error.replacement, "G");
    EXPECT_EQ(parse_size("1Y").error.replacement, "T");
    EXPECT_EQ(parse_size("1O").error.replacement, "P");
    EXPECT_EQ(parse_size("1Q").error.replacement, "M");
    // Nothing near: no guess.
    EXPECT_EQ(parse_size("1xyz").error.replacement, std::nullopt);
    EXPECT_EQ(parse_size("1xyz").error.offset, 1u);
    EXPECT_EQ(parse_size("1xyz").error.length, 3u);
}

TEST(Units, NumberProblemsAreLocated) {
    auto negative = parse_size("-4K");
    EXPECT_NE(negative.error.message.find("cannot be negative"), std::string::npos);
    EXPECT_EQ(negative.error.offset, 0u);
    auto plus = parse_size("+4K");
    EXPECT_EQ(plus.error.replacement, "");
    auto comma = parse_size("1,5G");
    EXPECT_EQ(comma.error.replacement, "1.5");
    EXPECT_EQ(comma.error.length, 3u);
    auto empty = parse_size("   ");
    EXPECT_NE(empty.error.message.find("got nothing"), std::string::npos);
    auto huge = parse_duration_seconds("1e999s");
    EXPECT_NE(huge.error.message.find("out of range"), std::string::npos);
    EXPECT_EQ(huge.error.length, 5u);
    EXPECT_FALSE(parse_size(".").value);
}

TEST(Units, DurationUnitsAndTheirSpellings) {
    for (auto [text, seconds] :
         std::initializer_list<std::pair<const char*, double>>{{"1", 1},
                                                               {"1s", 1},
                                                               {"1sec", 1},
                                                               {"1secs", 1},
                                                               {"1second", 1},
                                                               {"2seconds", 2},
                                                               {"1min", 60},
                                                               {"1mins", 60},
                                                               {"1minute", 60},
                                                               {"1minutes", 60},
                                                               {"1h", 3600},
                                                               {"1hr", 3600},
                                                               {"1hrs", 3600},
                                                               {"1hour", 3600},
                                                               {"1hours", 3600},
                                                               {"1d", 86400},
                                                               {"1day", 86400},
                                                               {"1days", 86400},
                                                               {"1w", 604800},
                                                               {"1week", 604800},
                                                               {"1weeks", 604800},
                                                               {"1y", seconds_per_year},
                                                               {"1yr", seconds_per_year},
                                                               {"1yrs", seconds_per_year},
                                                               {"1year", seconds_per_year},
                                                               {"1years", seconds_per_year},
                                                               {"1ms", 1e-3},
                                                               {"1msec", 1e-3},
                                                               {"1us", 1e-6},
                                                               {"1usec", 1e-6},
                                                               {"1\u00b5s", 1e-6},
                                                               {"1\u03bcs", 1e-6},
                                                               {"1ns", 1e-9},
                                                               {"1nsec", 1e-9},
                                                               {"1H", 3600},
                                                               {"1Y", seconds_per_year}}) {
        EXPECT_DOUBLE_EQ(*parse_duration_seconds(text).value, seconds) << text;
    }
}

TEST(Units, AmbiguousOrUnsupportedDurationUnits) {
    auto minutes_or_months = parse_duration_seconds("5m");
    EXPECT_FALSE(minutes_or_months.value);
    EXPECT_EQ(minutes_or_months.error.replacement, "min");
    EXPECT_NE(minutes_or_months.error.message.find("ambiguous"), std::string::npos);
    auto months = parse_duration_seconds("6 months");
    EXPECT_NE(months.error.message.find("months vary in length"), std::string::npos);
    EXPECT_EQ(months.error.offset, 2u);
    EXPECT_EQ(parse_duration_seconds("3yaer").error.replacement, "year");
    EXPECT_EQ(parse_duration_seconds("3hourz").error.replacement, "hour");
}

TEST(Units, ProbabilityNotationsThatAreNotProbabilities) {
    auto percent = parse_probability("0.1%");
    EXPECT_EQ(percent.error.replacement, "0.001");
    EXPECT_EQ(percent.error.length, 4u);
    EXPECT_EQ(parse_probability("150%").error.replacement, std::nullopt);
    EXPECT_EQ(parse_probability("1/1000").error.replacement, "0.001");
    EXPECT_EQ(parse_probability("1/0").error.replacement, std::nullopt);
    EXPECT_FALSE(parse_probability("-0.5").value);
    EXPECT_DOUBLE_EQ(*parse_probability("5e-324").value, 5e-324);
}

TEST(Units, BandwidthSpellings) {
    EXPECT_DOUBLE_EQ(*parse_bandwidth("1G/s").value, 0x1p30);
    EXPECT_DOUBLE_EQ(*parse_bandwidth("1GB/sec").value, 0x1p30);
    EXPECT_DOUBLE_EQ(*parse_bandwidth("100MBps").value, 100 * 0x1p20);
    EXPECT_DOUBLE_EQ(*parse_bandwidth("2.5K/s").value, 2560);
    auto wrong = parse_bandwidth("5Q/s");
    EXPECT_FALSE(wrong.value);
    EXPECT_EQ(wrong.error.offset, 1u);
}

TEST(Units, FormatsAreExactAndShortest) {
    EXPECT_EQ(format_size(0), "0");
    EXPECT_EQ(format_size(1536), "1536");
    EXPECT_EQ(format_size(1ull << 60), "1024P");
    EXPECT_EQ(format_size(18446744073709551615ull), "18446744073709551615");
    EXPECT_EQ(format_duration(3600), "1h");
    EXPECT_EQ(format_duration(1.5 * seconds_per_year), "1.5y");
    EXPECT_EQ(format_duration(1e-6), "1us");
    EXPECT_EQ(format_duration(0.5), "0.5s");
    EXPECT_EQ(format_duration(1e20), "1e20s");
    EXPECT_EQ(format_probability(1e-6), "1e-6");
    EXPECT_EQ(format_probability(2.5e-10), "2.5e-10");
    EXPECT_EQ(format_probability(0.001), "0.001");
    for (double p : {1e-6, 0.1, 0.3333333333333333, 5e-324, 0.9999999999999999})
        EXPECT_EQ(*parse_probability(format_probability(p)).value, p) << format_probability(p);
}
