// Interception of the symbols compilers actually emit: -O2 -D_FORTIFY_SOURCE=2 binaries (__open_2,
// __fprintf_chk), -D_FILE_OFFSET_BITS=64 binaries (open64, fopen64, pwrite64), mkstemp + rename,
// the runtime ABI of the Clang plugin (its signature beats the rules), and the statistics and
// signature suggestions of `iosig report`.
#include "support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace iosig::e2e {
namespace {

using json = nlohmann::json;

constexpr const char* temp_sig = "temp random size-per-IO(4K)";
constexpr const char* persist_sig = "sequential persist MTTDL(20y) size-per-IO(64K)";

std::string expected_bytes(std::size_t n) {
    std::string data(n, '\0');
    for (std::size_t i = 0; i < n; ++i)
        data[i] = static_cast<char>((i * 131 + 7) % 251);
    return data;
}

bool references(const fs::path& binary, const std::string& symbol) {
    const Result r = run({"nm", "-D", "--undefined-only", binary.string()}, "/");
    return r.out.find(" " + symbol + "\n") != std::string::npos ||
           r.out.find(" " + symbol + "@") != std::string::npos;
}

class Interception : public ::testing::Test {
protected:
    void SetUp() override {
        if (geteuid() != 0) GTEST_SKIP() << "needs root (the device lab)";
        if (lab_dir().empty() || !fs::exists(lab_config()))
            GTEST_SKIP()
                << "no device lab: IOSIG_LAB_DIR is unset or has no lab.yaml (ctest brings one up)";
        const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
        base_ = scratch("intercept-" + name);
        work_ = base_ / "work";
        fs::create_directories(work_);
        job_ = "intercept-" + name + "-" + std::to_string(getpid());
        write_text(base_ / "rules.yaml",
                   std::string("rules:\n  - match: \"**/*.tmp\"\n    sig: \"") + temp_sig +
                       "\"\n  - match: \"**/*.dat\"\n    sig: \"" + persist_sig + "\"\n");
    }

    Result iosig_run(std::vector<std::string> command, bool keep = true,
                     const fs::path& rules = {}) {
        std::vector<std::string> argv = {iosig_binary().string(),
                                         "run",
                                         "--config",
                                         lab_config().string(),
                                         "--job",
                                         job_,
                                         "--state",
                                         (base_ / "state").string(),
                                         "--rules",
                                         (rules.empty() ? base_ / "rules.yaml" : rules).string()};
        if (keep) argv.push_back("--keep");
        argv.push_back("--");
        argv.insert(argv.end(), command.begin(), command.end());
        return run(argv, work_);
    }

    json report() {
        const Result r = run({iosig_binary().string(), "report", "--json", "--suggest", "--job",
                              job_, "--state", (base_ / "state").string()},
                             work_);
        EXPECT_EQ(r.status, 0) << r.err;
        return json::parse(r.out);
    }

    static const json* file_entry(const json& document, const fs::path& path) {
        for (const auto& f : document["files"])
            if (f["path"] == path.string()) return &f;
        return nullptr;
    }

    std::string staging(const std::string& sig) const {
        return expected_mount(lab_config(), sig) + "/.iosig-0/" + job_ + "/";
    }

