// The canonical text: fixed order, lower-case keywords, exact shortest values, single blanks. It is
// what the Clang plugin hands to the runtime, so parse(to_canonical(s)) == s for every
// representable signature and to_canonical is idempotent. Also: how errors are shown to people.
#include "iosig/units.hpp"
#include "signature_test_support.hpp"

#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <random>

using namespace iosig;
using iosig::testing::parse_ok;

namespace {

std::string canonical_of(std::string_view text) {
    return to_canonical(parse_ok(text));
}

// A random signature over the whole representable range: sizes 1..2^64-1, any positive finite
// duration, any probability in (0, 1), including values no person would write.
class RandomSignatures {
public:
    explicit RandomSignatures(std::uint64_t seed) : engine_(seed) {}

    Signature next() {
        Signature s;
        s.visibility = static_cast<Visibility>(pick(3));
        s.pattern = static_cast<AccessPattern>(pick(3));
        s.persistence = static_cast<Persistence>(pick(3));
        if (pick(2)) s.size_per_io = size();
        if (pick(2)) s.total_size = size();
        if (pick(2)) s.mttdl_seconds = duration();
        if (pick(2)) s.availability = probability();
        s.archive = pick(2);
        s.tamperproof = pick(2);
        return s;
    }

private:
    std::uint64_t pick(std::uint64_t n) {
        return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(engine_);
    }

    std::uint64_t size() {
        switch (pick(4)) {
        case 0:
            return 1 + pick(1 << 20); // small, often not a multiple of 1K
        case 1:
            return (1 + pick(4096)) << (10 * (1 + pick(5))); // a whole number of K..P
        case 2:
            return std::max<std::uint64_t>(1, engine_()); // anywhere up to 2^64-1
        default:
            return std::numeric_limits<std::uint64_t>::max() - pick(3);
        }
    }

    double duration() {
        switch (pick(4)) {
        case 0:
            return static_cast<double>(1 + pick(100)) * seconds_per_year; // whole years
        case 1:
            return static_cast<double>(1 + pick(1'000'000)); // whole seconds
        case 2:
            return std::uniform_real_distribution<double>(1e-9, 1e12)(engine_);
        default:
            return any_positive_double();
        }
    }

    double probability() {
        switch (pick(3)) {
        case 0:
            return std::pow(10.0, -static_cast<double>(1 + pick(15)));
        case 1:
            return std::nextafter(std::uniform_real_distribution<double>(0, 1)(engine_), 0.5);
        default: {
            double p = any_positive_double();
            while (!(p > 0 && p < 1))
                p = any_positive_double();
            return p;
        }
        }
    }

    // Uniform over bit patterns: subnormals, tiny and huge exponents.
    double any_positive_double() {
        for (;;) {
            const std::uint64_t bits = engine_() & ~(1ull << 63);
            double value;
            std::memcpy(&value, &bits, sizeof value);
            if (std::isfinite(value) && value > 0) return value;
        }
    }

    std::mt19937_64 engine_;
};

} // namespace

TEST(SignatureCanonical, EmptySignatureIsTheEmptyText) {
    EXPECT_EQ(to_canonical(Signature{}), "");
}

TEST(SignatureCanonical, FixedOrderLowerCaseKeywordsSingleBlanks) {
    EXPECT_EQ(
        canonical_of(
            "Tamperproof ARCHIVE availability(1e-6) MTTDL(20y) totalsize(1G) Size-Per-IO(16M)   "
            "Temp,Sequential, LOCAL"),
        "local sequential temp size-per-io(16M) totalsize(1G) mttdl(20y) availability(1e-6) "
        "archive "
        "tamperproof");
    EXPECT_EQ(canonical_of("persist global random"), "global random persist");
}

TEST(SignatureCanonical, SizesInTheLargestExactUnit) {
    EXPECT_EQ(canonical_of("size-per-IO(16384K)"), "size-per-io(16M)");
    EXPECT_EQ(canonical_of("size-per-IO(1.5G)"), "size-per-io(1536M)");
    EXPECT_EQ(canonical_of("size-per-IO(1536)"), "size-per-io(1536)");
    EXPECT_EQ(canonical_of("size-per-IO(1000)"), "size-per-io(1000)");
    EXPECT_EQ(canonical_of("size-per-IO(4 KiB)"), "size-per-io(4K)");
    EXPECT_EQ(canonical_of("totalsize(1024P)"), "totalsize(1024P)");
    EXPECT_EQ(canonical_of("totalsize(1)"), "totalsize(1)");
}

TEST(SignatureCanonical, DurationsInTheShortestExactForm) {
    EXPECT_EQ(canonical_of("MTTDL(20 years)"), "mttdl(20y)");
    EXPECT_EQ(canonical_of("MTTDL(1.5y)"), "mttdl(1.5y)");
    EXPECT_EQ(canonical_of("MTTDL(14d)"), "mttdl(2w)");
    EXPECT_EQ(canonical_of("MTTDL(90min)"), "mttdl(1.5h)");
    EXPECT_EQ(canonical_of("MTTDL(120s)"), "mttdl(2min)"); // equal length: the larger unit
    EXPECT_EQ(canonical_of("MTTDL(60s)"), "mttdl(60s)");   // "60s" is shorter than "1min"
    EXPECT_EQ(canonical_of("MTTDL(0.005s)"), "mttdl(5ms)");
    EXPECT_EQ(canonical_of("MTTDL(12345.678s)"), "mttdl(3.429355h)"); // exact, and shorter
}

