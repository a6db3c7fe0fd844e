// Resolving the model's parameters from the node model (and the live kernel state), and storing
// measured ones back into it.
#include "iosig/cachesim/parameters.hpp"

#include "iosig/cachesim/kernel_state.hpp"
#include "iosig/units.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

namespace iosig::cachesim {

std::string_view to_string(Method method) {
    switch (method) {
    case Method::direct:
        return "direct";
    case Method::sync:
        return "sync";
    case Method::buffered:
        return "buffered";
    case Method::stdio:
        return "stdio";
    }
    return "?";
}

std::optional<Method> parse_method(std::string_view text) {
    for (Method m : {Method::direct, Method::sync, Method::buffered, Method::stdio})
        if (text == to_string(m)) return m;
    return std::nullopt;
}

const Mount* mount_for_path(const Node& node, std::string_view path) {
    const Mount* best = nullptr;
    for (const Mount& mount : node.mounts) {
        std::string_view mp = mount.path;
        while (mp.size() > 1 && mp.back() == '/')
            mp.remove_suffix(1);
        const bool inside =
            path == mp || mp == "/" ||
            (path.starts_with(mp) && path.size() > mp.size() && path[mp.size()] == '/');
        if (inside && (!best || mp.size() > best->path.size())) best = &mount;
    }
    return best;
}

namespace {

// Collects missing keys while filling the parameters.
class Resolver {
public:
    explicit Resolver(ResolvedParameters& out) : out_(out) {}

