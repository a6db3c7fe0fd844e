// The job's lifetime, over which a mount's loss probability is taken (the `availability`
// demand): from IOSIG_JOB_LIFETIME, else from Slurm's job span or time limit, else one day; where
// it came from is part of the explanation.
#include "iosig/selection.hpp"

#include <cstdlib>
#include <gtest/gtest.h>
#include <initializer_list>
#include <utility>

namespace iosig {
namespace {

struct ScopedEnv {
    explicit ScopedEnv(std::initializer_list<std::pair<const char*, const char*>> vars) {
        for (const char* name : all)
            unsetenv(name);
        for (auto [name, value] : vars)
            setenv(name, value, 1);
    }
    ~ScopedEnv() {
        for (const char* name : all)
            unsetenv(name);
    }
    static constexpr const char* all[] = {"IOSIG_JOB_LIFETIME", "SLURM_JOB_END_TIME",
                                          "SLURM_JOB_START_TIME", "SLURM_TIME_LIMIT"};
};

TEST(JobLifetime, DefaultsToOneDay) {
    ScopedEnv env({});
    const SelectionContext c = selection_context_from_environment();
    EXPECT_EQ(c.job_lifetime, 86400);
    EXPECT_EQ(c.job_lifetime_source, "default (24 h)");
}

TEST(JobLifetime, IosigVariableWins) {
    ScopedEnv env({{"IOSIG_JOB_LIFETIME", "2h"}, {"SLURM_TIME_LIMIT", "30"}});
    const SelectionContext c = selection_context_from_environment();
    EXPECT_EQ(c.job_lifetime, 7200);
    EXPECT_EQ(c.job_lifetime_source, "IOSIG_JOB_LIFETIME=2h");
}

TEST(JobLifetime, BadIosigVariableIsReportedAndIgnored) {
    ScopedEnv env({{"IOSIG_JOB_LIFETIME", "soon"}});
    const SelectionContext c = selection_context_from_environment();
    EXPECT_EQ(c.job_lifetime, 86400);
    EXPECT_NE(c.job_lifetime_source.find("'soon' is not a positive duration"), std::string::npos);
}

TEST(JobLifetime, SlurmJobSpanIsTheSameInEveryRank) {
    ScopedEnv env({{"SLURM_JOB_START_TIME", "1700000000"}, {"SLURM_JOB_END_TIME", "1700036000"}});
    const SelectionContext c = selection_context_from_environment();
    EXPECT_EQ(c.job_lifetime, 36000);
    EXPECT_EQ(c.job_lifetime_source, "SLURM_JOB_END_TIME - SLURM_JOB_START_TIME");
}

TEST(JobLifetime, SlurmTimeLimitInMinutes) {
    ScopedEnv env({{"SLURM_TIME_LIMIT", "90"}});
    EXPECT_EQ(selection_context_from_environment().job_lifetime, 5400);
}

} // namespace
} // namespace iosig
