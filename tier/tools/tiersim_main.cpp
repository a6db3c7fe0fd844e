// iosig-tiersim: replay a block or object trace through a simulated cache and report misses, miss
// ratio, byte miss ratio, prefetch accuracy and simulation speed (docs/tier.md, "Simulating a
// trace").
#include "hindsight_report.hpp"
#include "iosig/tier/hindsight.hpp"
#include "iosig/tier/simulator.hpp"
#include "iosig/tier/synthetic.hpp"
#include "iosig/units.hpp"
#include "parallel_runs.hpp"
#include "prefetch_options.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

namespace {

using namespace iosig::tier;

constexpr int exit_ok = 0, exit_failure = 1, exit_bad_input = 2;

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> items;
    std::stringstream in(text);
    for (std::string item; std::getline(in, item, ',');)
        if (!item.empty()) items.push_back(item);
    return items;
}

std::uint64_t size_or_throw(const std::string& text, const char* what) {
    const auto parsed = iosig::parse_size(text);
    if (!parsed)
        throw std::invalid_argument(fmt::format("{} '{}': {}", what, text, parsed.error.message));
    return *parsed.value;
}

// A --cache-size item: bytes, or a share of the trace's working set ("10%", or "0.1" as
// libCacheSim's tools take it), resolved once the trace is loaded.
struct CacheSizeSpec {
    std::uint64_t bytes = 0;
    double share = 0;
};

CacheSizeSpec cache_size_spec(const std::string& text) {
    const bool percent = text.ends_with('%');
    const std::string number = percent ? text.substr(0, text.size() - 1) : text;
    if (percent || (number.find('.') != std::string::npos &&
                    number.find_first_not_of("0123456789.") == std::string::npos)) {
        double value = 0;
        const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
        const double share = percent ? value / 100 : value;
        if (ec != std::errc() || end != number.data() + number.size() || !(share > 0) ||
            (!percent && share >= 1))
            throw std::invalid_argument(fmt::format(
                "--cache-size '{}': expected a size such as 256M, a percentage of the working set "
                "such as 10%, or a fraction below 1 such as 0.1",
                text));
        return CacheSizeSpec{0, share};
    }
    return CacheSizeSpec{size_or_throw(text, "--cache-size"), 0};
}

nlohmann::json to_json(const SimResult& r) {
    nlohmann::json j{{"policy", r.policy},
                     {"cache_size", r.cache_size},
                     {"capacity", r.capacity},
                     {"mode", to_string(r.mode)},
                     {"requests", r.requests},
                     {"references", r.references},
                     {"hits", r.hits},
                     {"misses", r.misses},
                     {"read_misses", r.read_misses},
                     {"write_misses", r.write_misses},
                     {"miss_ratio", r.miss_ratio()},
                     {"bytes_requested", r.bytes_requested},
                     {"bytes_missed", r.bytes_missed},
                     {"byte_miss_ratio", r.byte_miss_ratio()},
                     {"seconds", r.seconds},
                     {"references_per_second", r.references_per_second()},
                     {"requests_per_second", r.requests_per_second()}};
    if (!r.prefetch.empty()) {
        j["prefetch"] = {{"kind", r.prefetch},
                         {"buffer", r.prefetch_buffer},
                         {"issued", r.prefetches_issued},
                         {"reads", r.prefetch_reads},
                         {"hits", r.prefetch_hits},
                         {"wasted", r.prefetches_wasted},
                         {"accuracy", r.prefetch_accuracy()}};
    }
    if (r.bypassed_references > 0 || r.bypass_reads.ios > 0) {
        j["bypass"] = {{"references", r.bypassed_references},
                       {"bytes", r.bypassed_bytes},
                       {"write_bytes", r.bypassed_write_bytes},
                       {"home_reads", r.bypass_reads.ios},
                       {"home_read_bytes", r.bypass_reads.bytes}};
    }
    if (r.learner) {
        nlohmann::json probability, mispredictions;
        for (int e = 0; e < expert_count; ++e) {
            const std::string name(to_string(static_cast<Expert>(e)));
            probability[name] = r.learner->probability[e];
            mispredictions[name] = r.learner->mispredictions[e];
        }
        j["learner"] = {{"current", to_string(r.learner->current)},
                        {"probability", probability},
                        {"mispredictions", mispredictions},
                        {"epochs", r.learner->epochs},
                        {"switches", r.learner->switches}};
    }
    return j;
}

