// The engine answers as the kernel's files do. A seeded random sequence of opens, reads, writes,
// appends, truncates, syncs, closes, unlinks, renames and other programs' writes over a few file
// names is made twice: through the engine on files in one directory, and through the kernel's own
// calls on files in another. At every call the two give the same result (byte count or errno), a
// read the same bytes, a file the same size; after an fsync the engine's home file holds what the
// kernel's file holds; and once every handle is closed, and again once the engine is gone, the two
// directories hold the same files. The engines differ in what they exercise: eviction and
// write-back under pressure, prefetching, the sequential bypass, runs of lines, O_DIRECT on a disk
// file system, written bytes only, file ids handed out again, the idle files released, a journal
// rewritten often. The same sequences also run up to a crash of the engine's process, after which
// recovery must leave what the kernel's files hold; and from two threads at once
// (kernel_reference_threads_test.cpp).
#include "kernel_reference_runs.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

namespace iosig::tier {
namespace {

using test_support::Counter;
using test_support::Devices;
using test_support::reference_seeds;
using test_support::run_through_a_crash;
using test_support::run_whole;
using test_support::RunCounts;
using test_support::ScratchDir;
using test_support::small_config;
using test_support::Variant;
using test_support::variant_name;
using test_support::variants;

class EngineAgainstTheKernel : public ::testing::TestWithParam<int> {};

TEST_P(EngineAgainstTheKernel, EveryCallGivesWhatTheKernelsFilesGive) {
    const Variant& variant = variants[GetParam()];
    SCOPED_TRACE(variant.name);
    const std::vector<std::uint64_t> seeds = reference_seeds(3);
    struct Total {
        const char* what;
        Counter counter;
        std::uint64_t sum = 0;
    };
    std::vector<Total> totals = {{"evictions", &TierStats::evictions},
                                 {"write-backs", &TierStats::writebacks}};
    for (const auto& [what, counter] : variant.exercised)
        totals.push_back({what, counter});
    for (const std::uint64_t seed : seeds) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        RunCounts counts;
        ASSERT_EQ(run_whole(variant, seed, Devices::work, counts), "");
        for (Total& total : totals)
            total.sum += counts.stats.*total.counter;
    }
    for (const Total& total : totals)
        EXPECT_GT(total.sum, 0u) << "the calls made no " << total.what;
}

// The engine's process crashes after a random number of the calls above (TierCache::abandon: no
// write-back, no close, the journal as it is), and recovery (TierCache::recover) runs: every file
// then holds what the kernel's holds, as a process crash loses no write the kernel took (the page
// cache keeps them). Renamed files, deleted ones, paths that came to name another file, O_TRUNC
// opens and file ids handed out again are all in the calls.
class EngineAgainstTheKernelThroughACrash : public ::testing::TestWithParam<int> {};

TEST_P(EngineAgainstTheKernelThroughACrash, RecoveryLeavesWhatTheKernelsFilesHold) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "needs root: recovery finds a renamed file by its handle "
                        "(open_by_handle_at, CAP_DAC_READ_SEARCH), which the calls rename";
    const Variant& variant = variants[GetParam()];
    SCOPED_TRACE(variant.name);
    const std::vector<std::uint64_t> seeds = reference_seeds(8);
    std::uint64_t written_home = 0; // by recovery, over the seeds
    for (const std::uint64_t seed : seeds) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        RunCounts counts;
        ASSERT_EQ(run_through_a_crash(variant, seed, Devices::work, counts), "");
        EXPECT_EQ(counts.passed_over, 0u); // no call failed
        written_home += counts.written_home;
    }
    EXPECT_GT(written_home, 0u) << "no crash left a dirty line for recovery";
}

