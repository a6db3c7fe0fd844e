// Eq. 3 of the IOSIG paper: the throughput a mount delivers to a stream of IOs of size ds.
// Mapping to the paper and the defaults: docs/selection.md, "Throughput (Eq. 3)".
#include "iosig/throughput.hpp"

#include <algorithm>

namespace iosig {
namespace {

// A partition has no performance of its own unless the config gives one: every zero field is taken
// from the owner device (the partition shares the owner's heads, flash and queue).
Performance effective_performance(const Device& device, const Device* owner) {
    Performance p = device.performance;
    if (owner == nullptr) return p;
    const Performance& o = owner->performance;
    auto inherit = [](double& mine, double theirs) {
        if (mine == 0) mine = theirs;
    };
    inherit(p.seq_read_bw, o.seq_read_bw);
    inherit(p.seq_write_bw, o.seq_write_bw);
    inherit(p.rand_read_bw, o.rand_read_bw);
    inherit(p.rand_write_bw, o.rand_write_bw);
    inherit(p.op_latency, o.op_latency);
    inherit(p.seek_latency, o.seek_latency);
    inherit(p.max_iops, o.max_iops);
    inherit(p.throttle_slice, o.throttle_slice); // a disk's blk-throttle limit holds its partitions
    p.independent_read_write = p.independent_read_write || o.independent_read_write;
    return p;
}

bool is_rotational(const Device& device) {
    return device.rotational || device.media == MediaKind::hdd;
}

} // namespace

double eq3_throughput(const Eq3Parameters& parameters, std::uint64_t size_per_io) {
    if (size_per_io == 0 || !(parameters.write_bw > 0)) return 0;
    const std::uint64_t cs = parameters.chunk == 0 ? 4096 : parameters.chunk;
    const bool partial_chunk = size_per_io % cs != 0; // d: read-modify-write of the last chunk
    const double chunks = static_cast<double>((size_per_io + cs - 1) / cs);
    double seconds_per_io =
        parameters.latency + chunks * static_cast<double>(cs) / parameters.write_bw;
    if (partial_chunk) {
        if (!(parameters.read_bw > 0)) return 0;
        seconds_per_io += static_cast<double>(cs) / parameters.read_bw;
    }
    double ios_per_second = 1.0 / seconds_per_io;
    if (parameters.max_iops > 0) {
        const bool read_shares_the_budget = partial_chunk && !parameters.independent_read_write;
        ios_per_second =
            std::min(ios_per_second, parameters.max_iops / (read_shares_the_budget ? 2.0 : 1.0));
    }
    return ios_per_second * static_cast<double>(size_per_io);
}

Eq3Parameters eq3_parameters(const Node& node, const Mount& mount, AccessPattern pattern) {
    Eq3Parameters out;
    const std::uint64_t chunk = std::max<std::uint64_t>(node.page_size, mount.block_size);
    out.chunk = chunk == 0 ? 4096 : chunk;

    const Device* device = node.find_device(mount.device);
    if (device == nullptr) return out; // zero bandwidth: throughput 0, ranked last
    const Device* owner =
        device->structure == DeviceStructure::partition ? node.find_device(device->owner) : nullptr;
    const Performance p = effective_performance(*device, owner);
    const bool random = pattern == AccessPattern::random;
    const bool rotational = is_rotational(*device) || (owner != nullptr && is_rotational(*owner));

    // A throttle's budgets hold whatever the pattern: no random bandwidth, no op latency on top.
    const bool throttle = p.is_throttle();
    if (random && !throttle) {
        out.write_bw = p.rand_write_bw > 0 ? p.rand_write_bw : p.seq_write_bw;
        out.read_bw = p.rand_read_bw > 0 ? p.rand_read_bw : p.seq_read_bw;
    } else {
        out.write_bw = p.seq_write_bw;
        out.read_bw = p.seq_read_bw;
    }
    if (!(out.read_bw > 0)) out.read_bw = out.write_bw; // no read figure: reads as fast as writes
    out.latency = (throttle ? 0.0 : p.op_latency) + (random && rotational ? p.seek_latency : 0.0);
    out.max_iops = p.max_iops;
    out.independent_read_write = p.independent_read_write;
    return out;
}

} // namespace iosig
