// Loading from files: unreadable files are diagnostics naming the file; no input makes the loader
// throw or crash (docs/config.md, "Validation").
#include "node_yaml_test_support.hpp"

#include <random>

using namespace iosig;
using namespace iosig::testing_support;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(NodeYamlFiles, LoadsARealFileAndNamesItInLocations) {
    TempDir dir;
    const auto file = dir.write("node.yaml", minimal_node);
    const NodeLoadResult result = load_node_files({file});
    ASSERT_TRUE(result.ok()) << all_diagnostics(result);
    EXPECT_EQ(result.node->devices[0].where, (SourceLocation{file.string(), 2, 3}));
    EXPECT_EQ(result.node->mounts[0].where, (SourceLocation{file.string(), 7, 5}));
}

TEST(NodeYamlFiles, AMissingFileIsAnError) {
    TempDir dir;
    const auto missing = dir.path() / "nope.yaml";
    EXPECT_THAT(errors(load_node_files({missing})),
                ElementsAre(missing.string() + ": error: cannot read node file: no such file"));
}

TEST(NodeYamlFiles, ADirectoryIsAnError) {
    TempDir dir;
    EXPECT_THAT(
        errors(load_node_files({dir.path()})),
        ElementsAre(dir.path().string() + ": error: cannot read node file: it is a directory"));
}

TEST(NodeYamlFiles, EveryUnreadableFileIsReported) {
    TempDir dir;
    const auto good = dir.write("good.yaml", minimal_node);
    const NodeLoadResult result =
        load_node_files({dir.path() / "a.yaml", good, dir.path() / "b.yaml"});
    EXPECT_FALSE(result.ok());
    EXPECT_EQ(errors(result).size(), 2u) << all_diagnostics(result);
}

TEST(NodeYamlFiles, NoFilesIsAnError) {
    EXPECT_THAT(errors(load_node_files({})), ElementsAre("error: no node file given"));
}

TEST(NodeYamlFiles, AHugeFileIsRefusedBeforeParsing) {
    TempDir dir;
    const auto big = dir.path() / "big.yaml";
    {
        std::ofstream out(big, std::ios::binary);
        const std::string line = "# " + std::string(1022, 'x') + "\n";
        for (int i = 0; i < 17 * 1024; ++i)
            out << line;
    }
    EXPECT_THAT(errors(load_node_files({big})),
                ElementsAre(big.string() + ": error: node file is larger than 16 MiB; is it the "
                                           "right file?"));
}

TEST(NodeYamlFiles, TextUsesTheGivenNameOrAPlaceholder) {
    EXPECT_THAT(errors(load_node_text("devices: [")), ElementsAre(HasSubstr("<string>:1:")));
    EXPECT_THAT(errors(load_node_text("devices: [", "cli-arg")),
                ElementsAre(HasSubstr("cli-arg:1:")));
}

TEST(NodeYamlFiles, ArbitraryBytesNeverThrow) {
    std::mt19937 random(12345);
    const std::string alphabet = "{}[]:,-&*!|>'\"#%@`?~ \n\tabcdeKMG0123456789./\x00\xff";
    for (int i = 0; i < 2000; ++i) {
        std::string text;
        const int length = static_cast<int>(random() % 200);
        for (int j = 0; j < length; ++j)
            text += alphabet[random() % alphabet.size()];
        NodeLoadResult result;
        EXPECT_NO_THROW(result = load_node_text(text, "random.yaml")) << text;
        if (!result.ok()) {
            EXPECT_FALSE(errors(result).empty()) << text;
        }
    }
}

TEST(NodeYamlFiles, MutatedValidFilesNeverThrowAndFailOnlyWithAnError) {
    const std::string base = yaml(minimal_node) + "system: {dirty_ratio: 0.2}\n";
    std::mt19937 random(54321);
    for (int i = 0; i < 2000; ++i) {
        std::string text = base;
        for (int edits = 0; edits < 3; ++edits) {
            const std::size_t at = random() % text.size();
            switch (random() % 3) {
            case 0:
                text.erase(at, 1);
                break;
            case 1:
                text.insert(at, 1, "x:-[]{}!0 \n"[random() % 11]);
                break;
            default:
                text[at] = "aQ9 :\n"[random() % 6];
                break;
            }
        }
        NodeLoadResult result;
        EXPECT_NO_THROW(result = load_node_text(text, "mutated.yaml")) << text;
        EXPECT_EQ(result.ok(), errors(result).empty()) << text;
    }
}
