// Rules files: the schema, the most-specific-wins order, sigdefs, and file:line:col errors.
#include "common/rules.hpp"

#include <gtest/gtest.h>

using namespace iosig::preload;

namespace {

RuleSet load(std::string_view text) {
    auto result = load_rules_text(text, "rules.yaml");
    EXPECT_TRUE(result.ok()) << result.message();
    return result.ok() ? std::move(*result.rules) : RuleSet{};
}

TEST(Rules, MostSpecificMatchWinsRegardlessOfOrder) {
    const auto rules = load(R"y(rules:
  - match: "*.h5"
    sig: "sequential"
  - match: "/scratch/**/ckpt-*.h5"
    sig: "sequential persist size-per-IO(64M) totalsize(20G)"
  - match: "/scratch/run1/ckpt-7.h5"
    sig: "random temp"
)y");
    const Rule* r = rules.match("/scratch/run1/ckpt-7.h5");
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->pattern.text(), "/scratch/run1/ckpt-7.h5");
    r = rules.match("/scratch/a/b/ckpt-1.h5");
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->pattern.text(), "/scratch/**/ckpt-*.h5");
    r = rules.match("/home/u/x.h5");
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->pattern.text(), "*.h5");
    EXPECT_EQ(rules.match("/home/u/x.txt"), nullptr);
}

TEST(Rules, EqualSpecificityKeepsFileOrder) {
    const auto rules = load(R"y(rules:
  - match: "/d/*.a"
    sig: "temp"
  - match: "/d/x.*"
    sig: "persist"
)y");
    const Rule* r = rules.match("/d/x.a");
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->pattern.text(), "/d/*.a");
}

TEST(Rules, RulesWithoutSignatureOnlyTrack) {
    const auto rules = load("rules:\n  - match: \"*.log\"\n");
    const Rule* r = rules.match("/x/a.log");
    ASSERT_NE(r, nullptr);
    EXPECT_FALSE(r->signature.has_value());
}

TEST(Rules, ExclusionsAndOptions) {
    const auto rules = load(R"y(exclude: ["/scratch/keep/**"]
options:
  keep_global: true
  min_free: 16M
rules:
  - match: "/scratch/**"
    sig: "temp"
)y");
    EXPECT_TRUE(rules.excluded("/scratch/keep/a"));
    EXPECT_FALSE(rules.excluded("/scratch/other/a"));
    EXPECT_TRUE(rules.options().keep_global);
    EXPECT_EQ(rules.options().min_free, 16U << 20);
}

TEST(Rules, ErrorsNameFileLineAndColumn) {
    auto result = load_rules_text("rules:\n  - match: \"/a/[b\"\n    sig: temp\n", "bad.yaml");
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.message().find("bad.yaml:2:"), std::string::npos) << result.message();
    EXPECT_NE(result.message().find("unclosed"), std::string::npos) << result.message();

    result = load_rules_text("rules:\n  - match: x\n    sig: [1, 2\n", "broken.yaml");
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.message().find("broken.yaml:"), std::string::npos) << result.message();

    result = load_rules_text("rules: 3\n", "r.yaml");
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.message().find("r.yaml:1:8: error:"), std::string::npos) << result.message();

    result = load_rules_text("sigs: []\n", "r.yaml");
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.message().find("missing `rules:`"), std::string::npos) << result.message();
}

} // namespace