TEST(SignatureCanonical, ProbabilitiesAsShortestRoundTrippingDecimals) {
    EXPECT_EQ(canonical_of("availability(1e-6)"), "availability(1e-6)");
    EXPECT_EQ(canonical_of("availability(0.000001)"), "availability(1e-6)");
    EXPECT_EQ(canonical_of("availability(1E-06)"), "availability(1e-6)");
    EXPECT_EQ(canonical_of("availability(0.001)"), "availability(0.001)");
    EXPECT_EQ(canonical_of("availability(0.5)"), "availability(0.5)");
}

TEST(SignatureCanonical, ExactGrammarOfEveryPart) {
    // Each value keyword is lower case, directly followed by '(' VALUE ')', no blanks inside.
    const std::string c =
        canonical_of("global random persist size-per-IO(4K) totalsize(3G) MTTDL(2d) "
                     "availability(0.25) archive tamperproof");
    EXPECT_EQ(
        c,
        "global random persist size-per-io(4K) totalsize(3G) mttdl(2d) availability(0.25) archive "
        "tamperproof");
    EXPECT_EQ(c.find("  "), std::string::npos);
    EXPECT_NE(c.back(), ' ');
}

TEST(SignatureCanonical, RandomSignaturesRoundTripExactly) {
    RandomSignatures random(20240611);
    for (int i = 0; i < 20000; ++i) {
        const Signature s = random.next();
        const std::string canonical = to_canonical(s);
        const auto parsed = parse_signature(canonical);
        ASSERT_TRUE(parsed) << canonical << "\n"
                            << (parsed.errors.empty() ? "" : parsed.errors[0].message);
        ASSERT_EQ(*parsed.value, s) << canonical;
        ASSERT_EQ(to_canonical(*parsed.value), canonical); // idempotent
    }
}

TEST(SignatureCanonical, RandomDirectivesRoundTripExactly) {
    RandomSignatures random(7);
    for (int i = 0; i < 2000; ++i) {
        Directive d;
        d.kind = i % 2 ? DirectiveKind::sig : DirectiveKind::sigdef;
        if (d.kind == DirectiveKind::sigdef || i % 3) d.name = "name_" + std::to_string(i);
        d.params = random.next();
        const std::string canonical = to_canonical(d);
        const auto parsed = parse_directive(canonical);
        ASSERT_TRUE(parsed) << canonical;
        EXPECT_EQ(parsed.value->kind, d.kind);
        EXPECT_EQ(parsed.value->name, d.name);
        ASSERT_EQ(parsed.value->params, d.params) << canonical;
        EXPECT_EQ(to_canonical(*parsed.value), canonical);
    }
}

TEST(SignatureCanonical, WrittenFormsAreIdempotentAfterOneStep) {
    for (std::string_view text :
         {"random persist size-per-IO(512K) totalsize(1G)", "MTTDL(1.5 y) availability(.5)",
          "size - per - IO ( 16 M ), TEMP", "global sequential totalsize(0.75G)"}) {
        const std::string once = canonical_of(text);
        EXPECT_EQ(canonical_of(once), once) << text;
    }
}

TEST(SignatureRender, CaretUnderTheProblemAndTheReplacementBelow) {
    const std::string_view text = "sequental persist";
    const auto parsed = parse_signature(text);
    ASSERT_EQ(parsed.errors.size(), 1u);
    EXPECT_EQ(render_sig_error(text, parsed.errors[0]),
              "unknown parameter 'sequental'; did you mean 'sequential'?\n"
              "  sequental persist\n"
              "  ^~~~~~~~~\n"
              "  sequential\n");
}

TEST(SignatureRender, InsertionAtTheEndAndNoReplacementLine) {
    EXPECT_EQ(render_sig_error("size-per-IO(16M", SigError{15, 0, "missing ')'", ")"}),
              "missing ')'\n"
              "  size-per-IO(16M\n"
              "                 ^\n"
              "                 )\n");
    EXPECT_EQ(render_sig_error("random sequential", SigError{7, 10, "contradiction", std::nullopt}),
              "contradiction\n"
              "  random sequential\n"
              "         ^~~~~~~~~~\n");
    EXPECT_EQ(render_sig_error("random;", SigError{6, 1, "unexpected ';'", ""}), "unexpected ';'\n"
                                                                                 "  random;\n"
                                                                                 "        ^\n");
}

TEST(SignatureRender, TabsAndMultiByteCharactersKeepTheCaretAligned) {
    EXPECT_EQ(render_sig_error("\trandom x", SigError{8, 1, "m", std::nullopt}), "m\n"
                                                                                 "  \trandom x\n"
                                                                                 "  \t       ^\n");
    // "µs" is two bytes but one column.
    EXPECT_EQ(render_sig_error("MTTDL(5µs) x", SigError{12, 1, "m", std::nullopt}),
              "m\n"
              "  MTTDL(5µs) x\n"
              "             ^\n");
    // A newline inside the text is shown as a blank so that the caret line still lines up.
    EXPECT_EQ(render_sig_error("random\nx", SigError{7, 1, "m", std::nullopt}), "m\n"
                                                                                "  random x\n"
                                                                                "         ^\n");
}

TEST(SignatureRender, OffsetsPastTheEndAreClamped) {
    EXPECT_EQ(render_sig_error("ab", SigError{10, 5, "m", std::nullopt}), "m\n  ab\n    ^\n");
}

TEST(SignatureReplacements, OverlappingOrOutOfRangeReplacementsGiveNothing) {
    EXPECT_FALSE(
        apply_replacements("abc", {SigError{0, 2, "", "x"}, SigError{1, 1, "", "y"}}).has_value());
    EXPECT_FALSE(apply_replacements("abc", {SigError{2, 5, "", "x"}}).has_value());
    EXPECT_EQ(apply_replacements("abc", {SigError{2, 1, "", "Z"}, SigError{0, 0, "", "<"}}),
              "<abZ");
    EXPECT_EQ(apply_replacements("abc", {}), "abc");
}