// The errors found by the sequences above (session 42), each in the order the kernel checks:
// an offset or length below 0 before the handle, and the path before the engine's file ids.
TEST(KernelErrors, BadCallsFailWithTheKernelsErrorsInTheirOrder) {
    ScratchDir dir;
    TierConfig config = small_config(dir);
    config.file_ids = 1;
    auto tier = TierCache::open(config);
    const int written = tier->open_file(dir / "w", O_WRONLY | O_CREAT);
    const int read_only = tier->open_file(dir / "w", O_RDONLY);
    ASSERT_GE(written, 0);
    ASSERT_GE(read_only, 0);
    char byte = 1;
    // ftruncate(2) of a descriptor not open for writing: EINVAL (not EBADF).
    EXPECT_EQ(tier->ftruncate(read_only, 10), -EINVAL);
    EXPECT_EQ(tier->ftruncate(12345, -1), -EINVAL);
    EXPECT_EQ(tier->ftruncate(12345, 10), -EBADF);
    // pread(2) and pwrite(2) at a negative offset: EINVAL, whatever the descriptor.
    EXPECT_EQ(tier->pread(written, &byte, 1, -1), -EINVAL);
    EXPECT_EQ(tier->pwrite(read_only, &byte, 1, -1), -EINVAL);
    EXPECT_EQ(tier->pread(written, &byte, 1, 0), -EBADF);
    EXPECT_EQ(tier->pwrite(read_only, &byte, 1, 0), -EBADF);
    // The engine's one id is taken: a missing file is still ENOENT, a new one ENFILE (the caller
    // then opens it itself), and neither is made.
    EXPECT_EQ(tier->open_file(dir / "missing", O_RDWR), -ENOENT);
    EXPECT_EQ(tier->open_file(dir / "new", O_RDWR | O_CREAT), -ENFILE);
    EXPECT_FALSE(std::filesystem::exists(dir / "new"));
    EXPECT_EQ(tier->close(written), 0);
    EXPECT_EQ(tier->close(read_only), 0);
}

// open(2) with O_RDONLY | O_TRUNC empties the file on Linux (the caller needs write access); the
// engine did nothing with O_TRUNC on a read-only open before session 42, and served the old bytes.
// Here the engine holds the file through a read-only handle only, so it needs a descriptor that
// may write first; the new handle reads the empty file and still may not write.
TEST(KernelErrors, AReadOnlyOpenWithOTruncEmptiesTheFileAsOpenDoes) {
    ScratchDir dir;
    auto tier = TierCache::open(small_config(dir));
    const auto path = dir / "f";
    test_support::write_file(path, test_support::pattern(3 * 4096, 7));
    const int reader = tier->open_file(path, O_RDONLY);
    ASSERT_GE(reader, 0);
    char byte = 0;
    ASSERT_EQ(tier->pread(reader, &byte, 1, 5000), 1); // line 1 cached
    const int cut = tier->open_file(path, O_RDONLY | O_TRUNC);
    ASSERT_GE(cut, 0);
    EXPECT_EQ(tier->file_size(cut), 0);
    EXPECT_EQ(tier->file_size(reader), 0);
    EXPECT_EQ(tier->pread(reader, &byte, 1, 5000), 0);
    EXPECT_EQ(tier->pwrite(cut, &byte, 1, 0), -EBADF);
    EXPECT_EQ(tier->ftruncate(cut, 10), -EINVAL);
    EXPECT_EQ(std::filesystem::file_size(path), 0u);
    EXPECT_EQ(tier->close(cut), 0);
    EXPECT_EQ(tier->close(reader), 0);
}

