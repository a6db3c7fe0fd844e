// The node model's look-ups and the YAML spelling of its enums.
#include "iosig/node.hpp"

#include <gtest/gtest.h>

using namespace iosig;

TEST(NodeModel, FindsDevicesByName) {
    Node node;
    node.devices.emplace_back().name = "ssd0";
    node.devices.emplace_back().name = "hdd0";
    ASSERT_NE(node.find_device("hdd0"), nullptr);
    EXPECT_EQ(node.find_device("hdd0")->name, "hdd0");
    EXPECT_EQ(node.find_device("ssd0"), &node.devices[0]);
    EXPECT_EQ(node.find_device("nvme0"), nullptr);
    EXPECT_EQ(node.find_device(""), nullptr);
}

TEST(NodeModel, FindsMountsByPathIgnoringTrailingSlashesAndDotSegments) {
    Node node;
    node.mounts.emplace_back().path = "/mnt/ssd";
    node.mounts.emplace_back().path = "/";
    EXPECT_EQ(node.find_mount("/mnt/ssd"), &node.mounts[0]);
    EXPECT_EQ(node.find_mount("/mnt/ssd/"), &node.mounts[0]);
    EXPECT_EQ(node.find_mount("/mnt/./ssd"), &node.mounts[0]);
    EXPECT_EQ(node.find_mount("/"), &node.mounts[1]);
    EXPECT_EQ(node.find_mount("/mnt"), nullptr);
    EXPECT_EQ(node.find_mount("/mnt/ssd2"), nullptr);
}

TEST(NodeModel, EnumsAreSpelledAsInTheYamlSchema) {
    EXPECT_EQ(to_string(MediaKind::ram), "ram");
    EXPECT_EQ(to_string(MediaKind::nvram), "nvram");
    EXPECT_EQ(to_string(MediaKind::ssd), "ssd");
    EXPECT_EQ(to_string(MediaKind::hdd), "hdd");
    EXPECT_EQ(to_string(MediaKind::network), "network");
    EXPECT_EQ(to_string(DeviceStructure::simple), "simple");
    EXPECT_EQ(to_string(DeviceStructure::complex), "complex");
    EXPECT_EQ(to_string(DeviceStructure::partition), "partition");
    EXPECT_EQ(to_string(RedundancyScheme::none), "none");
    EXPECT_EQ(to_string(RedundancyScheme::raid0), "raid0");
    EXPECT_EQ(to_string(RedundancyScheme::raid1), "raid1");
    EXPECT_EQ(to_string(RedundancyScheme::raid5), "raid5");
    EXPECT_EQ(to_string(RedundancyScheme::raid6), "raid6");
    EXPECT_EQ(to_string(RedundancyScheme::raid10), "raid10");
    EXPECT_EQ(to_string(RedundancyScheme::replication), "replication");
    EXPECT_EQ(to_string(RedundancyScheme::erasure), "erasure");
    EXPECT_EQ(to_string(RedundancyScheme::opaque), "opaque");
}

TEST(NodeModel, ProvenanceIsSpelledAsItsYamlTag) {
    EXPECT_EQ(to_string(Provenance::measured), "measured");
    EXPECT_EQ(to_string(Provenance::derived), "derived");
    EXPECT_EQ(to_string(Provenance::detected), "detected");
    EXPECT_EQ(to_string(Provenance::defaulted), "default"); // the tag is !default
    EXPECT_EQ(to_string(Provenance::user), "user");
    EXPECT_EQ(to_string(Provenance::unknown), "unknown");
}

TEST(NodeModel, EqualityComparesEveryField) {
    Device a;
    a.name = "ssd0";
    a.capacity = 1;
    Device b = a;
    EXPECT_EQ(a, b);
    b.performance.max_iops = 1;
    EXPECT_NE(a, b);
    b = a;
    b.calibration_yaml = "{}";
    EXPECT_NE(a, b);
    b = a;
    b.where.line = 3;
    EXPECT_NE(a, b); // locations count; tests clear them to compare models from different files
    Node x, y;
    y.provenance["node.page_size"] = Provenance::measured;
    EXPECT_NE(x, y);
}
