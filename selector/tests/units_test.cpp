// Units: sizes are base 1024, durations go from ns to years, every format round-trips.
#include <gtest/gtest.h>

#include "iosig/units.hpp"

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
    for (std::uint64_t v : {0ull, 1ull, 1000ull, 4096ull, 16ull << 20, 3ull << 29, 1ull << 50, 1536ull})
        EXPECT_EQ(*parse_size(format_size(v)).value, v) << format_size(v);
    EXPECT_EQ(format_size(16u << 20), "16M");
    for (double d : {1.0, 60.0, 86400.0, 20 * seconds_per_year, 0.5, 1e-6, 12345.678})
        EXPECT_DOUBLE_EQ(*parse_duration_seconds(format_duration(d)).value, d) << format_duration(d);
    EXPECT_EQ(format_duration(20 * seconds_per_year), "20y");
    EXPECT_DOUBLE_EQ(*parse_probability(format_probability(1e-6)).value, 1e-6);
}
