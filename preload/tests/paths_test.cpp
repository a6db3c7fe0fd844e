// Path arithmetic used inside intercepted calls: normalization, containment, dirfd resolution.
#include "common/layout.hpp"
#include "common/paths.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace iosig::preload;

namespace {

std::string normalized(std::string_view base, std::string_view path) {
    PathBuffer out;
    EXPECT_TRUE(join_normalized(base, path, out));
    return std::string(out.view());
}

TEST(Paths, LexicalNormalization) {
    EXPECT_EQ(normalized("/work", "out.dat"), "/work/out.dat");
    EXPECT_EQ(normalized("/work", "./a//b/../c"), "/work/a/c");
    EXPECT_EQ(normalized("/work", "../../.."), "/");
    EXPECT_EQ(normalized("/work", "/abs/./x"), "/abs/x");
    EXPECT_EQ(normalized("/", "x"), "/x");
}

TEST(Paths, TooLongPathsAreRefused) {
    PathBuffer out;
    EXPECT_FALSE(join_normalized("/", std::string(PATH_MAX + 10, 'a'), out));
}

TEST(Paths, Containment) {
    EXPECT_TRUE(is_within("/usr/lib", "/usr"));
    EXPECT_TRUE(is_within("/usr", "/usr"));
    EXPECT_FALSE(is_within("/usrx", "/usr"));
    EXPECT_TRUE(is_within("/a/b", "/a/"));
    EXPECT_TRUE(is_within("/anything", "/"));
    EXPECT_EQ(parent_of("/a/b"), "/a");
    EXPECT_EQ(parent_of("/a"), "/");
    EXPECT_EQ(basename_of("/a/b.c"), "b.c");
}

TEST(Paths, RelativeToDirectoryDescriptor) {
    const int dir = open("/usr/lib", O_RDONLY | O_DIRECTORY);
    ASSERT_GE(dir, 0);
    PathBuffer out;
    ASSERT_TRUE(absolute_path(dir, "x/../y", out));
    EXPECT_EQ(out.view(), "/usr/lib/y");
    close(dir);
    char cwd[PATH_MAX];
    ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
    ASSERT_TRUE(absolute_path(AT_FDCWD, "z", out));
    EXPECT_EQ(out.view(), std::string(cwd) == "/" ? "/z" : std::string(cwd) + "/z");
}

TEST(Layout, StagingComponentsAreRecognised) {
    EXPECT_TRUE(contains_staging_component("/mnt/ssd/.iosig-0/job/1-2-x"));
    EXPECT_TRUE(contains_staging_component("/mnt/.iosig-1000"));
    EXPECT_FALSE(contains_staging_component("/mnt/.iosig-x/a"));
    EXPECT_FALSE(contains_staging_component("/mnt/a.iosig-0/b"));
    EXPECT_EQ(staging_job_dir("/mnt/ssd/", 7, "j1"), "/mnt/ssd/.iosig-7/j1");
    EXPECT_EQ(staging_job_dir("/", 7, "j1"), "/.iosig-7/j1");
}

TEST(Layout, JobIdsBecomeOnePathComponent) {
    EXPECT_EQ(sanitize_job_id("12/34"), "12_34");
    EXPECT_EQ(sanitize_job_id(".hidden"), "_hidden");
    EXPECT_EQ(sanitize_job_id("a b\n"), "a_b_");
}

} // namespace