    // A fixed cost may be 0; it only has to be there.
    void need_cost(const std::optional<double>& value, double& target, const char* key) {
        if (value && *value >= 0)
            target = *value;
        else
            out_.missing.emplace_back(key);
    }
    template <class T>
    void need(const std::optional<T>& value, double& target, const char* key) {
        if (value && *value > 0)
            target = static_cast<double>(*value);
        else
            out_.missing.emplace_back(key);
    }
    void need_positive(double value, double& target, std::string key) {
        if (value > 0)
            target = value;
        else
            out_.missing.push_back(std::move(key));
    }
    void note(std::string text) { out_.notes.push_back(std::move(text)); }

private:
    ResolvedParameters& out_;
};

bool thresholds_from_node(const SystemParameters& s, DirtyThresholds& t) {
    double hard = 0, background = 0;
    if (s.dirty_bytes && *s.dirty_bytes > 0)
        hard = static_cast<double>(*s.dirty_bytes);
    else if (s.dirty_ratio && s.dirtyable_memory)
        hard = *s.dirty_ratio * static_cast<double>(*s.dirtyable_memory);
    if (s.dirty_background_bytes && *s.dirty_background_bytes > 0)
        background = static_cast<double>(*s.dirty_background_bytes);
    else if (s.dirty_background_ratio && s.dirtyable_memory)
        background = *s.dirty_background_ratio * static_cast<double>(*s.dirtyable_memory);
    if (hard <= 0 || background <= 0) return false;
    // The kernel caps the background threshold at half of the hard one.
    if (background >= hard) background = hard / 2;
    t.hard = hard;
    t.background = background;
    t.limit = hard;
    return true;
}

} // namespace

ResolvedParameters resolve_parameters(const Node& node, const Mount& mount, Method method,
                                      const KernelDirtyState* live) {
    ResolvedParameters out;
    Resolver r(out);
    ModelParameters p;
    const SystemParameters& s = node.system;
    const Device* device = node.find_device(mount.device);
    const std::string dev_key = fmt::format("devices.{}.performance", mount.device);
    if (!device) {
        out.missing.push_back(
            fmt::format("devices.{} (mount {} refers to it)", mount.device, mount.path));
        return out;
    }
    const Performance& perf = device->performance;
    p.page_size = static_cast<double>(node.page_size ? node.page_size : 4096);
    p.block_size = static_cast<double>(mount.block_size ? mount.block_size : 4096);
    p.seek_latency = perf.seek_latency;
    p.device_read_bw = perf.seq_read_bw > 0 ? perf.seq_read_bw : perf.seq_write_bw;
    r.need_positive(perf.seq_write_bw, p.device_write_bw, dev_key + ".seq_write_bw");
    p.writeback_bw = p.device_write_bw;
    if (const auto wb = stored_writeback_bandwidth(*device)) p.writeback_bw = *wb;
    if (const auto q = stored_completion_quantum(*device)) p.sync_completion_quantum = *q;
    if (const auto l = stored_writeback_start_latency(*device)) p.writeback_start_latency = *l;
    if (const auto t = stored_throttle_sleep(*device)) p.throttle_sleep = *t;
    if (method == Method::direct || method == Method::sync) {
        const bool direct = method == Method::direct;
        std::string problem;
        auto curve = stored_cost_curve(*device, direct ? "direct_write_curve" : "sync_write_curve",
                                       &problem);
        if (curve)
            (direct ? p.direct_write_curve : p.sync_write_curve) = std::move(*curve);
        else if (!problem.empty())
            r.note(fmt::format("{}; Eq. {} with its fitted line instead", problem,
                               direct ? "2" : "3"));
    }

    if (method == Method::direct) {
        // Eq. 2's fixed cost: the device's per-call latency as measured through O_DIRECT, else the
        // node's synchronous write() cost.
        if (perf.op_latency > 0)
            p.direct_write_base = perf.op_latency;
        else
            r.need_cost(s.sync_write_syscall_base, p.direct_write_base,
                        (dev_key + ".op_latency (or system.sync_write_syscall_base)").c_str());
    }
    if (method == Method::sync)
        r.need_cost(s.sync_write_syscall_base, p.sync_write_syscall_base,
                    "system.sync_write_syscall_base");

    // The copy into the page cache: page_cache_write_bw, or 1 / write_syscall_per_byte.
    const bool cached = method != Method::direct;
    if (cached) {
        if (s.page_cache_write_bw && *s.page_cache_write_bw > 0)
            p.page_cache_write_bw = *s.page_cache_write_bw;
        else if (s.write_syscall_per_byte && *s.write_syscall_per_byte > 0)
            p.page_cache_write_bw = 1.0 / *s.write_syscall_per_byte;
        else
            out.missing.emplace_back("system.page_cache_write_bw");
    }
    if (method == Method::sync) {
        // sync_write_syscall_per_byte is the whole slope of an O_SYNC write's cost (as
        // iosig-calibrate measures it): copy + device. Eq. 3 needs the copy part.
        if (s.sync_write_syscall_per_byte && *s.sync_write_syscall_per_byte > 0 &&
            p.device_write_bw > 0)
            p.sync_copy_per_byte =
                std::max(0.0, *s.sync_write_syscall_per_byte - 1.0 / p.device_write_bw);
        else if (p.page_cache_write_bw > 0)
            p.sync_copy_per_byte = 1.0 / p.page_cache_write_bw;
    }
    if (method == Method::buffered || method == Method::stdio) {
        r.need_cost(s.write_syscall_base, p.write_syscall_base, "system.write_syscall_base");
        if (s.page_cache_write_bw_flushing && *s.page_cache_write_bw_flushing > 0) {
            p.page_cache_write_bw_flushing = *s.page_cache_write_bw_flushing;
        } else if (p.page_cache_write_bw > 0) {
            p.page_cache_write_bw_flushing = p.page_cache_write_bw;
            r.note("system.page_cache_write_bw_flushing absent: writes during background flush "
                   "assumed as fast as without");
        }
        if (!thresholds_from_node(s, p.thresholds) && !(live && live->thresholds()))
            out.missing.emplace_back("system.dirty_bytes/dirty_background_bytes (or the ratios "
                                     "with system.dirtyable_memory)");
        if (s.dirty_expire && *s.dirty_expire > 0) p.dirty_expire = *s.dirty_expire;
        if (s.dirty_writeback_interval && *s.dirty_writeback_interval > 0)
            p.writeback_interval = *s.dirty_writeback_interval;
    }
    if (method == Method::buffered && s.memory_bw && *s.memory_bw > 0) p.memory_bw = *s.memory_bw;
    if ((method == Method::buffered || method == Method::stdio) && s.page_cache_rewrite_bw &&
        *s.page_cache_rewrite_bw > 0)
        p.page_cache_rewrite_bw = *s.page_cache_rewrite_bw;
    if (s.write_syscall_cold_base && *s.write_syscall_cold_base > 0 && s.call_cooling_time &&
        *s.call_cooling_time > 0) {
        p.write_syscall_cold_base = *s.write_syscall_cold_base;
        p.call_cooling_time = *s.call_cooling_time;
    }
    if (s.page_cache_rewrite_bw_cold && *s.page_cache_rewrite_bw_cold > 0 &&
        s.rewrite_cooling_time && *s.rewrite_cooling_time > 0) {
        p.page_cache_rewrite_bw_cold = *s.page_cache_rewrite_bw_cold;
        p.rewrite_cooling_time = *s.rewrite_cooling_time;
    }
    if (method == Method::stdio) {
        r.need(s.memory_bw, p.memory_bw, "system.memory_bw");
        if (s.stdio_buffer_size && *s.stdio_buffer_size > 0)
            p.stdio_buffer_size = *s.stdio_buffer_size;
        else
            r.note("system.stdio_buffer_size absent: 4K assumed");
    }
    if (live) apply_kernel_state(p, *live, backing_device_of(mount.path), &out.notes);
    if (out.missing.empty()) out.parameters = p;
    return out;
}

namespace {

YAML::Node calibration_entry(const Device& device, const char* key) {
    if (device.calibration_yaml.empty()) return {};
    try {
        return YAML::Load(device.calibration_yaml)["cachesim"][key];
    } catch (const YAML::Exception&) {
        return {};
    }
}

std::optional<std::string> calibration_value(const Device& device, const char* key) {
    const YAML::Node value = calibration_entry(device, key);
    if (value && value.IsScalar()) return value.Scalar();
    return std::nullopt;
}

YAML::Node curve_to_yaml(const CostCurve& curve) {
    YAML::Node map(YAML::NodeType::Map);
    for (const auto& [size, cost] : curve.points())
        map[format_size(static_cast<std::uint64_t>(size))] = fmt::format("{:.1f}us", cost * 1e6);
    return map;
}

} // namespace

std::optional<double> stored_writeback_bandwidth(const Device& device) {
    const auto text = calibration_value(device, "writeback_bw");
    if (!text) return std::nullopt;
    const auto bw = parse_bandwidth(*text);
    if (bw && *bw.value > 0) return bw.value;
    return std::nullopt;
}

namespace {

// A duration in the device's cachesim calibration map; zero only where `zero_allowed`.
std::optional<double> stored_duration(const Device& device, const char* key, bool zero_allowed) {
    const auto text = calibration_value(device, key);
    if (!text) return std::nullopt;
    const auto seconds = parse_duration_seconds(*text);
    if (seconds && (*seconds.value > 0 || (zero_allowed && *seconds.value == 0)))
        return seconds.value;
    return std::nullopt;
}

} // namespace

std::optional<double> stored_completion_quantum(const Device& device) {
    return stored_duration(device, "sync_completion_quantum", false);
}

std::optional<double> stored_writeback_start_latency(const Device& device) {
    return stored_duration(device, "writeback_start_latency", true);
}

std::optional<double> stored_throttle_sleep(const Device& device) {
    return stored_duration(device, "throttle_sleep", false);
}

std::optional<CostCurve> stored_cost_curve(const Device& device, const char* key,
                                           std::string* problem) {
    const YAML::Node map = calibration_entry(device, key);
    if (!map) return std::nullopt;
    auto fail = [&](std::string why) -> std::optional<CostCurve> {
        if (problem)
            *problem = fmt::format("devices.{}.calibration.cachesim.{}: {}", device.name, key, why);
        return std::nullopt;
    };
    if (!map.IsMap()) return fail("expected a map of write size to cost, e.g. {4K: 120us}");
    std::vector<std::pair<double, double>> points;
    for (const auto& entry : map) {
        if (!entry.first.IsScalar() || !entry.second.IsScalar())
            return fail("expected a map of write size to cost, e.g. {4K: 120us}");
        const auto size = parse_size(entry.first.Scalar());
        const auto cost = parse_duration_seconds(entry.second.Scalar());
        if (!size || *size.value == 0)
            return fail(fmt::format("'{}' is not a write size", entry.first.Scalar()));
        if (!cost || *cost.value <= 0)
            return fail(fmt::format("'{}' is not a positive duration", entry.second.Scalar()));
        points.emplace_back(static_cast<double>(*size.value), *cost.value);
    }
    if (points.empty()) return fail("empty");
    return CostCurve(std::move(points));
}

void store_device_calibration(Device& device, const MeasuredParameters& values) {
    YAML::Node root;
    try {
        if (!device.calibration_yaml.empty()) root = YAML::Load(device.calibration_yaml);
    } catch (const YAML::Exception&) {
        root = YAML::Node();
    }
    if (!root.IsMap()) root = YAML::Node(YAML::NodeType::Map);
    YAML::Node cachesim = root["cachesim"];
    if (values.writeback_bw) cachesim["writeback_bw"] = fmt::format("{:.0f}", *values.writeback_bw);
    if (values.sync_completion_quantum)
        cachesim["sync_completion_quantum"] = format_duration(*values.sync_completion_quantum);
    if (values.writeback_start_latency)
        cachesim["writeback_start_latency"] = format_duration(*values.writeback_start_latency);
    if (values.throttle_sleep) cachesim["throttle_sleep"] = format_duration(*values.throttle_sleep);
    if (values.direct_write_curve && !values.direct_write_curve->empty())
        cachesim["direct_write_curve"] = curve_to_yaml(*values.direct_write_curve);
    if (values.sync_write_curve && !values.sync_write_curve->empty())
        cachesim["sync_write_curve"] = curve_to_yaml(*values.sync_write_curve);
    YAML::Emitter out;
    out << YAML::Flow << root;
    device.calibration_yaml = out.c_str();
}

void store_parameters(Node& node, std::string_view device_name, const MeasuredParameters& m) {
    auto mark = [&node](const std::string& key) { node.provenance[key] = Provenance::measured; };
    auto set = [&](auto& target, const auto& value, const char* key) {
        if (!value) return;
        target = *value;
        mark(fmt::format("system.{}", key));
    };
    SystemParameters& s = node.system;
    set(s.memory_bw, m.memory_bw, "memory_bw");
    set(s.page_cache_write_bw, m.page_cache_write_bw, "page_cache_write_bw");
    set(s.page_cache_write_bw_flushing, m.page_cache_write_bw_flushing,
        "page_cache_write_bw_flushing");
    set(s.page_cache_rewrite_bw, m.page_cache_rewrite_bw, "page_cache_rewrite_bw");
    set(s.page_cache_rewrite_bw_cold, m.page_cache_rewrite_bw_cold, "page_cache_rewrite_bw_cold");
    set(s.rewrite_cooling_time, m.rewrite_cooling_time, "rewrite_cooling_time");
    set(s.write_syscall_base, m.write_syscall_base, "write_syscall_base");
    set(s.write_syscall_cold_base, m.write_syscall_cold_base, "write_syscall_cold_base");
    set(s.call_cooling_time, m.call_cooling_time, "call_cooling_time");
    set(s.write_syscall_per_byte, m.write_syscall_per_byte, "write_syscall_per_byte");
    set(s.sync_write_syscall_base, m.sync_write_syscall_base, "sync_write_syscall_base");
    set(s.sync_write_syscall_per_byte, m.sync_write_syscall_per_byte,
        "sync_write_syscall_per_byte");
    set(s.stdio_buffer_size, m.stdio_buffer_size, "stdio_buffer_size");
    for (Device& d : node.devices) {
        if (d.name != device_name) continue;
        auto set_perf = [&](double& target, const std::optional<double>& value, const char* key) {
            if (!value) return;
            target = *value;
            mark(fmt::format("devices.{}.performance.{}", d.name, key));
        };
        set_perf(d.performance.seq_write_bw, m.device_write_bw, "seq_write_bw");
        set_perf(d.performance.seq_read_bw, m.device_read_bw, "seq_read_bw");
        set_perf(d.performance.seek_latency, m.seek_latency, "seek_latency");
        set_perf(d.performance.op_latency, m.op_latency, "op_latency");
        if (m.writeback_bw || m.sync_completion_quantum || m.writeback_start_latency ||
            m.throttle_sleep || m.direct_write_curve || m.sync_write_curve)
            store_device_calibration(d, m);
    }
}

} // namespace iosig::cachesim
