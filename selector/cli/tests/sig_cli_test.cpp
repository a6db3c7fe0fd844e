// `iosig sig check` as a user runs it: the built binary, its output streams and exit statuses.
#include <cstdio>
#include <gtest/gtest.h>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

struct SigResult {
    int status = -1;
    std::string out, err;
};

std::string read_all(FILE* file) {
    std::string text;
    char buffer[4096];
    std::rewind(file);
    while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, file))
        text.append(buffer, n);
    return text;
}

// Runs `iosig ARGS...` directly (no shell, so the arguments arrive exactly as given).
SigResult iosig(const std::vector<std::string>& args) {
    std::unique_ptr<FILE, int (*)(FILE*)> out(std::tmpfile(), &std::fclose),
        err(std::tmpfile(), &std::fclose);
    const pid_t child = fork();
    if (child == 0) {
        dup2(fileno(out.get()), STDOUT_FILENO);
        dup2(fileno(err.get()), STDERR_FILENO);
        std::vector<char*> argv{const_cast<char*>(IOSIG_EXECUTABLE)};
        for (const std::string& a : args)
            argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        execv(IOSIG_EXECUTABLE, argv.data());
        _exit(127);
    }
    int raw = 0;
    waitpid(child, &raw, 0);
    SigResult r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = read_all(out.get());
    r.err = read_all(err.get());
    return r;
}

} // namespace

TEST(SigCheck, ValidSignaturePrintsItsCanonicalFormAndExitsZero) {
    const SigResult r = iosig({"sig", "check", "Persist RANDOM size-per-IO(512K) totalsize(1G)"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "random persist size-per-io(512K) totalsize(1G)\n");
    EXPECT_EQ(r.err, "");
}

TEST(SigCheck, SeveralWordsAreJoinedWithBlanks) {
    const SigResult r = iosig({"sig", "check", "random", "persist", "MTTDL(20", "years)"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "random persist mttdl(20y)\n");
}

TEST(SigCheck, EmptySignatureIsValid) {
    const SigResult r = iosig({"sig", "check", ""});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "\n");
}

TEST(SigCheck, ErrorsShowTheTextACaretAndTheFixAndExitTwo) {
    const SigResult r = iosig({"sig", "check", "sequental persist size-per-IO(16Q)"});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(
        r.err,
        "iosig sig check:1: error: unknown parameter 'sequental'; did you mean 'sequential'?\n"
        "  sequental persist size-per-IO(16Q)\n"
        "  ^~~~~~~~~\n"
        "  sequential\n"
        "iosig sig check:33: error: size-per-IO: unknown size unit 'Q' (use B, K, M, G, T or P; "
        "all "
        "base 1024)\n"
        "  sequental persist size-per-IO(16Q)\n"
        "                                  ^\n"
        "                                  M\n"
        "did you mean: sequential persist size-per-IO(16M)\n");
}

TEST(SigCheck, NoWholeCorrectionWhenAFixIsUnknown) {
    const SigResult r = iosig({"sig", "check", "random sequential"});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("'sequential' contradicts the earlier 'random'"), std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("did you mean:"), std::string::npos) << r.err;
}

TEST(SigCheck, DirectivesAreCheckedToo) {
    SigResult r = iosig({"sig", "check", "SIGDEF ckpt Sequential persist size-per-IO(65536K)"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "sigdef ckpt sequential persist size-per-io(64M)\n");
    r = iosig({"sig", "check", "sig ckpt temp"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "sig ckpt temp\n");
    r = iosig({"sig", "check", "sigdef random"});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("sigdef needs a NAME"), std::string::npos) << r.err;
}

TEST(SigCheck, DefinitionsResolveNamesWithOverrides) {
    SigResult r = iosig({"sig", "check", "--def", "sigdef ckpt sequential persist size-per-IO(64M)",
                         "sig ckpt temp"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "sequential temp size-per-io(64M)\n");
    r = iosig({"sig", "check", "--def", "sigdef ckpt sequential", "ckp random"});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("unknown signature 'ckp'; did you mean 'ckpt'?"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("did you mean: ckpt random"), std::string::npos) << r.err;
}

TEST(SigCheck, BadDefinitionsAreReportedAndFailTheCheck) {
    SigResult r = iosig({"sig", "check", "--def", "random", "random"});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--def 1:1: error: --def takes a definition"), std::string::npos) << r.err;
    r = iosig({"sig", "check", "--def", "sigdef a random", "--def", "sigdef a temp", "a"});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--def 2:8: error: 'a' is defined twice"), std::string::npos) << r.err;
}

TEST(SigCheck, JsonReportForScripts) {
    SigResult r = iosig({"sig", "check", "--json", "global random MTTDL(20y) size-per-IO(4K)"});
    EXPECT_EQ(r.status, 0) << r.err;
    auto report = nlohmann::json::parse(r.out);
    EXPECT_EQ(report["ok"], true);
    EXPECT_EQ(report["canonical"], "global random size-per-io(4K) mttdl(20y)");
    EXPECT_EQ(report["signature"]["visibility"], "global");
    EXPECT_EQ(report["signature"]["pattern"], "random");
    EXPECT_TRUE(report["signature"]["persistence"].is_null());
    EXPECT_EQ(report["signature"]["size_per_io_bytes"], 4096);
    EXPECT_DOUBLE_EQ(report["signature"]["mttdl_seconds"].get<double>(), 20 * 365.25 * 86400);

    r = iosig({"sig", "check", "--json", "random persit"});
    EXPECT_EQ(r.status, 2);
    report = nlohmann::json::parse(r.out);
    EXPECT_EQ(report["ok"], false);
    ASSERT_EQ(report["errors"].size(), 1u);
    EXPECT_EQ(report["errors"][0]["offset"], 7);
    EXPECT_EQ(report["errors"][0]["length"], 6);
    EXPECT_EQ(report["errors"][0]["column"], 8);
    EXPECT_EQ(report["errors"][0]["replacement"], "persist");
    EXPECT_EQ(report["suggestion"], "random persist");
}

TEST(SigCheck, MissingSignatureIsBadInput) {
    EXPECT_EQ(iosig({"sig", "check"}).status, 2);
    EXPECT_EQ(iosig({"sig"}).status, 2);
}
