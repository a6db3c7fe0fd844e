// Rule patterns: `*` stays in a component, `**` crosses directories, `**/` may match none, classes,
// escapes, relative patterns match at any directory boundary.
#include "common/glob.hpp"

#include <gtest/gtest.h>

using iosig::preload::Glob;

namespace {

bool match(std::string_view pattern, std::string_view path) {
    const auto glob = Glob::compile(pattern);
    EXPECT_TRUE(glob.has_value()) << pattern;
    return glob && glob->matches(path);
}

TEST(Glob, StarStaysInsideOneComponent) {
    EXPECT_TRUE(match("/data/*.h5", "/data/a.h5"));
    EXPECT_FALSE(match("/data/*.h5", "/data/sub/a.h5"));
    EXPECT_TRUE(match("/data/*", "/data/x"));
    EXPECT_FALSE(match("/data/*", "/data/x/y"));
}

TEST(Glob, DoubleStarCrossesDirectoriesAndMayMatchNone) {
    EXPECT_TRUE(match("/scratch/**/ckpt-*.h5", "/scratch/ckpt-1.h5"));
    EXPECT_TRUE(match("/scratch/**/ckpt-*.h5", "/scratch/a/b/c/ckpt-22.h5"));
    EXPECT_FALSE(match("/scratch/**/ckpt-*.h5", "/scratch/a/xckpt-1.h5"));
    EXPECT_FALSE(match("/scratch/**/ckpt-*.h5", "/other/ckpt-1.h5"));
    EXPECT_TRUE(match("/data/**", "/data/a/b/c"));
    EXPECT_TRUE(match("/a/**b", "/a/x/yb"));
}

TEST(Glob, RelativePatternsMatchAtAnyDirectoryBoundary) {
    EXPECT_TRUE(match("*.tmp", "/x.tmp"));
    EXPECT_TRUE(match("*.tmp", "/a/b/c.tmp"));
    EXPECT_FALSE(match("*.tmp", "/a/b/c.tmpx"));
    EXPECT_TRUE(match("out/*.dat", "/run/out/a.dat"));
    EXPECT_FALSE(match("out/*.dat", "/run/xout/a.dat"));
    EXPECT_TRUE(match("**/*.log", "/var/x.log"));
}

TEST(Glob, QuestionMarkClassesAndEscapes) {
    EXPECT_TRUE(match("/f?.txt", "/f1.txt"));
    EXPECT_FALSE(match("/f?.txt", "/f/.txt"));
    EXPECT_TRUE(match("/run-[0-9][0-9]", "/run-42"));
    EXPECT_FALSE(match("/run-[0-9][0-9]", "/run-4a"));
    EXPECT_TRUE(match("/x[!a]", "/xb"));
    EXPECT_FALSE(match("/x[!a]", "/xa"));
    EXPECT_TRUE(match("/lit\\*", "/lit*"));
    EXPECT_FALSE(match("/lit\\*", "/litx"));
}

TEST(Glob, MalformedPatternsAreRejectedWithTheirOffset) {
    iosig::preload::GlobError error;
    EXPECT_FALSE(Glob::compile("/a/[bc", &error));
    EXPECT_EQ(error.offset, 3U);
    EXPECT_FALSE(Glob::compile("", &error));
    EXPECT_FALSE(Glob::compile("/a\\", &error));
    EXPECT_FALSE(Glob::compile("/[z-a]", &error));
}

TEST(Glob, PathologicalPatternsStayLinear) {
    const std::string pattern = "/**a**a**a**a**a**a**a**a**a**a**b";
    const std::string path = "/" + std::string(3000, 'a');
    EXPECT_FALSE(match(pattern, path)); // exponential with backtracking; instant here
}

TEST(Glob, SpecificityCountsLiteralsAndWildcards) {
    const auto exact = Glob::compile("/data/run1/out.dat");
    const auto star = Glob::compile("/data/*/out.dat");
    ASSERT_TRUE(exact && star);
    EXPECT_GT(exact->literal_count(), star->literal_count());
    EXPECT_EQ(exact->wildcard_count(), 0U);
    EXPECT_EQ(star->wildcard_count(), 1U);
}

} // namespace
