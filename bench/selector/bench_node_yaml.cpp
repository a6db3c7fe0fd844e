// Loading a node YAML of 10 mounts (target: <= 5 ms): from text, from a file, as two layered files
// (calibrated + site overrides), and writing it back with to_yaml.
// Run: build/bench/bench_node_yaml --benchmark-samples 200   (docs/performance.md, "selector: YAML
// loading")
#define CATCH_CONFIG_MAIN
#include "iosig/node_yaml.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace {

// A realistic calibrated node: 10 mounts over simple devices, two RAIDs, a partition and an opaque
// NFS; measured values carry tags, one device keeps its calibration points.
std::string calibrated_node() {
    std::string text = R"(node: {name: bench-node, page_size: !detected 4K}
system:
  memory_bw: !measured 9.5G/s
  page_cache_write_bw: !measured 2.1G/s
  page_cache_write_bw_flushing: !measured 1.3G/s
  write_syscall_base: !measured 1.4us
  write_syscall_per_byte: !measured 2.2e-10
  sync_write_syscall_base: !measured 25us
  sync_write_syscall_per_byte: !measured 1.1e-9
  dirty_ratio: !detected 0.2
  dirty_background_ratio: !detected 0.1
  dirtyable_memory: !detected 22G
  dirty_expire: !detected 30s
  dirty_writeback_interval: !detected 5s
  stdio_buffer_size: !detected 4K
devices:
  ram0:
    structure: simple
    media: ram
    dev_path: /dev/ram0
    capacity: 1G
    performance: {seq_read_bw: !measured 5.2G/s, seq_write_bw: !measured 3.1G/s, op_latency: !measured 3us}
    calibration:
      tool: iosig-calibrate 0.1
      points: [{size: 4K, bw: 1.1G/s}, {size: 64K, bw: 2.8G/s}, {size: 1M, bw: 3.1G/s}]
  nvram0:
    media: nvram
    dev_path: /dev/pmem0
    capacity: 2G
    performance: {seq_read_bw: !measured 2.5G/s, seq_write_bw: !measured 1.5G/s, rand_read_bw: 2G/s, rand_write_bw: 1.2G/s, op_latency: 10us}
)";
    for (int i = 0; i < 4; ++i)
        text += "  ssd" + std::to_string(i) + ": {media: ssd, dev_path: /dev/sd" +
                std::string(1, static_cast<char>('a' + i)) +
                ", capacity: !detected 240G, performance: {seq_read_bw: !measured 540M/s, "
                "seq_write_bw: !measured 480M/s, op_latency: !measured 120us, max_iops: 80000}}\n";
    text += R"(  md0: {structure: complex, scheme: raid1, members: [ssd0, ssd1], dev_path: /dev/md0}
  md1: {structure: complex, scheme: raid5, members: [ssd2, ssd3, hdd1]}
  hdd0:
    media: hdd
    rotational: true
    dev_path: /dev/sde
    capacity: !detected 8T
    performance: {seq_read_bw: !measured 210M/s, seq_write_bw: !measured 200M/s, op_latency: !measured 4ms, seek_latency: !measured 8.5ms, max_iops: 180}
  hdd1: {media: hdd, rotational: true, capacity: 4T, performance: {seq_read_bw: 180M/s, seq_write_bw: 170M/s, seek_latency: 9ms}}
  hdd0p1: {structure: partition, owner: hdd0, capacity: 2T, dev_path: /dev/sde1}
  hdd0p2: {structure: partition, owner: hdd0, capacity: 6T, dev_path: /dev/sde2}
  nfs:
    structure: complex
    scheme: opaque
    media: network
    capacity: 100T
    mttdl: 100y
    performance: {seq_read_bw: !measured 110M/s, seq_write_bw: !measured 95M/s, op_latency: !measured 1.2ms}
mounts:
  - {path: /mnt/ramdisk, device: ram0, fs_type: tmpfs, volatile: true, free: !detected 1G}
  - {path: /mnt/pmem, device: nvram0, fs_type: ext4, free: !detected 1.8G}
  - {path: /mnt/raid1, device: md0, fs_type: ext4, free: !detected 200G}
  - {path: /mnt/raid5, device: md1, fs_type: xfs, free: !detected 400G}
  - {path: /mnt/ssd0, device: ssd0, fs_type: ext4, free: !detected 100G}
  - {path: /mnt/ssd2, device: ssd2, fs_type: ext4, free: !detected 100G}
  - {path: /scratch, device: hdd0p1, fs_type: ext4, block_size: 4K, free: !detected 1.5T}
  - {path: /data, device: hdd0p2, fs_type: xfs, free: !detected 5T}
  - {path: /mnt/hdd1, device: hdd1, fs_type: ext4, free: !detected 3T}
  - {path: /home, device: nfs, fs_type: nfs4, global: true, free: !detected 60T}
)";
    return text;
}

// What an administrator adds on top (docs/config.md, "Layering").
constexpr const char* site_overrides = R"(devices:
  ssd0: {reliability: {mttf: !user 10y, ber: !user 1e-6, mttr: !user 1d}}
  ssd1: {reliability: {mttf: !user 10y, ber: !user 1e-6, mttr: !user 1d}}
  ssd2: {reliability: {mttf: !user 10y, ber: !user 1e-6, mttr: !user 1d}}
  ssd3: {reliability: {mttf: !user 10y, ber: !user 1e-6, mttr: !user 1d}}
  hdd0: {reliability: {mttf: !user 5y, ber: !user 1e-6, mttr: !user 2d}}
  hdd1: {reliability: {mttf: !user 5y, ber: !user 1e-6, mttr: !user 2d}}
mounts:
  - {path: /mnt/raid1, labels: [reliable], ecc: {correctable_bits: 2, sector_bits: 512}}
  - {path: /data, labels: [bulk, archive-tier], archive: true}
  - {path: /home, labels: [home], tamperproof: true}
)";

struct Files {
    std::filesystem::path dir, calibrated, site;
    Files() {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "iosig-bench-yaml-XXXXXX").string();
        dir = ::mkdtemp(pattern.data()) ? pattern : std::string(".");
        calibrated = dir / "calibrated.yaml";
        site = dir / "site.yaml";
        std::ofstream(calibrated) << calibrated_node();
        std::ofstream(site) << site_overrides;
    }
    ~Files() {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }
};

} // namespace

TEST_CASE("node YAML of 10 mounts") {
    const std::string text = calibrated_node();
    const Files files;
    const auto once = iosig::load_node_files({files.calibrated, files.site});
    for (const auto& d : once.diagnostics)
        WARN(d.format());
    REQUIRE(once.ok());
    REQUIRE(once.node->mounts.size() == 10);
    REQUIRE(once.node->find_mount("/data")->archive);
    REQUIRE(iosig::load_node_text(text, "calibrated.yaml").ok());

    BENCHMARK("load_node_text (one file, 10 mounts)") {
        return iosig::load_node_text(text, "calibrated.yaml");
    };
    BENCHMARK("load_node_files (one file)") {
        return iosig::load_node_files({files.calibrated});
    };
    BENCHMARK("load_node_files (calibrated + site overrides)") {
        return iosig::load_node_files({files.calibrated, files.site});
    };
    BENCHMARK("to_yaml") {
        return iosig::to_yaml(*once.node);
    };
}
