// The node YAML the calibrator writes: accepted by the core loader unchanged (no error, no
// warning), values and provenance survive the trip, site overrides merge by path/name and become
// !user, and a broken overrides file is reported with file:line:col.
#include "iosig/node_yaml.hpp"
#include "node_writer.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

namespace iosig::calibrate {
namespace {
namespace fs = std::filesystem;

// A calibration as a run on two mounts (an ext4 disk and a tmpfs) and a btrfs raid1 would leave it.
Calibration sample_calibration() {
    Calibration c;
    c.hostname = "node17";
    c.quick = true;
    c.seconds = 42;
    c.system.page_size = 4096;
    c.system.page_cache_directory = "/scratch";
    c.system.memcpy_cost = {1e-6, 1.0 / 8e9, 0.99, 21, {}, true};
    c.system.buffered_small = {1.5e-6, 2.5e-10, 0.98, 600, {}, true};
    c.system.buffered_large = {2e-5, 1.0 / 2e9, 0.99, 18, {}, true};
    c.system.buffered_flushing = {2e-5, 1.0 / 1.2e9, 0.97, 18, {}, true};
    c.system.sync_small = {2e-5, 1e-9, 0.9, 60, {}, true};
    c.system.dirty_ratio = 0.2;
    c.system.dirty_background_ratio = 0.1;
    c.system.dirty_bytes = 0;
    c.system.dirty_background_bytes = 0;
    c.system.dirtyable_memory = std::uint64_t(22) << 30;
    c.system.dirty_expire = 30;
    c.system.dirty_writeback_interval = 5;
    c.system.stdio_buffer_size = 4096;

    DeviceModel vda;
    vda.name = "vda";
    vda.media = MediaKind::ssd;
    vda.dev_path = "/dev/vda";
    vda.capacity = std::uint64_t(256) << 30;
    vda.kind = "disk";
    DeviceModel loop0 = vda;
    loop0.name = "loop0";
    loop0.structure = DeviceStructure::partition;
    loop0.owner = "vda";
    loop0.kind = "loop";
    loop0.backing_file = "/var/img/a.img";
    loop0.capacity = std::uint64_t(4) << 30;
    DeviceModel loop1 = loop0;
    loop1.name = "loop1";
    DeviceModel raid;
    raid.name = "btrfs-0e0730ef";
    raid.structure = DeviceStructure::complex;
    raid.scheme = RedundancyScheme::raid1;
    raid.members = {"loop0", "loop1"};
    raid.kind = "btrfs";
    DeviceModel ram;
    ram.name = "ram-dev-shm";
    ram.media = MediaKind::ram;
    ram.kind = "tmpfs";
    ram.capacity = std::uint64_t(1) << 30;
    for (const DeviceModel* d : {&vda, &loop0, &loop1, &raid, &ram})
        c.discovery.devices[d->name] = *d;

    auto target = [](const std::string& path, const std::string& device, const std::string& fs_type,
                     const std::string& group) {
        MountTarget t;
        t.path = path;
        t.device = device;
        t.entry.fs_type = fs_type;
        t.entry.mount_point = path;
        t.group = group;
        t.capacity = std::uint64_t(1) << 30;
        t.free_space = std::uint64_t(1) << 29;
        t.block_size = 4096;
        return t;
    };
    c.discovery.mounts = {target("/scratch", "vda", "ext4", "254:0"),
                          target("/scratch/shared", "vda", "ext4", "254:0"),
                          target("/dev/shm", "ram-dev-shm", "tmpfs", "0:27"),
                          target("/mnt/raid1", "btrfs-0e0730ef", "btrfs", "0:40")};
    c.discovery.mounts[2].is_volatile = true;

    auto measurements = [](const std::string& dir, double bw) {
        MountMeasurements m;
        m.directory = dir;
        m.method.direct = true;
        m.method.alignment = 512;
        m.method.alignment_source = "statx";
        m.file_size = 64 << 20;
        m.seq_write = {bw, 1 << 30, 256, 1.0, 4 << 20};
        m.seq_read = {bw * 2, 1 << 30, 256, 0.5, 4 << 20};
        m.read_latency.block = m.write_latency.block = 4096;
        m.read_latency.samples = {1e-4, 1.1e-4, 0.9e-4};
        m.write_latency.samples = {2e-4, 2.1e-4};
        m.read_latency.summarize();
        m.write_latency.summarize();
        m.random_read = {50000, 50000, 1.0, 32, 4096, "io_uring"};
        m.random_write = {20000, 20000, 1.0, 32, 4096, "io_uring"};
        // Reads and writes at once kept 90 % of each solo rate: separate limits (1.8x).
        m.mixed = MixedIops{45000, 18000, 63000, 1.0, 32, 4096, "io_uring"};
        for (std::uint64_t chunk = 512; chunk <= (1 << 20); chunk *= 4)
            m.sweep.push_back({chunk, 100, 100 * (9e-5 + chunk / bw)});
        Eq3Fit fit;
        fit.parameters.latency = 9e-5;
        fit.parameters.write_bw = bw;
        fit.parameters.chunk = 4096;
        fit.reference_chunk = 4096;
        m.fit = fit;
        return m;
    };
    c.by_group["254:0"] = measurements("/scratch", 1e9);
    c.by_group["0:27"] = measurements("/dev/shm", 3e9);
    c.by_group["0:40"] = measurements("/mnt/raid1", 3e8);
    return c;
}

TEST(NodeWriter, CoreLoaderAcceptsTheOutputUnchanged) {
    const std::string yaml = emit_yaml(build_node_document(sample_calibration()));
    const NodeLoadResult r = load_node_text(yaml, "calibrated.yaml");
    for (const auto& d : r.diagnostics)
        ADD_FAILURE() << d.format() << "\n" << yaml;
    ASSERT_TRUE(r.ok());
    const Node& node = *r.node;
    EXPECT_EQ(node.name, "node17");
    EXPECT_EQ(node.page_size, 4096u);
    ASSERT_EQ(node.mounts.size(), 4u);
    const Device* vda = node.find_device("vda");
    ASSERT_NE(vda, nullptr);
    EXPECT_NEAR(vda->performance.seq_write_bw, 1e9, 1);
    EXPECT_NEAR(vda->performance.seq_read_bw, 2e9, 1);
    EXPECT_NEAR(vda->performance.rand_write_bw, 1e9, 1)
        << "the transfer's rate, not 4 KiB x IOPS: Eq. 3 charges the IOPS limit itself";
    EXPECT_NEAR(vda->performance.op_latency, 9e-5, 1e-10);
    EXPECT_EQ(vda->performance.max_iops, 20000);
    EXPECT_TRUE(vda->performance.independent_read_write) << "1.8x one direction's rate";
    EXPECT_EQ(node.provenance.at("devices.vda.performance.independent_read_write"),
              Provenance::measured);
    const Device* raid = node.find_device("btrfs-0e0730ef");
    ASSERT_NE(raid, nullptr);
    EXPECT_EQ(raid->structure, DeviceStructure::complex);
    EXPECT_EQ(raid->scheme, RedundancyScheme::raid1);
    EXPECT_EQ(raid->members, (std::vector<std::string>{"loop0", "loop1"}));
    EXPECT_EQ(node.find_device("loop0")->owner, "vda");
    const Mount* shm = node.find_mount("/dev/shm");
    ASSERT_NE(shm, nullptr);
    EXPECT_TRUE(shm->is_volatile);
    EXPECT_EQ(shm->device, "ram-dev-shm");
    // The system (CAWL) parameters.
    ASSERT_TRUE(node.system.memory_bw);
    EXPECT_NEAR(*node.system.memory_bw, 8e9, 1);
    EXPECT_NEAR(*node.system.page_cache_write_bw_flushing, 1.2e9, 1);
    EXPECT_NEAR(*node.system.write_syscall_base, 1.5e-6, 1e-12);
    EXPECT_NEAR(*node.system.sync_write_syscall_per_byte, 1e-9, 1e-15);
    EXPECT_EQ(*node.system.stdio_buffer_size, 4096u);
    EXPECT_EQ(*node.system.dirtyable_memory, std::uint64_t(22) << 30);
    EXPECT_DOUBLE_EQ(*node.system.dirty_expire, 30);
    // Measured points and the fitted model are kept with the mount.
    EXPECT_NE(node.find_mount("/scratch")->calibration_yaml.find("eq3"), std::string::npos);
    EXPECT_NE(node.find_mount("/scratch/shared")->calibration_yaml.find("measured_with"),
              std::string::npos);
}

TEST(NodeWriter, EveryValueCarriesItsProvenance) {
    const NodeLoadResult r =
        load_node_text(emit_yaml(build_node_document(sample_calibration())), "calibrated.yaml");
    ASSERT_TRUE(r.ok());
    const auto& p = r.node->provenance;
    auto tag = [&](const std::string& key) {
        const auto it = p.find(key);
        return it == p.end() ? std::string("(none)") : std::string(to_string(it->second));
    };
    EXPECT_EQ(tag("devices.vda.performance.seq_write_bw"), to_string(Provenance::measured));
    EXPECT_EQ(tag("devices.vda.performance.rand_write_bw"), to_string(Provenance::derived));
    EXPECT_EQ(tag("devices.vda.performance.op_latency"), to_string(Provenance::derived));
    EXPECT_EQ(tag("devices.vda.capacity"), to_string(Provenance::detected));
    EXPECT_EQ(tag("system.memory_bw"), to_string(Provenance::measured));
    EXPECT_EQ(tag("system.dirty_ratio"), to_string(Provenance::detected));
    EXPECT_EQ(tag("node.page_size"), to_string(Provenance::detected));
}

// The core accepts only power-of-two block sizes. A detected 22 KiB chunk (the IOSIG paper's NFS
// case) stays in the mount's calibration map next to the detected block size; a detected power of
// two above the page size becomes the block size, tagged !derived.
TEST(NodeWriter, DetectedChunkSizesStayLoadable) {
    Calibration c = sample_calibration();
    c.by_group["254:0"].fit->parameters.chunk = 22 * 1024;
    c.by_group["254:0"].fit->chunk_detected = true;
    c.by_group["0:40"].fit->parameters.chunk = 16 * 1024;
    c.by_group["0:40"].fit->chunk_detected = true;
    const std::string yaml = emit_yaml(build_node_document(c));
    const NodeLoadResult r = load_node_text(yaml, "calibrated.yaml");
    for (const auto& d : r.diagnostics)
        ADD_FAILURE() << d.format() << "\n" << yaml;
    ASSERT_TRUE(r.ok());
    const Mount* scratch = r.node->find_mount("/scratch");
    ASSERT_NE(scratch, nullptr);
    EXPECT_EQ(scratch->block_size, 4096u);
    EXPECT_NE(scratch->calibration_yaml.find("chunk: 22528"), std::string::npos)
        << scratch->calibration_yaml;
    EXPECT_NE(scratch->calibration_yaml.find("chunk_detected: true"), std::string::npos)
        << scratch->calibration_yaml;
    EXPECT_EQ(r.node->provenance.at("mounts[/scratch].block_size"), Provenance::detected);
    const Mount* raid = r.node->find_mount("/mnt/raid1");
    ASSERT_NE(raid, nullptr);
    EXPECT_EQ(raid->block_size, 16384u);
    EXPECT_EQ(r.node->provenance.at("mounts[/mnt/raid1].block_size"), Provenance::derived);
}

// A device limited by a blk-throttle limit in this process's cgroup gets the kernel's slice in its
// performance map, tagged !detected; the others get no throttle_slice key at all.
TEST(NodeWriter, AThrottledDeviceGetsItsSliceTaggedDetected) {
    const std::string plain = emit_yaml(build_node_document(sample_calibration()));
    EXPECT_EQ(plain.find("throttle_slice"), std::string::npos) << plain;

    Calibration c = sample_calibration();
    c.discovery.devices.at("vda").throttle = {
        0.1, "254:0 200 (/sys/fs/cgroup/blkio/lab/blkio.throttle.read_iops_device)",
        "the kernel's slice for a rotational queue (vda)"};
    c.discovery.devices.at("btrfs-0e0730ef").throttle = {0.02, "7:1 500 (io.max)",
                                                         "a non-rotational queue (loop1)"};
    const std::string yaml = emit_yaml(build_node_document(c));
    EXPECT_NE(yaml.find("throttle_slice: !detected 100ms  # blk-throttle limit in this process's "
                        "cgroup; the kernel's slice for a rotational queue (vda)"),
              std::string::npos)
        << yaml;
    EXPECT_NE(yaml.find("throttle_slice: !detected 20ms"), std::string::npos) << yaml;
    const NodeLoadResult r = load_node_text(yaml, "calibrated.yaml");
    for (const auto& d : r.diagnostics)
        ADD_FAILURE() << d.format() << "\n" << yaml;
    ASSERT_TRUE(r.ok());
    EXPECT_DOUBLE_EQ(r.node->find_device("vda")->performance.throttle_slice, 0.1);
    EXPECT_EQ(r.node->provenance.at("devices.vda.performance.throttle_slice"),
              Provenance::detected);
    EXPECT_DOUBLE_EQ(r.node->find_device("btrfs-0e0730ef")->performance.throttle_slice, 0.02);
    EXPECT_DOUBLE_EQ(r.node->find_device("ram-dev-shm")->performance.throttle_slice, 0);
}

// A measured device's queue readahead and largest IO go into its performance map, tagged
// !detected, for the tier's model of reads through the page cache; without them, no keys.
TEST(NodeWriter, AMeasuredDeviceGetsItsReadaheadTaggedDetected) {
    const std::string plain = emit_yaml(build_node_document(sample_calibration()));
    EXPECT_EQ(plain.find("read_ahead"), std::string::npos) << plain;
    Calibration c = sample_calibration();
    c.discovery.devices.at("vda").read_ahead = std::uint64_t(2560) << 10;
    c.discovery.devices.at("vda").max_io = std::uint64_t(1280) << 10;
    const std::string yaml = emit_yaml(build_node_document(c));
    EXPECT_NE(yaml.find("read_ahead: !detected 2560K  # queue/read_ahead_kb"), std::string::npos)
        << yaml;
    EXPECT_NE(yaml.find("max_io: !detected 1280K  # queue/max_sectors_kb"), std::string::npos)
        << yaml;
    const NodeLoadResult r = load_node_text(yaml, "calibrated.yaml");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.node->find_device("vda")->performance.read_ahead, std::uint64_t(2560) << 10);
    EXPECT_EQ(r.node->find_device("vda")->performance.max_io, std::uint64_t(1280) << 10);
    EXPECT_EQ(r.node->provenance.at("devices.vda.performance.read_ahead"), Provenance::detected);
}

class Overrides : public ::testing::Test {
protected:
    void TearDown() override { fs::remove(file_); }
    std::string write(const std::string& text) {
        std::ofstream(file_) << text;
        return file_.string();
    }
    fs::path file_ =
        fs::temp_directory_path() / ("iosig-overrides-" + std::to_string(getpid()) + ".yaml");
};

TEST_F(Overrides, SiteFactsMergeByPathAndNameAndBecomeUser) {
    NodeDocument doc = build_node_document(sample_calibration());
    const auto warnings = apply_overrides(doc, write(R"(
devices:
  vda:
    reliability: {mttf: 10y, ber: 1e-6, mttr: 1d}
  sdz:
    reliability: {mttf: 1y}
mounts:
  - path: /scratch/shared
    global: true
    labels: [shared, project]
  - path: /not/calibrated
    archive: true
)"));
    ASSERT_EQ(warnings.size(), 2u);
    EXPECT_NE(warnings[0].find("device 'sdz' was not discovered"), std::string::npos)
        << warnings[0];
    EXPECT_NE(warnings[0].find(file_.string() + ":5:3:"), std::string::npos)
        << warnings[0]; // file:line:col of the entry
    EXPECT_NE(warnings[1].find("'/not/calibrated' was not calibrated"), std::string::npos)
        << warnings[1];
    const NodeLoadResult r = load_node_text(emit_yaml(doc), "calibrated.yaml");
    for (const auto& d : r.diagnostics)
        ADD_FAILURE() << d.format();
    ASSERT_TRUE(r.ok());
    const Mount* shared = r.node->find_mount("/scratch/shared");
    EXPECT_TRUE(shared->global);
    EXPECT_EQ(shared->labels, (std::vector<std::string>{"shared", "project"}));
    EXPECT_FALSE(r.node->find_mount("/scratch")->global);
    const Device* vda = r.node->find_device("vda");
    ASSERT_TRUE(vda->reliability.mttf);
    EXPECT_NEAR(*vda->reliability.mttf, 10 * 365.25 * 86400, 1);
    EXPECT_NEAR(vda->performance.seq_write_bw, 1e9, 1); // measured values stay
    auto tag = [&](const std::string& key) {
        const auto it = r.node->provenance.find(key);
        return it == r.node->provenance.end() ? std::string("(none)")
                                              : std::string(to_string(it->second));
    };
    EXPECT_EQ(tag("devices.vda.reliability.mttf"), to_string(Provenance::user));
    EXPECT_EQ(tag("mounts[/scratch/shared].global"), to_string(Provenance::user));
    EXPECT_EQ(tag("mounts[/scratch/shared].labels"), "(none)"); // sequences are not tagged
}

TEST(OverridesExample, TheCommentedExampleMergesIntoCalibratorOutput) {
    // configs/calibrate-overrides.example.yaml is a fragment for --overrides, not a node file.
    NodeDocument doc = build_node_document(sample_calibration());
    const auto warnings =
        apply_overrides(doc, std::string(IOSIG_CONFIGS_DIR) + "/calibrate-overrides.example.yaml");
    // Its device names and most paths are another machine's: reported, not fatal.
    EXPECT_FALSE(warnings.empty());
    const NodeLoadResult r = load_node_text(emit_yaml(doc), "calibrated.yaml");
    for (const auto& d : r.diagnostics)
        ADD_FAILURE() << d.format();
    ASSERT_TRUE(r.ok());
    const Mount* scratch = r.node->find_mount("/scratch");
    ASSERT_NE(scratch, nullptr);
    EXPECT_TRUE(scratch->global);
    EXPECT_EQ(r.node->provenance.at("mounts[/scratch].global"), Provenance::user);
}

TEST_F(Overrides, BrokenFilesAreReportedWithTheirLocation) {
    NodeDocument doc = build_node_document(sample_calibration());
    try {
        apply_overrides(doc, write("mounts:\n  - path: /x\n    global: [true\n"));
        FAIL() << "no error";
    } catch (const OverridesError& e) {
        EXPECT_NE(std::string(e.what()).find(file_.string() + ":"), std::string::npos) << e.what();
    }
    try {
        apply_overrides(doc, write("devices:\n  vda: {}\nmountz:\n  - path: /x\n"));
        FAIL() << "no error";
    } catch (const OverridesError& e) {
        EXPECT_NE(std::string(e.what()).find(file_.string() + ":3:1: unknown section 'mountz'"),
                  std::string::npos)
            << e.what();
    }
    try {
        apply_overrides(doc, write("mounts:\n  - global: true\n"));
        FAIL() << "no error";
    } catch (const OverridesError& e) {
        EXPECT_NE(std::string(e.what()).find("needs 'path'"), std::string::npos) << e.what();
    }
    EXPECT_THROW(apply_overrides(doc, "/nonexistent/overrides.yaml"), OverridesError);
}

} // namespace
} // namespace iosig::calibrate
