// The node file schema (docs/config.md): which keys each section has and the unit and range of
// each.
#include "node_yaml_internal.hpp"
#include "node_yaml_section.hpp"

#include <fmt/format.h>

namespace iosig::node_yaml_detail {
namespace {

void read_node_section(Section node_section, Node& node) {
    node_section.text("name", node.name);
    node_section.size("page_size", node.page_size, SizeRule::power_of_two);
}

void read_system(Section s, SystemParameters& system) {
    s.bandwidth("memory_bw", system.memory_bw);
    s.bandwidth("page_cache_write_bw", system.page_cache_write_bw);
    s.bandwidth("page_cache_write_bw_flushing", system.page_cache_write_bw_flushing);
    s.bandwidth("page_cache_rewrite_bw", system.page_cache_rewrite_bw);
    s.bandwidth("page_cache_rewrite_bw_cold", system.page_cache_rewrite_bw_cold);
    s.duration("rewrite_cooling_time", system.rewrite_cooling_time, DurationRule::non_negative);
    s.duration("write_syscall_base", system.write_syscall_base, DurationRule::non_negative);
    s.duration("write_syscall_cold_base", system.write_syscall_cold_base,
               DurationRule::non_negative);
    s.duration("call_cooling_time", system.call_cooling_time, DurationRule::non_negative);
    s.number("write_syscall_per_byte", system.write_syscall_per_byte);
    s.duration("sync_write_syscall_base", system.sync_write_syscall_base,
               DurationRule::non_negative);
    s.number("sync_write_syscall_per_byte", system.sync_write_syscall_per_byte);
    s.ratio("dirty_ratio", system.dirty_ratio);
    s.ratio("dirty_background_ratio", system.dirty_background_ratio);
    s.size("dirty_bytes", system.dirty_bytes, SizeRule::any);
    s.size("dirty_background_bytes", system.dirty_background_bytes, SizeRule::any);
    s.size("dirtyable_memory", system.dirtyable_memory, SizeRule::positive);
    s.duration("dirty_expire", system.dirty_expire, DurationRule::non_negative);
    s.duration("dirty_writeback_interval", system.dirty_writeback_interval,
               DurationRule::non_negative);
    s.size("stdio_buffer_size", system.stdio_buffer_size, SizeRule::positive);
}

void read_performance(Section s, Performance& p) {
    s.bandwidth("seq_read_bw", p.seq_read_bw);
    s.bandwidth("seq_write_bw", p.seq_write_bw);
    s.bandwidth("rand_read_bw", p.rand_read_bw);
    s.bandwidth("rand_write_bw", p.rand_write_bw);
    s.duration("op_latency", p.op_latency, DurationRule::non_negative);
    s.duration("seek_latency", p.seek_latency, DurationRule::non_negative);
    s.number("max_iops", p.max_iops);
    s.flag("independent_read_write", p.independent_read_write);
    s.duration("throttle_slice", p.throttle_slice, DurationRule::non_negative);
    s.size("read_ahead", p.read_ahead, SizeRule::any);
    s.size("max_io", p.max_io, SizeRule::positive);
}

void read_reliability(Section s, ReliabilityFigures& r) {
    s.duration("mttf", r.mttf, DurationRule::positive);
    s.probability("ber", r.ber);
    s.duration("mttr", r.mttr, DurationRule::positive);
}

Device read_device(const TreeEntry& entry, ReadContext& context) {
    Device device;
    device.name = entry.key;
    device.where = entry.key_where;
    Section s(&entry.value, device_key(entry.key), fmt::format("device '{}'", entry.key),
              {"structure", "media", "dev_path", "rotational", "capacity", "performance",
               "reliability", "calibration", "scheme", "members", "replicas", "data_units",
               "parity_units", "mttdl", "owner"},
              context);
    // Without `structure`, the keys given say which kind of device this is.
    if (!s.enumeration("structure", device.structure, structure_names())) {
        if (s.has("owner"))
            device.structure = DeviceStructure::partition;
        else if (s.has("scheme") || s.has("members"))
            device.structure = DeviceStructure::complex;
    }
    s.enumeration("media", device.media, media_names());
    s.text("dev_path", device.dev_path);
    s.flag("rotational", device.rotational);
    s.size("capacity", device.capacity, SizeRule::positive);
    read_performance(s.section("performance",
                               {"seq_read_bw", "seq_write_bw", "rand_read_bw", "rand_write_bw",
                                "op_latency", "seek_latency", "max_iops", "independent_read_write",
                                "throttle_slice", "read_ahead", "max_io"}),
                     device.performance);
    read_reliability(s.section("reliability", {"mttf", "ber", "mttr"}), device.reliability);
    s.yaml_text("calibration", device.calibration_yaml);
    s.enumeration("scheme", device.scheme, scheme_names());
    s.text_list("members", device.members);
    s.count("replicas", device.replicas, 1);
    s.count("data_units", device.data_units, 1);
    s.count("parity_units", device.parity_units, 1);
    s.duration("mttdl", device.mttdl, DurationRule::positive);
    s.text("owner", device.owner);
    return device;
}

Mount read_mount(const Tree& item, std::size_t index, ReadContext& context) {
    Mount mount;
    mount.where = item.where;
    std::string key = fmt::format("mounts[#{}]", index + 1);
    std::string what = fmt::format("mount #{}", index + 1);
    if (const TreeEntry* path = item.kind == Tree::Kind::map ? item.find("path") : nullptr;
        path && path->value.kind == Tree::Kind::scalar && !path->value.scalar.empty()) {
        key = mount_key(normalize_mount_path(path->value.scalar));
        what = fmt::format("mount '{}'", path->value.scalar);
    }
    record_value(context, key, item);
    Section s(&item, key, what,
              {"path", "device", "fs_type", "labels", "global", "volatile", "archive",
               "tamperproof", "capacity", "free", "block_size", "max_file_size", "ecc",
               "calibration"},
              context);
    if (s.text("path", mount.path)) mount.path = normalize_mount_path(mount.path);
    s.text("device", mount.device);
    s.text("fs_type", mount.fs_type);
    s.text_list("labels", mount.labels);
    s.flag("global", mount.global);
    s.flag("volatile", mount.is_volatile);
    s.flag("archive", mount.archive);
    s.flag("tamperproof", mount.tamperproof);
    s.size("capacity", mount.capacity, SizeRule::positive);
    s.size("free", mount.free_space, SizeRule::any);
    s.size("block_size", mount.block_size, SizeRule::power_of_two);
    s.size("max_file_size", mount.max_file_size, SizeRule::any);
    Section ecc = s.section("ecc", {"correctable_bits", "sector_bits"});
    ecc.count("correctable_bits", mount.ecc.correctable_bits, 0);
    ecc.count("sector_bits", mount.ecc.sector_bits, 1);
    s.yaml_text("calibration", mount.calibration_yaml);
    return mount;
}

} // namespace

Node read_node(const Tree& root, Locations& locations, Diagnostics& diagnostics) {
    Node node;
    ReadContext context{diagnostics, locations, node.provenance};
    Section top(&root, "", "the node file", {"node", "system", "devices", "mounts"}, context);
    read_node_section(top.section("node", {"name", "page_size"}), node);
    read_system(top.section("system", {"memory_bw",
                                       "page_cache_write_bw",
                                       "page_cache_write_bw_flushing",
                                       "page_cache_rewrite_bw",
                                       "page_cache_rewrite_bw_cold",
                                       "rewrite_cooling_time",
                                       "write_syscall_base",
                                       "write_syscall_cold_base",
                                       "call_cooling_time",
                                       "write_syscall_per_byte",
                                       "sync_write_syscall_base",
                                       "sync_write_syscall_per_byte",
                                       "dirty_ratio",
                                       "dirty_background_ratio",
                                       "dirty_bytes",
                                       "dirty_background_bytes",
                                       "dirtyable_memory",
                                       "dirty_expire",
                                       "dirty_writeback_interval",
                                       "stdio_buffer_size"}),
                node.system);

    if (const Tree* devices = top.value("devices")) {
        if (devices->kind != Tree::Kind::map) {
            diagnostics.error(devices->where, "'devices' must be a map from device name to device "
                                              "(ssd0: {media: ssd, ...}), not a list or value");
        } else {
            for (const TreeEntry& entry : devices->entries) {
                if (entry.key.empty()) {
                    diagnostics.error(entry.key_where, "a device needs a non-empty name");
                    continue;
                }
                record_value(context, device_key(entry.key), entry.value);
                node.devices.push_back(read_device(entry, context));
            }
        }
    }
    if (const Tree* mounts = top.value("mounts")) {
        if (mounts->kind != Tree::Kind::sequence) {
            diagnostics.error(mounts->where,
                              "'mounts' must be a list of mounts (- path: /mnt/x ...)");
        } else {
            for (std::size_t i = 0; i < mounts->items.size(); ++i) {
                const Tree& item = mounts->items[i];
                if (item.kind != Tree::Kind::map) {
                    diagnostics.error(item.where,
                                      fmt::format("mount #{} must be a map with at least "
                                                  "'path' and 'device'",
                                                  i + 1));
                    continue;
                }
                node.mounts.push_back(read_mount(item, i, context));
            }
        }
    }
    return node;
}

} // namespace iosig::node_yaml_detail
