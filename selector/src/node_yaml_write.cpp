// Node -> YAML in the schema of docs/config.md, with units where they are exact and provenance tags
// where node.provenance has them, so that loading the text gives back an equal model.
#include "iosig/node_yaml.hpp"
#include "iosig/units.hpp"
#include "node_yaml_internal.hpp"

#include <cmath>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

namespace iosig {
namespace {

using node_yaml_detail::device_key;
using node_yaml_detail::mount_key;

std::string bandwidth_text(double bytes_per_second) {
    if (bytes_per_second >= 1 && bytes_per_second < 0x1p63 &&
        bytes_per_second == std::floor(bytes_per_second))
        return format_size(static_cast<std::uint64_t>(bytes_per_second)) + "/s";
    return fmt::format("{}", bytes_per_second); // shortest text that parses back to the same double
}

std::string number_text(double value) {
    return fmt::format("{}", value);
}

class Writer {
public:
    explicit Writer(const Node& node) : node_(node) {
        out_.SetIndent(2);
        out_.SetMapFormat(YAML::Block);
    }

    std::string run() {
        out_ << YAML::BeginMap;
        write_node_section();
        write_system();
        write_devices();
        write_mounts();
        out_ << YAML::EndMap;
        return std::string(out_.c_str()) + "\n";
    }

private:
    void key(const std::string& path, std::string_view name) {
        out_ << YAML::Key << std::string(name) << YAML::Value;
        const auto it = node_.provenance.find(path);
        if (it != node_.provenance.end() && it->second != Provenance::unknown)
            out_ << YAML::LocalTag(std::string(to_string(it->second)));
    }
    void scalar(const std::string& section, std::string_view name, const std::string& text) {
        key(section + "." + std::string(name), name);
        out_ << text;
    }
    void begin_map(const std::string& path, std::string_view name) {
        key(path, name);
        out_ << YAML::BeginMap;
    }
    void list(const std::string& section, std::string_view name,
              const std::vector<std::string>& items) {
        key(section + "." + std::string(name), name);
        out_ << YAML::Flow << YAML::BeginSeq;
        for (const std::string& item : items)
            out_ << item;
        out_ << YAML::EndSeq;
    }
    void optional_bandwidth(const std::string& s, std::string_view name,
                            const std::optional<double>& v) {
        if (v) scalar(s, name, bandwidth_text(*v));
    }
    void optional_duration(const std::string& s, std::string_view name,
                           const std::optional<double>& v) {
        if (v) scalar(s, name, format_duration(*v));
    }
    void optional_number(const std::string& s, std::string_view name,
                         const std::optional<double>& v) {
        if (v) scalar(s, name, number_text(*v));
    }
    void optional_size(const std::string& s, std::string_view name,
                       const std::optional<std::uint64_t>& v) {
        if (v) scalar(s, name, format_size(*v));
    }
    // `calibration_yaml` holds a YAML map; it is re-emitted as a nested map, not as a string.
    void calibration(const std::string& section, const std::string& text) {
        if (text.empty()) return;
        node_yaml_detail::Diagnostics ignored;
        node_yaml_detail::Tree tree;
        if (!node_yaml_detail::parse_tree(text, "calibration", tree, ignored) ||
            tree.kind != node_yaml_detail::Tree::Kind::map)
            tree = node_yaml_detail::Tree(); // not a map: keep the file loadable
        tree.kind = node_yaml_detail::Tree::Kind::map;
        key(section + ".calibration", "calibration");
        if (tree.entries.empty())
            out_ << YAML::Flow << YAML::BeginMap << YAML::EndMap;
        else
            node_yaml_detail::emit_tree(out_, tree);
    }

    void write_node_section() {
        begin_map("node", "node");
        if (!node_.name.empty()) scalar("node", "name", node_.name);
        scalar("node", "page_size", format_size(node_.page_size));
        out_ << YAML::EndMap;
    }

    void write_system() {
        const SystemParameters& s = node_.system;
        if (s == SystemParameters{}) return;
        const std::string p = "system";
        begin_map(p, "system");
        optional_bandwidth(p, "memory_bw", s.memory_bw);
        optional_bandwidth(p, "page_cache_write_bw", s.page_cache_write_bw);
        optional_bandwidth(p, "page_cache_write_bw_flushing", s.page_cache_write_bw_flushing);
        optional_bandwidth(p, "page_cache_rewrite_bw", s.page_cache_rewrite_bw);
        optional_bandwidth(p, "page_cache_rewrite_bw_cold", s.page_cache_rewrite_bw_cold);
        optional_duration(p, "rewrite_cooling_time", s.rewrite_cooling_time);
        optional_duration(p, "write_syscall_base", s.write_syscall_base);
        optional_duration(p, "write_syscall_cold_base", s.write_syscall_cold_base);
        optional_duration(p, "call_cooling_time", s.call_cooling_time);
        optional_number(p, "write_syscall_per_byte", s.write_syscall_per_byte);
        optional_duration(p, "sync_write_syscall_base", s.sync_write_syscall_base);
        optional_number(p, "sync_write_syscall_per_byte", s.sync_write_syscall_per_byte);
        optional_number(p, "dirty_ratio", s.dirty_ratio);
        optional_number(p, "dirty_background_ratio", s.dirty_background_ratio);
        optional_size(p, "dirty_bytes", s.dirty_bytes);
        optional_size(p, "dirty_background_bytes", s.dirty_background_bytes);
        optional_size(p, "dirtyable_memory", s.dirtyable_memory);
        optional_duration(p, "dirty_expire", s.dirty_expire);
        optional_duration(p, "dirty_writeback_interval", s.dirty_writeback_interval);
        optional_size(p, "stdio_buffer_size", s.stdio_buffer_size);
        out_ << YAML::EndMap;
    }