// O_RDONLY | O_TRUNC needs write access: refused with EACCES, as open(2) refuses it, for a file
// the engine holds (a handle of it open for writing since before its mode changed) and for one it
// does not, the bytes untouched. Root passes every mode check, so the check runs as user 65534.
TEST(KernelErrors, AReadOnlyOpenWithOTruncOfAFileTheCallerMayNotWriteIsRefused) {
    ScratchDir dir;
    IOSIG_EXPECT_PASSES_AS_NOBODY(
        dir,
        [&]() -> std::string {
            auto tier = TierCache::open(small_config(dir));
            const std::vector<char> bytes = test_support::pattern(4096, 9);
            for (const char* name : {"held", "not-held"}) {
                const auto path = dir / name;
                test_support::write_file(path, bytes);
                // Held: through a descriptor that may write, made before the mode changed.
                const int held = name[0] == 'h' ? tier->open_file(path, O_RDWR) : 0;
                if (held < 0) return "could not open the file";
                if (::chmod(path.c_str(), 0444) != 0) return "chmod failed";
                const int fd = ::open(path.c_str(), O_RDONLY | O_TRUNC);
                if (fd >= 0 || errno != EACCES) return "open(2) did not refuse: not binding";
                const int h = tier->open_file(path, O_RDONLY | O_TRUNC);
                if (h != -EACCES)
                    return std::string(name) + ": the engine gave " + std::to_string(h);
                if (test_support::read_file(path) != bytes) return "the bytes changed";
                if (name[0] == 'h') tier->close(held);
            }
            return "";
        },
        "which would show nothing: root may write any file");
}

// O_CREAT | O_EXCL fails with EEXIST when the path is a symbolic link, even one that leads
// nowhere, and makes nothing; without O_EXCL, open(2) makes the file the link leads to. Before
// session 42 the engine checked that nothing existed at the path (a dangling link does not) and
// then opened it without O_EXCL, making the link's target.
TEST(KernelErrors, AnExclusiveCreateThroughADanglingLinkFailsAsOpenDoes) {
    ScratchDir dir;
    auto tier = TierCache::open(small_config(dir));
    std::filesystem::create_symlink(dir / "target", dir / "link");
    const int fd = ::open((dir / "link").c_str(), O_CREAT | O_EXCL | O_RDWR, 0644);
    ASSERT_LT(fd, 0) << "open(2) made the file";
    ASSERT_EQ(errno, EEXIST);
    EXPECT_EQ(tier->open_file(dir / "link", O_CREAT | O_EXCL | O_RDWR), -EEXIST);
    EXPECT_FALSE(std::filesystem::exists(dir / "target"));
    const int h = tier->open_file(dir / "link", O_CREAT | O_RDWR);
    ASSERT_GE(h, 0);
    EXPECT_TRUE(std::filesystem::exists(dir / "target"));
    EXPECT_EQ(tier->close(h), 0);
}

// A loop of links: open(2) gives EEXIST with O_CREAT | O_EXCL (something is at the name) and
// ELOOP otherwise; so does the engine, which threw std::filesystem's error out of the O_EXCL open
// before session 42 (found by the sequences above once they made links).
TEST(KernelErrors, ALoopOfLinksFailsAsOpenDoesAndThrowsNothing) {
    ScratchDir dir;
    TierConfig config = small_config(dir);
    config.file_ids = 1; // and none left: the path's error comes first
    auto tier = TierCache::open(config);
    std::filesystem::create_symlink("b", dir / "a");
    std::filesystem::create_symlink("a", dir / "b");
    const int held = tier->open_file(dir / "held", O_CREAT | O_RDWR);
    ASSERT_GE(held, 0);
    for (const int flags : {O_CREAT | O_EXCL | O_RDWR, O_CREAT | O_RDWR, O_RDONLY}) {
        const int fd = ::open((dir / "a").c_str(), flags, 0644);
        ASSERT_LT(fd, 0);
        const int expected = -errno;
        int got = 0;
        EXPECT_NO_THROW(got = tier->open_file(dir / "a", flags));
        EXPECT_EQ(got, expected) << "flags " << flags;
    }
    EXPECT_EQ(tier->close(held), 0);
}

INSTANTIATE_TEST_SUITE_P(Engines, EngineAgainstTheKernel,
                         ::testing::Range(0, static_cast<int>(std::size(variants))), variant_name);
INSTANTIATE_TEST_SUITE_P(Engines, EngineAgainstTheKernelThroughACrash,
                         ::testing::Range(0, static_cast<int>(std::size(variants))), variant_name);

} // namespace
} // namespace iosig::tier
