// The whole calibration, in an order where each measurement has what it depends on.
#include "calibrate.hpp"

#include "calibrate_runs.hpp"
#include "iosig/cachesim/sync_cost.hpp"
#include "iosig/units.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <optional>
#include <random>
#include <stdio_ext.h>
#include <unistd.h>

namespace iosig::cachesim::validate {

using namespace detail;

namespace {

// Prints the measured curve and, for the direct writes, how far Eq. 2's line is from it.
void record_curve(const CalibrationSetup& setup, const char* name, const CostCurve& curve,
                  const std::optional<LinearFit>& line) {
    std::string text = fmt::format("  {} per-size medians:", name);
    for (const auto& [size, cost] : curve.points()) {
        text +=
            fmt::format(" {} {:.3g} ms", format_size(static_cast<std::uint64_t>(size)), cost * 1e3);
        if (line)
            text += fmt::format(" (line {:+.0f} %)",
                                (line->intercept + line->slope * size) / cost * 100 - 100);
        text += ";";
    }
    say(setup, text);
}

} // namespace

Calibration calibrate(const CalibrationSetup& setup) {
    Calibration c;
    MeasuredParameters& m = c.measured;
    auto record = [&](const std::string& name, const LinearFit& f) {
        c.fits[name] = f;
        say(setup,
            fmt::format(
                "  {:<22} intercept {:.3g} s, slope {:.4g} s/B ({:.4g} B/s), r2 {:.3f}, {} samples",
                name, f.intercept, f.slope, f.slope > 0 ? 1 / f.slope : 0.0, f.r2, f.samples));
    };

    say(setup, "measuring O_DIRECT|O_SYNC writes (Eq. 2: L_sync, B_dev)");
    double quantum = 0;
    CostCurve direct_curve;
    const LinearFit direct = measure_direct(setup, &quantum, &direct_curve);
    record("direct", direct);
    record_curve(setup, "direct", direct_curve, direct);
    if (!direct_curve.empty()) m.direct_write_curve = direct_curve;
    m.op_latency = std::max(0.0, direct.intercept);
    if (direct.slope > 0) m.device_write_bw = 1 / direct.slope;
    if (quantum > 0 && !setup.use_completion_ticks) {
        c.notes.push_back(
            fmt::format("synchronous writes completed on {:.2f} ms ticks during the calibration; "
                        "not used (--ticks uses them)",
                        quantum * 1e3));
        say(setup, c.notes.back());
        quantum = 0;
    }
    if (quantum > 0) {
        m.sync_completion_quantum = quantum;
        say(setup,
            fmt::format("  synchronous writes complete on {:.2f} ms ticks (fitted as a staircase)",
                        quantum * 1e3));
    }

    say(setup, "measuring O_DIRECT reads (B_read of Eq. 3)");
    const LinearFit read = measure_direct_read(setup);
    record("direct read", read);
    if (read.slope > 0) m.device_read_bw = 1 / read.slope;

    say(setup, "measuring seeks (random vs sequential 4 KiB O_DIRECT overwrites)");
    const double seek = measure_seek(setup);
    m.seek_latency = std::max(0.0, seek);
    say(setup, fmt::format("  seek coefficient {:.3g} s{}", seek,
                           seek < 0 ? " (negative: stored as 0)" : ""));

    ModelParameters with_device;
    with_device.device_write_bw = m.device_write_bw.value_or(1e9);
    with_device.sync_completion_quantum = quantum;
    say(setup, "measuring O_SYNC writes through the page cache (Eq. 3: copy cost)");
    CostCurve sync_curve;
    const LinearFit sync = measure_sync(setup, with_device, &sync_curve);
    record("sync (device part removed)", sync);
    record_curve(setup, "sync", sync_curve, std::nullopt);
    if (!sync_curve.empty()) m.sync_write_curve = sync_curve;
    // Stored as iosig-calibrate defines them: the fixed cost, and the whole per-byte slope (copy +
    // device).
    m.sync_write_syscall_base = std::max(0.0, sync.intercept);
    m.sync_write_syscall_per_byte = std::max(0.0, sync.slope) + 1 / with_device.device_write_bw;
    if (sync.slope < 0) c.notes.push_back("the O_SYNC copy slope came out negative: taken as 0");

    say(setup, "measuring buffered writes below the background threshold (L_w, r_ramdisk)");
    const LinearFit buffered = measure_buffered_no_flush(setup);
    record("buffered no-flush", buffered);
    m.write_syscall_base = std::max(0.0, buffered.intercept);
    if (buffered.slope > 0) {
        m.page_cache_write_bw = 1 / buffered.slope;
        m.write_syscall_per_byte = buffered.slope;
    }

    say(setup, "measuring rewrites of dirty pages after 0-30 ms (page_cache_rewrite_bw, _cold, "
               "rewrite_cooling_time)");
    const CoolingFit rewrite = measure_rewrite_cooling(setup, m.write_syscall_base.value_or(0));
    if (rewrite.hot > 0) m.page_cache_rewrite_bw = 1 / rewrite.hot;
    if (rewrite.cooling_time > 0) {
        m.page_cache_rewrite_bw_cold = 1 / rewrite.cold;
        m.rewrite_cooling_time = rewrite.cooling_time;
        say(setup, fmt::format("  rewrites: {:.4g} B/s just written, {:.4g} B/s cold, cooling "
                               "time {:.2f} ms",
                               1 / rewrite.hot, 1 / rewrite.cold, rewrite.cooling_time * 1e3));
    } else {
        c.notes.push_back("rewrites did not slow down with age: one rewrite rate");
    }

    say(setup, "measuring 4 KiB write() calls after 0-30 ms (write_syscall_cold_base, "
               "call_cooling_time)");
    const CoolingFit call = measure_call_cooling(setup);
    if (call.cooling_time > 0 && m.write_syscall_base) {
        m.write_syscall_cold_base = *m.write_syscall_base + (call.cold - call.hot);
        m.call_cooling_time = call.cooling_time;
        say(setup, fmt::format("  a write() long after the previous one costs {:.2f} us more; "
                               "cooling time {:.2f} ms",
                               (call.cold - call.hot) * 1e6, call.cooling_time * 1e3));
    } else {
        c.notes.push_back("write() calls did not slow down with age: one fixed cost");
    }

    say(setup,
        "measuring buffered writes while the flusher runs (r_ramdisk under background flush)");
    double writeback = 0, latency = -1, sleep = 0;
    const LinearFit flushing = measure_buffered_flushing(setup, m.write_syscall_base.value_or(0),
                                                         &writeback, &latency, &sleep);
    record("buffered flushing", flushing);
    if (flushing.slope > 0) m.page_cache_write_bw_flushing = 1 / flushing.slope;
    if (latency >= 0) {
        m.writeback_start_latency = latency;
        say(setup,
            fmt::format(
                "  flusher starts {:.2f} ms after the background threshold is crossed (eBPF)",
                latency * 1e3));
    }
    if (sleep > 0) {
        m.throttle_sleep = sleep;
        say(setup,
            fmt::format("  a throttled writer sleeps {:.2f} ms at a time (eBPF)", sleep * 1e3));
    } else {
        c.notes.push_back("throttle sleep not measured (fewer than 3 paused writes seen through "
                          "eBPF): the model's pauses stay continuous");
    }
    if (writeback > 0) {
        m.writeback_bw = writeback;
        say(setup,
            fmt::format(
                "  flusher write-back rate (eBPF, while above the background threshold) {:.4g} B/s",
                writeback));
    } else {
        c.notes.push_back(
            "write-back rate not measured (no eBPF samples above the background threshold)");
    }

    say(setup, "measuring fwrite into the stdio buffer (memory_bw, per-call cost)");
    m.stdio_buffer_size = measure_stdio_buffer(setup.dir);
    const LinearFit stdio = measure_stdio_copy(setup);
    record("stdio copy", stdio);
    c.stdio_call_base = std::max(0.0, stdio.intercept);
    if (stdio.slope > 0) m.memory_bw = 1 / stdio.slope;
    return c;
}

} // namespace iosig::cachesim::validate