    void write_performance(const std::string& device, const Performance& perf) {
        if (perf == Performance{}) return;
        const std::string p = device + ".performance";
        begin_map(p, "performance");
        // Absent and 0 mean the same (unknown / no cap), and the loader rejects a 0 bandwidth.
        const auto positive = [&](std::string_view name, double value, auto format) {
            if (value > 0) scalar(p, name, format(value));
        };
        positive("seq_read_bw", perf.seq_read_bw, bandwidth_text);
        positive("seq_write_bw", perf.seq_write_bw, bandwidth_text);
        positive("rand_read_bw", perf.rand_read_bw, bandwidth_text);
        positive("rand_write_bw", perf.rand_write_bw, bandwidth_text);
        positive("op_latency", perf.op_latency, format_duration);
        positive("seek_latency", perf.seek_latency, format_duration);
        positive("max_iops", perf.max_iops, number_text);
        if (perf.independent_read_write) scalar(p, "independent_read_write", "true");
        positive("throttle_slice", perf.throttle_slice, format_duration);
        optional_size(p, "read_ahead", perf.read_ahead);
        optional_size(p, "max_io", perf.max_io);
        out_ << YAML::EndMap;
    }

    void write_device(const Device& d) {
        const std::string p = device_key(d.name);
        begin_map(p, d.name);
        scalar(p, "structure", std::string(to_string(d.structure)));
        scalar(p, "media", std::string(to_string(d.media)));
        if (!d.dev_path.empty()) scalar(p, "dev_path", d.dev_path);
        scalar(p, "rotational", d.rotational ? "true" : "false");
        if (d.capacity > 0) scalar(p, "capacity", format_size(d.capacity));
        write_performance(p, d.performance);
        if (d.reliability != ReliabilityFigures{}) {
            const std::string r = p + ".reliability";
            begin_map(r, "reliability");
            optional_duration(r, "mttf", d.reliability.mttf);
            if (d.reliability.ber) scalar(r, "ber", format_probability(*d.reliability.ber));
            optional_duration(r, "mttr", d.reliability.mttr);
            out_ << YAML::EndMap;
        }
        if (d.scheme != RedundancyScheme::none)
            scalar(p, "scheme", std::string(to_string(d.scheme)));
        if (!d.members.empty()) list(p, "members", d.members);
        if (d.replicas > 0) scalar(p, "replicas", fmt::format("{}", d.replicas));
        if (d.data_units > 0) scalar(p, "data_units", fmt::format("{}", d.data_units));
        if (d.parity_units > 0) scalar(p, "parity_units", fmt::format("{}", d.parity_units));
        optional_duration(p, "mttdl", d.mttdl);
        if (!d.owner.empty()) scalar(p, "owner", d.owner);
        calibration(p, d.calibration_yaml);
        out_ << YAML::EndMap;
    }

    void write_devices() {
        if (node_.devices.empty()) return;
        begin_map("devices", "devices");
        for (const Device& d : node_.devices)
            write_device(d);
        out_ << YAML::EndMap;
    }

    void write_mount(const Mount& m) {
        const std::string p = mount_key(m.path);
        const auto tag = node_.provenance.find(p);
        if (tag != node_.provenance.end() && tag->second != Provenance::unknown)
            out_ << YAML::LocalTag(std::string(to_string(tag->second)));
        out_ << YAML::BeginMap;
        scalar(p, "path", m.path);
        scalar(p, "device", m.device);
        if (!m.fs_type.empty()) scalar(p, "fs_type", m.fs_type);
        if (!m.labels.empty()) list(p, "labels", m.labels);
        scalar(p, "global", m.global ? "true" : "false");
        scalar(p, "volatile", m.is_volatile ? "true" : "false");
        scalar(p, "archive", m.archive ? "true" : "false");
        scalar(p, "tamperproof", m.tamperproof ? "true" : "false");
        if (m.capacity > 0) scalar(p, "capacity", format_size(m.capacity));
        if (m.capacity > 0 || m.free_space > 0) scalar(p, "free", format_size(m.free_space));
        scalar(p, "block_size", format_size(m.block_size));
        if (m.max_file_size > 0) scalar(p, "max_file_size", format_size(m.max_file_size));
        begin_map(p + ".ecc", "ecc");
        scalar(p + ".ecc", "correctable_bits", fmt::format("{}", m.ecc.correctable_bits));
        scalar(p + ".ecc", "sector_bits", fmt::format("{}", m.ecc.sector_bits));
        out_ << YAML::EndMap;
        calibration(p, m.calibration_yaml);
        out_ << YAML::EndMap;
    }

    void write_mounts() {
        if (node_.mounts.empty()) return;
        key("mounts", "mounts");
        out_ << YAML::BeginSeq;
        for (const Mount& m : node_.mounts)
            write_mount(m);
        out_ << YAML::EndSeq;
    }

    const Node& node_;
    YAML::Emitter out_;
};

} // namespace

std::string to_yaml(const Node& node) {
    return Writer(node).run();
}

} // namespace iosig