void print_table(const std::string& source, const std::vector<SimResult>& results) {
    fmt::print("trace: {}\n", source);
    fmt::print("{:<8} {:>10} {:>11} {:>10} {:>8} {:>10} {:>9} {:>10}\n", "policy", "cache",
               "references", "misses", "miss %", "byte miss%", "prefetch", "Mref/s");
    for (const SimResult& r : results) {
        const std::string prefetch =
            r.prefetch.empty() ? "-" : fmt::format("{:.1f}%", 100 * r.prefetch_accuracy());
        fmt::print("{:<8} {:>10} {:>11} {:>10} {:>8.3f} {:>10.3f} {:>9} {:>10.1f}\n", r.policy,
                   iosig::format_size(r.cache_size), r.references, r.misses, 100 * r.miss_ratio(),
                   100 * r.byte_miss_ratio(), prefetch, r.references_per_second() / 1e6);
        if (r.bypassed_references > 0)
            fmt::print("  {} references ({}) bypassed the cache, neither hits nor misses; their "
                       "reads took {} home reads of {} through the page cache\n",
                       r.bypassed_references, iosig::format_size(r.bypassed_bytes),
                       r.bypass_reads.ios, iosig::format_size(r.bypass_reads.bytes));
    }
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{
        "Replay a block or object trace through a simulated two-tier cache (docs/tier.md)."};
    std::string trace_file, format_text, csv_columns_text, synthetic,
        policies = "lru", cache_sizes, line_size_text = "4K", mode_text, prefetch,
        prefetch_buffer_text, write_trace, id_unit_text, sequential_cutoff_text = "0",
        readahead_text;
    std::uint64_t seed = 42, request_count = 0; // --requests
    std::uint64_t hindsight_window = 1000;
    unsigned prefetch_window = PrefetchConfig{}.max_depth;
    bool json = false, hindsight = false;
    unsigned jobs = tools::default_jobs();
    auto* trace_opt =
        app.add_option("--trace", trace_file,
                       "trace file (csv block or object trace, oracleGeneral binary, or txt)");
    app.add_option("--synthetic", synthetic,
                   "generate a trace instead: poisson, irm, switching, strided, markov, random")
        ->excludes(trace_opt);
    app.add_option("--requests", request_count,
                   "length of the synthetic trace (0 = its default); with --trace, replay only "
                   "its first N requests (0 = all)");
    app.add_option("--write-trace", write_trace,
                   "also write the (synthetic) block trace as csv to this file");
    app.add_option(
        "--format", format_text,
        "csv, oracleGeneral or txt (one object id per line; default: from the file name)");
    app.add_option("--csv-columns", csv_columns_text,
                   "csv columns, numbered from 1, for a trace without a header (or to override "
                   "it), e.g. op=4,offset=5,size=6 or obj_id=2,size=3; add ',header' to skip a "
                   "first line");
    app.add_option("--id-unit", id_unit_text,
                   "the object ids of this trace are block addresses in units of this many bytes "
                   "(512: sectors, as in the shared cloudPhysics oracleGeneral file; 1: bytes); "
                   "replays it as a block trace, in block mode unless --mode says otherwise")
        ->needs(trace_opt);
    app.add_option("--policy", policies,
                   "lru, lfu, random, arc, ws, lecar, belady; comma-separated for several");
    app.add_option("--cache-size", cache_sizes,
                   "cache size, e.g. 256M, or a share of the trace's working set, e.g. 10% or "
                   "0.1; comma-separated for several")
        ->required();
    app.add_option("--line-size", line_size_text,
                   "cache line size in block mode, a power of two from 512 to 1G (the engine takes "
                   "4K .. 1M; default 4K)");
    app.add_option("--mode", mode_text,
                   "object or block (default: object for oracleGeneral, block for csv)");
    tools::add_prefetch_options(app, prefetch, prefetch_window);
    app.add_option("--prefetch-buffer", prefetch_buffer_text,
                   "prefetch buffer size, memory beside the cache (default: cache size / 32)");
    app.add_option("--sequential-cutoff", sequential_cutoff_text,
                   "block mode: a sequential stream longer than this bypasses the cache, as the "
                   "engine's sequential_cutoff (default 0: never); --json reports the bypass");
    app.add_option("--readahead", readahead_text,
                   "the home device's readahead window for the bypass's reads, e.g. 2560K "
                   "(default 128K)")
        ->needs(app.get_option("--sequential-cutoff"));
    app.add_option("--seed", seed, "seed of Random, LeCaR and synthetic traces (default 42)");
    app.add_flag("--json", json, "print JSON instead of a table");
    app.add_option("--jobs", jobs,
                   "simulations run at once, one per policy and cache size (default: the CPUs, "
                   "here " +
                       std::to_string(jobs) +
                       "); each one's Mref/s is measured with the "
                       "others running beside it, so --jobs 1 gives the speed of one alone")
        ->check(CLI::Range(1u, 1024u));
    app.add_flag("--hindsight", hindsight,
                 "instead of the policies: the best LRU/LFU switching schedule in hindsight, with "
                 "switches free and with each switch charged its refill (docs/tier.md)");
    app.add_option("--window", hindsight_window,
                   "references per window of --hindsight (switches happen between windows; "
                   "default 1000)");
    PolicyConfig learner;
    auto* tuning = app.add_option_group("learner", "the ws learner's parameters (docs/tier.md)");
    tuning->add_option("--epoch-iterations", learner.epoch_iterations, "EPOCH_WIDTH (default 4)");
    tuning->add_option("--threshold", learner.threshold, "THRESHOLD (default 0.25)");
    tuning->add_option("--iteration-misses", learner.iteration_misses,
                       "misses of the real cache per polling iteration (default 64)");
    tuning->add_option("--learning-rate", learner.learning_rate,
                       "eta in w *= exp(-eta * loss) (default 2)");
    tuning->add_option("--share", learner.share,
                       "fixed-share fraction redistributed per epoch (default 0.01)");
    tuning->add_option("--decisive-epochs", learner.decisive_epochs,
                       "epochs after the first verdict in which a decisive switch skips ski rental "
                       "(default 128)");
    // The learner's multiples and factors: non-negative, bounded so that a typo cannot overflow.
    const auto multiple = [tuning](const std::string& name, double& value, const std::string& help,
                                   double lowest) {
        tuning->add_option(name, value, help)->check(CLI::Range(lowest, 1000.0));
    };
    multiple("--refill-margin", learner.refill_margin,
             "a switch the weights propose (not decisive) waits until this many refills are saved "
             "(default 1.25)",
             0.0);
    multiple("--shadow-switch-refills", learner.shadow_switch_refills,
             "a switch the shadows alone propose needs this many estimated live refills saved "
             "(default 12; 0 = never)",
             0.0);
    multiple("--shadow-switch-turnovers", learner.shadow_switch_turnovers,
             "... and this many cache turnovers since the first verdict (default 2)", 0.0);
    multiple("--losing-switch-factor", learner.losing_switch_factor,
             "after a switch that lost, later switches need this many times the evidence "
             "(default 2; 1 = off)",
             1.0);
    // A bad option is bad input (2), as a bad trace is; --help still exits 0.
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        return app.exit(error) == 0 ? exit_ok : exit_bad_input;
    }

    try {
        if (trace_file.empty() && synthetic.empty())
            throw std::invalid_argument("give --trace FILE or --synthetic KIND");
        SimConfig base;
        base.line_size = size_or_throw(line_size_text, "--line-size");
        if (!mode_text.empty()) {
            if (mode_text == "object")
                base.mode = SimMode::object;
            else if (mode_text == "block")
                base.mode = SimMode::block;
            else
                throw std::invalid_argument(
                    fmt::format("--mode '{}': expected object or block", mode_text));
        }
        base.prefetch = prefetch;
        base.prefetch_config.max_depth = prefetch_window;
        if (!prefetch.empty()) make_prefetcher(prefetch);
        if (!prefetch_buffer_text.empty())
            base.prefetch_buffer = size_or_throw(prefetch_buffer_text, "--prefetch-buffer");
        base.sequential_cutoff = size_or_throw(sequential_cutoff_text, "--sequential-cutoff");
        if (!readahead_text.empty())
            base.readahead.window_bytes = size_or_throw(readahead_text, "--readahead");
        base.policy_config = learner;
        base.policy_config.seed = seed;
        const auto policy_list = split_list(policies);
        for (const std::string& p : policy_list)
            make_policy(p, base.policy_config); // reject typos up front
        std::vector<CacheSizeSpec> size_specs;
        for (const std::string& s : split_list(cache_sizes))
            size_specs.push_back(cache_size_spec(s));
        if (size_specs.empty() || policy_list.empty())
            throw std::invalid_argument("need at least one policy and cache size");

        Trace trace;
        try {
            if (!synthetic.empty()) {
                trace = generate_named(
                    synthetic, request_count, seed,
                    static_cast<std::uint32_t>(std::min<std::uint64_t>(base.line_size, 1u << 30)));
            } else {
                trace = load_trace(trace_file, format_text, csv_columns_text, request_count);
                if (!id_unit_text.empty())
                    trace = object_ids_as_offsets(trace, size_or_throw(id_unit_text, "--id-unit"));
            }
            if (trace.skipped_zero_size > 0)
                fmt::print(
                    stderr,
                    "iosig-tiersim: {}: skipped {} requests of size 0 (as libCacheSim does)\n",
                    trace.source, trace.skipped_zero_size);
            if (!write_trace.empty()) write_csv_trace(trace, write_trace);
        } catch (const TraceError& e) {
            fmt::print(stderr, "iosig-tiersim: {}\n", e.what());
            return exit_bad_input;
        }

        std::vector<std::uint64_t> sizes;
        std::optional<std::uint64_t> working_set;
        for (const CacheSizeSpec& spec : size_specs) {
            if (spec.share == 0) {
                sizes.push_back(spec.bytes);
                continue;
            }
            if (!working_set) working_set = working_set_bytes(trace, base);
            sizes.push_back(std::max<std::uint64_t>(
                1, static_cast<std::uint64_t>(std::llround(spec.share * double(*working_set)))));
        }
        if (working_set && !json)
            fmt::print("working set: {} ({} bytes)\n", iosig::format_size(*working_set),
                       *working_set);

        if (hindsight) {
            std::vector<SwitchingHindsight> rows(sizes.size());
            tools::run_parallel(sizes.size(), jobs, [&](std::size_t i) {
                SimConfig config = base;
                config.cache_size = sizes[i];
                rows[i] = switching_hindsight(trace, config, hindsight_window);
            });
            print_hindsight(trace.source, rows, json);
            return exit_ok;
        }
        // One simulation per policy and size, in the order the table lists them.
        std::vector<SimConfig> configs;
        for (const std::string& p : policy_list) {
            for (const std::uint64_t size : sizes) {
                SimConfig config = base;
                config.policy = p;
                config.cache_size = size;
                configs.push_back(config);
            }
        }
        std::vector<SimResult> results(configs.size());
        tools::run_parallel(configs.size(), jobs,
                            [&](std::size_t i) { results[i] = simulate(trace, configs[i]); });
        const std::size_t at_once = std::min<std::size_t>(jobs, results.size());
        if (json) {
            nlohmann::json out{{"trace", trace.source},
                               {"skipped_zero_size", trace.skipped_zero_size},
                               {"results", nlohmann::json::array()}};
            if (working_set) out["working_set_bytes"] = *working_set;
            out["jobs"] = at_once; // simulations at once
            for (const SimResult& r : results)
                out["results"].push_back(to_json(r));
            fmt::print("{}\n", out.dump(2));
        } else {
            print_table(trace.source, results);
            if (at_once > 1)
                fmt::print("Mref/s measured with {} simulations at once (--jobs 1: one alone)\n",
                           at_once);
        }
        return exit_ok;
    } catch (const std::invalid_argument& e) {
        fmt::print(stderr, "iosig-tiersim: {}\n", e.what());
        return exit_bad_input;
    } catch (const std::exception& e) {
        fmt::print(stderr, "iosig-tiersim: {}\n", e.what());
        return exit_failure;
    }
}
