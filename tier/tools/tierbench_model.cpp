// iosig-tierbench's model of a run and its text report (tierbench_model.hpp).
#include "tierbench_model.hpp"

#include "iosig/node_yaml.hpp"
#include "iosig/tier/queueing.hpp"
#include "iosig/tier/readahead_model.hpp"
#include "iosig/tier/simulator.hpp"
#include "iosig/tier/throttle_slices.hpp"
#include "iosig/tier/tier_prediction.hpp"
#include "iosig/units.hpp"

#include <algorithm>
#include <cstdio>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

namespace iosig::tier::bench {

namespace {

// The readahead the bypass's reads get: the home device's in the node YAML (its max_io, or the
// default); else that of the device the home directory is on, from sysfs; else the kernel's
// default. One source for both figures, named in `from`.
ReadaheadConfig bypass_readahead(const iosig::Node* node, const std::filesystem::path& home_dir,
                                 std::string& from) {
    ReadaheadConfig config;
    const iosig::Mount* mount = node ? mount_holding(*node, home_dir) : nullptr;
    const iosig::Device* device = mount ? node->find_device(mount->device) : nullptr;
    if (device && device->performance.read_ahead) {
        config.window_bytes = *device->performance.read_ahead;
        config.max_io_bytes = device->performance.max_io.value_or(config.max_io_bytes);
        from = fmt::format("devices.{}.performance.read_ahead of the node YAML", device->name);
    } else if (const std::optional<DeviceReadahead> local = readahead_of(home_dir)) {
        config = local->config;
        from = local->source;
    } else {
        from = fmt::format("the kernel's default ({} is on no block device)", home_dir.string());
    }
    return config;
}

// The figures of the cache's and the home's devices that the rates come from (service_rate_fields,
// reads and writes) and that the node YAML tags !default or its loader inferred: guesses, not
// measurements, which the model's times follow (a hit on the lab's ssd is charged lab.yaml's
// hand-set 100 us, about twice what it takes).
std::vector<std::string> default_figures(const iosig::Node& node,
                                         const std::vector<std::filesystem::path>& dirs,
                                         bool random) {
    std::vector<std::string> keys;
    for (const std::filesystem::path& dir : dirs) {
        const iosig::Mount* mount = mount_holding(node, dir);
        const iosig::Device* device = mount ? node.find_device(mount->device) : nullptr;
        if (device == nullptr) continue;
        for (const bool read : {true, false})
            for (const std::string_view field : service_rate_fields(*device, read, random)) {
                std::string key = fmt::format("devices.{}.performance.{}", device->name, field);
                const auto tag = node.provenance.find(key);
                if (tag != node.provenance.end() && tag->second == iosig::Provenance::defaulted &&
                    std::find(keys.begin(), keys.end(), key) == keys.end())
                    keys.push_back(std::move(key));
            }
    }
    return keys;
}

} // namespace

std::optional<nlohmann::json> model_json(const Workload& workload, const TierConfig& config,
                                         const std::filesystem::path& home,
                                         const std::string& node_file) {
    std::optional<iosig::NodeLoadResult> loaded;
    if (!node_file.empty()) {
        loaded = iosig::load_node_files({node_file});
        if (!loaded->ok()) {
            for (const auto& d : loaded->diagnostics)
                fmt::print(stderr, "iosig-tierbench: {}\n", d.format());
            return std::nullopt;
        }
    }
    const Trace trace = workload.as_trace();
    SimConfig sim;
    sim.policy = config.policy;
    sim.cache_size = config.cache_size;
    sim.line_size = config.line_size;
    sim.prefetch = config.prefetch;
    if (!config.prefetch.empty()) {
        // The engine's prefetch buffer, beside the cache in both.
        sim.prefetch_buffer = prefetch_buffer_lines(config) * config.line_size;
        sim.prefetch_limit = workload.file_size;
    }
    sim.fills_per_request = true;
    sim.io_run_bytes = config.io_run_bytes;
    // The bypass reads through the home file's page cache, ahead as far as the home device's queue.
    std::string readahead_from;
    if (config.sequential_cutoff > 0) {
        sim.sequential_cutoff = config.sequential_cutoff;
        sim.home_file_size = workload.file_size;
        sim.readahead =
            bypass_readahead(loaded ? &*loaded->node : nullptr, home.parent_path(), readahead_from);
    }
    const SimResult predicted = simulate(trace, sim);
    // Tier 2 reads: demand fills (reads, and writes to part of a line) and every line the
    // prefetcher fetched, used or not.
    const std::uint64_t fills = predicted.read_misses + predicted.partial_write_misses;
    nlohmann::json model{
        {"misses", predicted.misses},
        {"fills", fills},
        {"fill_reads", std::accumulate(predicted.request_fill_reads.begin(),
                                       predicted.request_fill_reads.end(), std::uint64_t{0})},
        {"prefetches", predicted.prefetches_issued},
        {"prefetch_reads", predicted.prefetch_reads}};
    if (config.sequential_cutoff > 0) {
        model["bypassed_bytes"] = predicted.bypassed_bytes;
        model["bypass_reads"] = predicted.bypass_reads.ios;
        model["bypass_read_bytes"] = predicted.bypass_reads.bytes;
        model["readahead"] = {{"window", sim.readahead.window_bytes},
                              {"max_io", sim.readahead.max_io_bytes},
                              {"from", readahead_from}};
    }
    if (!loaded) return model;
    const bool random = !workload.sequential;
    const TierRates rates = tier_rates(*loaded->node, config.cache_file.parent_path(),
                                       home.parent_path(), config.line_size, random);
    WritebackModelConfig writeback;
    writeback.line_size = config.line_size;
    writeback.max_dirty_lines =
        config.max_dirty_lines
            ? config.max_dirty_lines
            : std::max<std::uint64_t>(1, config.cache_size / config.line_size / 4);
    writeback.writeback_delay = config.writeback_delay;
    writeback.queue_depth = config.queue_depth;
    writeback.io_run_bytes = config.io_run_bytes;
    if (config.sequential_cutoff > 0) {
        writeback.bypassed_write_lines = &predicted.bypassed_write_lines;
        writeback.home_max_io_bytes = sim.readahead.max_io_bytes;
        writeback.home_page_bytes = sim.readahead.page_bytes;
    }
    const TierPrediction p = predict_tier_time(
        trace, fills + predicted.prefetches_issued, rates, writeback, &predicted.request_fills,
        &predicted.request_fill_reads, predicted.prefetch_reads,
        config.sequential_cutoff > 0
            ? BypassReads{&predicted.request_bypass_ios, &predicted.request_bypass_bytes}
            : BypassReads{});
    const iosig::Mount* slow = mount_holding(*loaded->node, home.parent_path());
    const iosig::Device* slow_device = loaded->node->find_device(slow->device);
    // Each request in whole 4 KiB blocks, as run_direct issues it, one after another, from an idle
    // device: in throttle slices when it has them (each direction's own, or one for both).
    double direct_reads = 0, direct_writes = 0;
    for (const Op& op : workload.ops)
        (op.write ? direct_writes : direct_reads) +=
            1 / service_rate(*slow_device, op.block_bytes(), !op.write, random);
    const auto sliced = [&rates](double work) {
        return ThrottleSlices::from_idle(work, rates.tier2_throttle_slice);
    };
    const double direct = rates.tier2_independent_read_write
                              ? sliced(direct_reads) + sliced(direct_writes)
                              : sliced(direct_reads + direct_writes);
    model["writebacks"] = p.writeback.writebacks;
    model["writeback_writes"] = p.writeback.writes;
    model["home_syncs"] = p.writeback.syncs;
    model["writer_wait_seconds"] = p.writeback.writer_wait;
    model["flusher_seconds"] = p.writeback.seconds;
    model["writeback_share"] = p.writeback_share;
    model["default_figures"] = default_figures(
        *loaded->node, {config.cache_file.parent_path(), home.parent_path()}, random);
    model["rates"] = {{"tier1_read", rates.tier1_read},
                      {"tier1_write", rates.tier1_write},
                      {"tier2_read", rates.tier2_read},
                      {"tier2_write", rates.tier2_write},
                      {"tier2_independent_read_write", rates.tier2_independent_read_write},
                      {"tier2_throttle_slice", rates.tier2_throttle_slice}};
    // The later of Eqs. 1-4 and the flusher's replay (tier_prediction.hpp).
    model["queueing_seconds"] = p.queueing.seconds;
    model["tier_seconds"] = p.seconds;
    model["hit_seconds"] = p.queueing.hit[0];
    model["miss_seconds"] = p.queueing.miss[0];
    model["direct_seconds"] = direct;
    if (config.sequential_cutoff > 0) {
        model["bypass_seconds"] = p.bypass_seconds;
        // Written into the home file's page cache; the flusher's syncs of the home file write them
        // home, and what none syncs the kernel writes after the run.
        model["bypass_write_bytes"] = predicted.bypassed_write_bytes;
        model["bypass_synced_bytes"] = p.writeback.bypass_synced_bytes;
        model["bypass_writes"] = p.writeback.bypass_writes;
        model["bypass_deferred_bytes"] = p.writeback.bypass_deferred_bytes;
    }
    return model;
}

void print_report(const nlohmann::json& out) {
    static const nlohmann::json none = nlohmann::json::object();
    const auto part = [&](const char* name) -> const nlohmann::json& {
        return out.contains(name) && out[name].is_object() ? out[name] : none;
    };
    const nlohmann::json& measured = part("measured");
    const nlohmann::json& model = part("model");
    if (measured.contains("direct_seconds"))
        fmt::print("  direct on the home mount: {:.3f} s\n",
                   measured["direct_seconds"].get<double>());
    if (measured.contains("tier_seconds"))
        fmt::print("  through the tier:         {:.3f} s\n",
                   measured["tier_seconds"].get<double>());
    if (measured.contains("speedup")) {
        // Two decimals below 1x, so that a slowdown does not print as 0.0x.
        const double speedup = measured["speedup"].get<double>();
        fmt::print("  speedup:                  {:.{}f}x\n", speedup, speedup < 1 ? 2 : 1);
    }
    if (model.contains("tier_seconds"))
        fmt::print("  model:                    {:.3f} s (Eqs. 1-4 {:.3f} s: hits {:.3f} s, "
                   "misses {:.3f} s; flusher {:.3f} s), direct {:.3f} s\n",
                   model["tier_seconds"].get<double>(), model["queueing_seconds"].get<double>(),
                   model["hit_seconds"].get<double>(), model["miss_seconds"].get<double>(),
                   model["flusher_seconds"].get<double>(), model["direct_seconds"].get<double>());
    if (out.contains("model_error"))
        fmt::print("  model error:              {:+.1f} %\n",
                   100 * out["model_error"].get<double>());
    if (model.contains("default_figures") && !model["default_figures"].empty()) {
        // "devices.D.performance.F" keys, shown as "D: F, F; D: F".
        std::vector<std::pair<std::string, std::vector<std::string>>> by_device;
        for (const auto& key : model["default_figures"]) {
            constexpr std::string_view prefix = "devices.", middle = ".performance.";
            const std::string k = key.get<std::string>();
            const std::size_t at = k.find(middle);
            const std::string device = k.substr(prefix.size(), at - prefix.size());
            const std::string field = k.substr(at + middle.size());
            if (by_device.empty() || by_device.back().first != device)
                by_device.push_back({device, {}});
            by_device.back().second.push_back(field);
        }
        std::vector<std::string> parts;
        for (const auto& [device, fields] : by_device)
            parts.push_back(fmt::format("{}: {}", device, fmt::join(fields, ", ")));
        fmt::print("  model figures:            defaults, not measurements, in the node YAML: {} "
                   "(iosig-calibrate measures them)\n",
                   fmt::join(parts, "; "));
    }
    if (model.contains("bypass_seconds") && model["bypassed_bytes"].get<std::uint64_t>() > 0)
        fmt::print("  bypass (model):           {} past the cache; {} home reads of {} through the "
                   "page cache (readahead {} from {}): {:.3f} s\n",
                   iosig::format_size(model["bypassed_bytes"].get<std::uint64_t>()),
                   model["bypass_reads"].get<std::uint64_t>(),
                   iosig::format_size(model["bypass_read_bytes"].get<std::uint64_t>()),
                   iosig::format_size(model["readahead"]["window"].get<std::uint64_t>()),
                   model["readahead"]["from"].get<std::string>(),
                   model["bypass_seconds"].get<double>());
    if (model.contains("bypass_write_bytes") &&
        model["bypass_write_bytes"].get<std::uint64_t>() > 0)
        fmt::print("  bypassed writes (model):  {} into the home file's page cache; the flusher's "
                   "syncs write {} of it in {} IOs, {} stays for the kernel to write after close\n",
                   iosig::format_size(model["bypass_write_bytes"].get<std::uint64_t>()),
                   iosig::format_size(model["bypass_synced_bytes"].get<std::uint64_t>()),
                   model["bypass_writes"].get<std::uint64_t>(),
                   iosig::format_size(model["bypass_deferred_bytes"].get<std::uint64_t>()));
}

} // namespace iosig::tier::bench
