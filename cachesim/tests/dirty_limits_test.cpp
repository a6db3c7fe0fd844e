// Lowering vm.dirty_* for an experiment and always getting the previous settings back: on scope
// exit, on a fatal signal, and after SIGKILL through the saved file.
#include "iosig/cachesim/dirty_limits.hpp"

#include <csignal>
#include <filesystem>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

namespace iosig::cachesim {
namespace {

constexpr std::uint64_t MiB = 1024 * 1024;

class DirtyLimits : public ::testing::Test {
protected:
    void SetUp() override {
        if (::geteuid() != 0) GTEST_SKIP() << "needs root to write /proc/sys/vm";
        recover_saved_dirty_settings();
        original_ = *read_vm_dirty_settings();
    }
    void TearDown() override {
        if (::geteuid() != 0) return;
        // Whatever happened, the machine must be as before.
        EXPECT_EQ(*read_vm_dirty_settings(), original_);
        if (!(*read_vm_dirty_settings() == original_)) write_vm_dirty_settings(original_);
    }
    VmDirtySettings original_;
};

TEST_F(DirtyLimits, OverrideLowersAndRestoresInTheOriginalForm) {
    std::string error;
    {
        auto guard = DirtyLimitOverride::apply(16 * MiB, 8 * MiB, &error);
        ASSERT_TRUE(guard) << error;
        const VmDirtySettings now = *read_vm_dirty_settings();
        EXPECT_EQ(now.dirty_bytes, 16 * MiB);
        EXPECT_EQ(now.dirty_background_bytes, 8 * MiB);
        EXPECT_EQ(guard->previous(), original_);
        EXPECT_TRUE(std::filesystem::exists(dirty_settings_save_file));
    }
    EXPECT_FALSE(std::filesystem::exists(dirty_settings_save_file));
}

TEST_F(DirtyLimits, RejectsABackgroundLimitNotBelowTheHardOne) {
    std::string error;
    EXPECT_FALSE(DirtyLimitOverride::apply(8 * MiB, 8 * MiB, &error));
    EXPECT_EQ(error, "the background limit must be positive and below the dirty limit");
}

TEST_F(DirtyLimits, ASecondOverrideWaitsForTheFirst) {
    std::string error;
    auto first = DirtyLimitOverride::apply(16 * MiB, 8 * MiB, &error);
    ASSERT_TRUE(first) << error;
    EXPECT_FALSE(DirtyLimitOverride::apply(32 * MiB, 16 * MiB, &error, 0.2));
    EXPECT_NE(error.find("another process holds"), std::string::npos) << error;
}

TEST_F(DirtyLimits, RestoredWhenTheProcessDiesOfASignal) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        std::string error;
        auto guard = DirtyLimitOverride::apply(16 * MiB, 8 * MiB, &error);
        if (!guard) ::_exit(3);
        ::raise(SIGTERM); // the handler restores, then the signal kills as usual
        ::_exit(4);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << WEXITSTATUS(status);
    EXPECT_EQ(WTERMSIG(status), SIGTERM);
    EXPECT_FALSE(std::filesystem::exists(dirty_settings_save_file));
}

TEST_F(DirtyLimits, RestoredAfterSigkillFromTheSavedFile) {
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        std::string error;
        auto guard = DirtyLimitOverride::apply(16 * MiB, 8 * MiB, &error);
        [[maybe_unused]] ssize_t n = ::write(ready[1], guard ? "y" : "n", 1);
        for (;;)
            ::pause();
    }
    char answer = 0;
    ASSERT_EQ(::read(ready[0], &answer, 1), 1);
    ASSERT_EQ(answer, 'y');
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    // Nothing could run in the killed process: the limits are still low ...
    EXPECT_EQ(read_vm_dirty_settings()->dirty_bytes, 16 * MiB);
    // ... until the next override (or an explicit recovery) restores them from the saved file.
    std::string what;
    EXPECT_TRUE(recover_saved_dirty_settings(&what));
    EXPECT_NE(what.find("restored vm.dirty_*"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(dirty_settings_save_file));
    ::close(ready[0]);
    ::close(ready[1]);
}

} // namespace
} // namespace iosig::cachesim