    fs::path base_, work_;
    std::string job_;
};

TEST_F(Interception, FortifiedBinaryIsIntercepted) {
    const fs::path binary = program("write_files_fortify");
    ASSERT_TRUE(references(binary, "__fprintf_chk"))
        << "the fortified build does not call __fprintf_chk";
    ASSERT_TRUE(references(binary, "__open_2")) << "the fortified build does not call __open_2";

    ASSERT_EQ(iosig_run({binary.string(), "fprintf", "printed.tmp", "3000", "1000"}).status, 0);
    ASSERT_EQ(iosig_run({binary.string(), "append", "appended.tmp", "20000"}).status, 0);
    for (const char* name : {"printed.tmp", "appended.tmp"}) {
        EXPECT_TRUE(is_link(work_ / name)) << name;
        EXPECT_EQ(link_target(work_ / name).rfind(staging(temp_sig), 0), 0U)
            << link_target(work_ / name);
    }
    EXPECT_EQ(read_text(work_ / "printed.tmp"), expected_bytes(3000));
    EXPECT_EQ(read_text(work_ / "appended.tmp"), expected_bytes(20000));

    const json document = report();
    const json* printed = file_entry(document, work_ / "printed.tmp");
    ASSERT_NE(printed, nullptr) << document.dump(2);
    EXPECT_EQ((*printed)["bytes"]["stdio"], 3000) << "__fprintf_chk was not counted";
    EXPECT_EQ((*printed)["ops"]["stdio"], 3000);
    // The two-argument reopen (__open_2) is the same file: its writes join the creating open's
    // entry.
    const json* appended = file_entry(document, work_ / "appended.tmp");
    ASSERT_NE(appended, nullptr) << document.dump(2);
    EXPECT_EQ((*appended)["bytes"]["write"], 20000)
        << "writes through the __open_2 descriptor were not counted";
}

TEST_F(Interception, LargeFileBinaryIsIntercepted) {
    const fs::path binary = program("write_files_lfs");
    for (const char* symbol : {"open64", "fopen64", "pwrite64"})
        ASSERT_TRUE(references(binary, symbol))
            << "the -D_FILE_OFFSET_BITS=64 build does not call " << symbol;
    ASSERT_EQ(iosig_run({binary.string(), "pwrite", "p.dat", "1000000", "65536"}).status, 0);
    ASSERT_EQ(iosig_run({binary.string(), "fopen", "f.dat", "300000", "8192"}).status, 0);
    for (const char* name : {"p.dat", "f.dat"}) {
        EXPECT_TRUE(is_link(work_ / name)) << name;
        EXPECT_EQ(link_target(work_ / name).rfind(staging(persist_sig), 0), 0U)
            << link_target(work_ / name);
    }
    EXPECT_EQ(read_text(work_ / "p.dat"), expected_bytes(1000000));
    EXPECT_EQ(read_text(work_ / "f.dat"), expected_bytes(300000));
    const json document = report();
    const json* p = file_entry(document, work_ / "p.dat");
    ASSERT_NE(p, nullptr);
    EXPECT_EQ((*p)["bytes"]["pwrite"], 1000000);
    EXPECT_EQ((*p)["ops"]["pwrite"], 16);
    EXPECT_EQ((*p)["nonsequential"], 0);
    EXPECT_EQ((*p)["fsyncs"], 1);
    EXPECT_EQ((*p)["histogram"]["65536"], 15);
}

TEST_F(Interception, RepositionedStreamWritesAreCountedAsNonSequential) {
    // Ten 10 000-byte fwrites; half way the program seeks back, rewrites the first block and seeks
    // back again: 11 calls, of which the two after a seek are non-sequential.
    ASSERT_EQ(
        iosig_run({program("write_files").string(), "fseek", "seek.dat", "100000", "10000"}).status,
        0);
    EXPECT_EQ(read_text(work_ / "seek.dat"), expected_bytes(100000));
    const json document = report();
    const json* seek = file_entry(document, work_ / "seek.dat");
    ASSERT_NE(seek, nullptr) << document.dump(2);
    EXPECT_EQ((*seek)["ops"]["stdio"], 11);
    EXPECT_EQ((*seek)["bytes"]["stdio"], 110000);
    EXPECT_EQ((*seek)["sequential"], 9);
    EXPECT_EQ((*seek)["nonsequential"], 2);
    EXPECT_EQ((*seek)["histogram"]["8192"], 11);

    // A plain stream of many small calls (the inline fast path) is all sequential.
    ASSERT_EQ(
        iosig_run({program("write_files").string(), "fopen", "small.dat", "64000", "64"}).status,
        0);
    const json again = report();
    const json* small = file_entry(again, work_ / "small.dat");
    ASSERT_NE(small, nullptr) << again.dump(2);
    EXPECT_EQ((*small)["ops"]["stdio"], 1000);
    EXPECT_EQ((*small)["sequential"], 1000);
    EXPECT_EQ((*small)["nonsequential"], 0);
    EXPECT_EQ((*small)["histogram"]["64"], 1000);
}

TEST_F(Interception, MkstempThenRenameIsFollowedToTheFinalName) {
    ASSERT_EQ(
        iosig_run({program("write_files").string(), "mkstemp", "final.dat", "50000"}, false).status,
        0);
    EXPECT_TRUE(is_plain_file(work_ / "final.dat"))
        << "finalize did not bring the renamed file home";
    EXPECT_EQ(read_text(work_ / "final.dat"), expected_bytes(50000));
    std::size_t leftovers = 0;
    for (const auto& entry : fs::directory_iterator(work_))
        leftovers += entry.path().filename() != "final.dat";
    EXPECT_EQ(leftovers, 0U) << "the temporary name was left behind";
}

TEST_F(Interception, RuntimeAbiSignatureBeatsTheRules) {
    // The rules say persist for *.dat; the pragma says temp: the file goes where temp goes.
    const Result r = iosig_run({program("abi_user").string(), temp_sig, "abi.dat", "10000"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("active=1"), std::string::npos) << r.out;
    for (const char* name : {"abi.dat", "abi.dat.stdio"}) {
        EXPECT_TRUE(is_link(work_ / name)) << name;
        EXPECT_EQ(link_target(work_ / name).rfind(staging(temp_sig), 0), 0U)
            << link_target(work_ / name);
    }
    const json document = report();
    const json* abi = file_entry(document, work_ / "abi.dat");
    ASSERT_NE(abi, nullptr);
    EXPECT_EQ((*abi)["source"], "pragma");

    // Without any runtime the program still works, with plain calls.
    fs::remove_all(work_);
    fs::create_directories(work_);
    const Result plain = run({program("abi_user").string(), temp_sig, "abi.dat", "10000"}, work_);
    ASSERT_EQ(plain.status, 0) << plain.err;
    EXPECT_NE(plain.out.find("active=0"), std::string::npos);
    EXPECT_TRUE(is_plain_file(work_ / "abi.dat"));
}

TEST_F(Interception, ReportSuggestsTheObservedSignature) {
    ASSERT_EQ(
        iosig_run({program("write_files").string(), "random", "random.dat", "4000000", "4096"})
            .status,
        0);
    ASSERT_EQ(
        iosig_run({program("write_files").string(), "open", "stream.dat", "3000000", "1048576"})
            .status,
        0);
    const json document = report();
    std::map<std::string, std::string> suggested;
    for (const auto& s : document["suggestions"])
        for (const auto& f : s["files"])
            suggested[f.get<std::string>()] = s["sig"].get<std::string>();
    const std::string random_sig = suggested[(work_ / "random.dat").string()];
    EXPECT_NE(random_sig.find("random"), std::string::npos) << random_sig;
    EXPECT_NE(random_sig.find("size-per-io(4K)"), std::string::npos) << random_sig;
    EXPECT_NE(random_sig.find("totalsize(4M)"), std::string::npos) << random_sig;
    EXPECT_NE(random_sig.find("persist"), std::string::npos) << random_sig;
    const std::string stream_sig = suggested[(work_ / "stream.dat").string()];
    EXPECT_NE(stream_sig.find("sequential"), std::string::npos) << stream_sig;
    EXPECT_NE(stream_sig.find("size-per-io(1M)"), std::string::npos) << stream_sig;

    const Result text = run({iosig_binary().string(), "report", "--suggest", "--job", job_,
                             "--state", (base_ / "state").string()},
                            work_);
    ASSERT_EQ(text.status, 0);
    EXPECT_NE(text.out.find("#pragma sig "), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("- match: \""), std::string::npos) << text.out;
}

} // namespace
} // namespace iosig::e2e
