#include "summary.hpp"

namespace iosig::calibrate {
namespace {

using nlohmann::json;

json latency_json(const Latencies& l) {
    return {{"block", l.block}, {"samples", l.samples.size()},
            {"p50_s", l.p50},   {"p90_s", l.p90},
            {"p99_s", l.p99},   {"p999_s", l.p999},
            {"max_s", l.max},   {"mean_s", l.mean}};
}

json throughput_json(const Throughput& t) {
    return {{"block", t.block},     {"queue_depth", t.queue_depth},
            {"engine", t.engine},   {"bytes", t.bytes},
            {"seconds", t.seconds}, {"bytes_per_s", t.bytes_per_second}};
}

json iops_json(const Iops& i) {
    return {{"block", i.block}, {"queue_depth", i.queue_depth}, {"engine", i.engine},
            {"ios", i.ios},     {"seconds", i.seconds},         {"iops", i.iops}};
}

json regression_json(const CostRegression& r) {
    json points = json::array();
    for (const auto& [size, seconds] : r.points)
        points.push_back({size, seconds});
    return {{"ok", r.ok},
            {"base_s", r.base},
            {"per_byte_s", r.per_byte},
            {"r_squared", r.r_squared},
            {"samples", r.samples},
            {"points", points}};
}

template <class T>
json optional_json(const std::optional<T>& v) {
    return v ? json(*v) : json(nullptr);
}

} // namespace

nlohmann::json summarize(const Calibration& c, const std::string& yaml,
                         const std::vector<std::string>& plots,
                         const std::vector<std::string>& warnings) {
    json out;
    out["node"] = c.hostname;
    out["mode"] = c.quick ? "quick" : "full";
    out["time_budget_s"] = c.budget;
    out["elapsed_s"] = c.seconds;
    const SystemMeasurements& s = c.system;
    out["system"] = {
        {"page_cache_directory", s.page_cache_directory},
        {"page_size", s.page_size},
        {"memcpy", regression_json(s.memcpy_cost)},
        {"buffered_small", regression_json(s.buffered_small)},
        {"buffered_large", regression_json(s.buffered_large)},
        {"buffered_flushing", regression_json(s.buffered_flushing)},
        {"sync_small", regression_json(s.sync_small)},
        {"dirty_ratio", optional_json(s.dirty_ratio)},
        {"dirty_background_ratio", optional_json(s.dirty_background_ratio)},
        {"dirty_bytes", optional_json(s.dirty_bytes)},
        {"dirty_background_bytes", optional_json(s.dirty_background_bytes)},
        {"dirty_threshold_pages", optional_json(s.dirty_threshold_pages)},
        {"dirty_background_threshold_pages", optional_json(s.dirty_background_threshold_pages)},
        {"dirtyable_memory", optional_json(s.dirtyable_memory)},
        {"dirty_expire_s", optional_json(s.dirty_expire)},
        {"dirty_writeback_interval_s", optional_json(s.dirty_writeback_interval)},
        {"stdio_buffer_size", optional_json(s.stdio_buffer_size)},
        {"seconds", s.seconds},
        {"notes", s.notes},
    };
    json devices = json::object();
    for (const auto& [name, d] : c.discovery.devices) {
        devices[name] = {{"structure", std::string(to_string(d.structure))},
                         {"media", std::string(to_string(d.media))},
                         {"kind", d.kind},
                         {"dev_path", d.dev_path},
                         {"rotational", d.rotational},
                         {"capacity", d.capacity},
                         {"scheme", std::string(to_string(d.scheme))},
                         {"members", d.members},
                         {"replicas", d.replicas},
                         {"owner", d.owner},
                         {"backing_file", d.backing_file},
                         {"profile", d.profile},
                         {"numa_node", d.numa_node},
                         {"note", d.note}};
        if (d.throttle.slice > 0)
            devices[name]["throttle"] = {{"slice_s", d.throttle.slice},
                                         {"limit", d.throttle.limit},
                                         {"reason", d.throttle.reason}};
    }
    out["devices"] = devices;
    json mounts = json::array();
    for (const MountTarget& t : c.discovery.mounts) {
        json m = {{"path", t.path},
                  {"device", t.device},
                  {"fs_type", t.entry.fs_type},
                  {"mount_point", t.entry.mount_point},
                  {"source", t.entry.source},
                  {"group", t.group},
                  {"global", t.global},
                  {"volatile", t.is_volatile},
                  {"capacity", t.capacity},
                  {"free", t.free_space},
                  {"block_size", t.block_size}};
        const auto it = c.by_group.find(t.group);
        if (it != c.by_group.end()) {
            const MountMeasurements& mm = it->second;
            m["measured_in"] = mm.directory;
            if (!mm.error.empty()) {
                m["error"] = mm.error;
            } else {
                m["method"] = {{"direct", mm.method.direct},
                               {"alignment", mm.method.alignment},
                               {"alignment_source", mm.method.alignment_source}};
                m["scratch_file_size"] = mm.file_size;
                m["seconds"] = mm.seconds;
                m["budget_s"] = mm.budget;
                m["seq_write"] = throughput_json(mm.seq_write);
                m["seq_read"] = throughput_json(mm.seq_read);
                m["read_latency"] = latency_json(mm.read_latency);
                m["write_latency"] = latency_json(mm.write_latency);
                if (mm.sequential_read_latency)
                    m["sequential_read_latency"] = latency_json(*mm.sequential_read_latency);
                m["seek_latency_s"] = mm.seek_latency;
                m["random_read"] = iops_json(mm.random_read);
                m["random_write"] = iops_json(mm.random_write);
                if (mm.mixed)
                    m["mixed"] = {{"read_iops", mm.mixed->read_iops},
                                  {"write_iops", mm.mixed->write_iops},
                                  {"ios", mm.mixed->ios},
                                  {"seconds", mm.mixed->seconds},
                                  {"queue_depth", mm.mixed->queue_depth},
                                  {"engine", mm.mixed->engine},
                                  {"utilisation", read_write_utilisation(*mm.mixed, mm.random_read,
                                                                         mm.random_write)}};
                json sweep = json::array();
                for (std::size_t i = 0; i < mm.sweep.size(); ++i) {
                    const SweepPoint& p = mm.sweep[i];
                    json point = {{"chunk", p.chunk},
                                  {"ios", p.ios},
                                  {"seconds", p.seconds},
                                  {"bytes_per_s", p.bytes_per_second()}};
                    if (mm.fit && i < mm.fit->predicted_throughput.size())
                        point["eq3_bytes_per_s"] = mm.fit->predicted_throughput[i];
                    sweep.push_back(point);
                }
                m["sweep"] = sweep;
                m["sweep_skipped"] = mm.sweep_skipped;
                if (mm.fit) {
                    const Eq3Fit& f = *mm.fit;
                    m["eq3"] = {{"latency_s", f.parameters.latency},
                                {"write_bw", f.parameters.write_bw},
                                {"read_bw", f.parameters.read_bw},
                                {"chunk", f.parameters.chunk},
                                {"max_iops", f.parameters.max_iops},
                                {"median_relative_error", f.median_relative_error},
                                {"max_relative_error", f.max_relative_error},
                                {"reference_chunk", f.reference_chunk},
                                {"reference_median_relative_error", f.reference_error},
                                {"chunk_detected", f.chunk_detected}};
                }
                m["notes"] = mm.notes;
            }
        }
        mounts.push_back(m);
    }
    out["mounts"] = mounts;
    json skipped = json::array();
    for (const SkippedMount& s2 : c.discovery.skipped)
        skipped.push_back({{"path", s2.path}, {"fs_type", s2.fs_type}, {"reason", s2.reason}});
    out["skipped"] = skipped;
    out["errors"] = c.errors;
    out["warnings"] = warnings;
    out["plots"] = plots;
    out["yaml"] = yaml;
    return out;
}

} // namespace iosig::calibrate
