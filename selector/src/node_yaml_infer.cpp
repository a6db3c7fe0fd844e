// Values a node file may leave out and how they are filled (docs/config.md, "Inferred values"):
// partitions share their owner's medium and figures, complex devices derive capacity and bandwidth
// from their members and scheme, random bandwidth defaults to sequential, a mount's capacity to its
// device's and its free space to its capacity. Each filled value is marked in node.provenance
// (derived or default), so to_yaml shows that it was not given.
#include "node_yaml_internal.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace iosig::node_yaml_detail {
namespace {

class Inference {
public:
    Inference(Node& node, const Locations& locations) : node_(node), locations_(locations) {}

    void run() {
        for (Device& d : node_.devices)
            resolve(d);
        for (Mount& m : node_.mounts)
            fill_mount(m);
    }

private:
    Device* find(std::string_view name) {
        const auto it = std::find_if(node_.devices.begin(), node_.devices.end(),
                                     [&](const Device& d) { return d.name == name; });
        return it == node_.devices.end() ? nullptr : &*it;
    }
    bool given(const std::string& key) const { return locations_.contains(key); }

    // Sets `field` (at YAML path `key`) to `value` unless it was given; records how it was
    // obtained.
    template <class T>
    void fill(const std::string& key, T& field, const T& value, Provenance how) {
        if (given(key)) return;
        field = value;
        node_.provenance[key] = how;
    }
    void fill_if_known(const std::string& key, double& field, double value, Provenance how) {
        if (value > 0) fill(key, field, value, how);
    }

    // Devices a device is made of are completed before it (validate_structure ruled out cycles).
    void resolve(Device& d) {
        if (!resolved_.insert(d.name).second) return;
        if (d.structure == DeviceStructure::partition) {
            if (Device* owner = find(d.owner)) {
                resolve(*owner);
                inherit_from_owner(d, *owner);
            }
        } else if (d.structure == DeviceStructure::complex) {
            std::vector<const Device*> members;
            for (const std::string& name : d.members)
                if (Device* member = find(name)) {
                    resolve(*member);
                    members.push_back(member);
                }
            if (!members.empty()) derive_from_members(d, members);
        }
        const std::string perf = device_key(d.name) + ".performance.";
        Performance& p = d.performance;
        if (p.rand_read_bw == 0)
            fill_if_known(perf + "rand_read_bw", p.rand_read_bw, p.seq_read_bw,
                          Provenance::defaulted);
        if (p.rand_write_bw == 0)
            fill_if_known(perf + "rand_write_bw", p.rand_write_bw, p.seq_write_bw,
                          Provenance::defaulted);
    }

    // A partition is a slice of its owner's medium: same speed, same failure figures.
    void inherit_from_owner(Device& d, const Device& owner) {
        const std::string key = device_key(d.name);
        fill(key + ".media", d.media, owner.media, Provenance::derived);
        fill(key + ".rotational", d.rotational, owner.rotational, Provenance::derived);
        if (owner.capacity > 0)
            fill(key + ".capacity", d.capacity, owner.capacity, Provenance::derived);
        const Performance& o = owner.performance;
        Performance& p = d.performance;
        const std::string perf = key + ".performance.";
        fill_if_known(perf + "seq_read_bw", p.seq_read_bw, o.seq_read_bw, Provenance::derived);
        fill_if_known(perf + "seq_write_bw", p.seq_write_bw, o.seq_write_bw, Provenance::derived);
        // A partition's own sequential figure is a better guess for its random one than the
        // owner's.
        if (!given(perf + "seq_read_bw"))
            fill_if_known(perf + "rand_read_bw", p.rand_read_bw, o.rand_read_bw,
                          Provenance::derived);
        if (!given(perf + "seq_write_bw"))
            fill_if_known(perf + "rand_write_bw", p.rand_write_bw, o.rand_write_bw,
                          Provenance::derived);
        fill_if_known(perf + "op_latency", p.op_latency, o.op_latency, Provenance::derived);
        fill_if_known(perf + "seek_latency", p.seek_latency, o.seek_latency, Provenance::derived);
        fill_if_known(perf + "max_iops", p.max_iops, o.max_iops, Provenance::derived);
        fill_if_known(perf + "throttle_slice", p.throttle_slice, o.throttle_slice,
                      Provenance::derived);
        // A partition reads through its disk's queue.
        if (o.read_ahead)
            fill(perf + "read_ahead", p.read_ahead, o.read_ahead, Provenance::derived);
        if (o.max_io) fill(perf + "max_io", p.max_io, o.max_io, Provenance::derived);
        if (o.independent_read_write)
            fill(perf + "independent_read_write", p.independent_read_write, true,
                 Provenance::derived);
        const std::string rel = key + ".reliability.";
        if (owner.reliability.mttf)
            fill(rel + "mttf", d.reliability.mttf, owner.reliability.mttf, Provenance::derived);
        if (owner.reliability.ber)
            fill(rel + "ber", d.reliability.ber, owner.reliability.ber, Provenance::derived);
        if (owner.reliability.mttr)
            fill(rel + "mttr", d.reliability.mttr, owner.reliability.mttr, Provenance::derived);
    }

    // How many members' worth of bandwidth one stream sees (data members of a stripe; one copy of a
    // mirror or replica set). 0: not derivable (opaque).
    static unsigned data_width(const Device& d, unsigned k) {
        switch (d.scheme) {
        case RedundancyScheme::raid0:
            return k;
        case RedundancyScheme::raid1:
            return 1;
        case RedundancyScheme::raid5:
            return k > 1 ? k - 1 : 0;
        case RedundancyScheme::raid6:
            return k > 2 ? k - 2 : 0;
        case RedundancyScheme::raid10:
            return k / 2;
        case RedundancyScheme::replication:
            return 1;
        case RedundancyScheme::erasure:
            return d.data_units;
        case RedundancyScheme::none:
        case RedundancyScheme::opaque:
            return 0;
        }
        return 0;
    }

    static std::uint64_t derived_capacity(const Device& d,
                                          const std::vector<const Device*>& members) {
        std::uint64_t smallest = std::numeric_limits<std::uint64_t>::max(), total = 0;
        for (const Device* m : members) {
            if (m->capacity == 0) return 0;
            smallest = std::min(smallest, m->capacity);
            total += m->capacity;
        }
        const auto k = static_cast<std::uint64_t>(members.size());
        switch (d.scheme) {
        case RedundancyScheme::raid0:
            return total;
        case RedundancyScheme::raid1:
            return smallest;
        case RedundancyScheme::raid5:
            return (k - 1) * smallest;
        case RedundancyScheme::raid6:
            return k > 2 ? (k - 2) * smallest : 0;
        case RedundancyScheme::raid10:
            return k / 2 * smallest;
        case RedundancyScheme::replication:
            return d.replicas ? total / d.replicas : 0;
        case RedundancyScheme::erasure: {
            const unsigned units = d.data_units + d.parity_units;
            return units ? static_cast<std::uint64_t>(static_cast<long double>(total) *
                                                      d.data_units / units)
                         : 0;
        }
        case RedundancyScheme::none:
        case RedundancyScheme::opaque:
            return 0;
        }
        return 0;
    }

    void derive_from_members(Device& d, const std::vector<const Device*>& members) {
        const std::string key = device_key(d.name);
        if (!given(key + ".rotational")) {
            const bool any = std::any_of(members.begin(), members.end(),
                                         [](const Device* m) { return m->rotational; });
            fill(key + ".rotational", d.rotational, any, Provenance::derived);
        }
        std::map<MediaKind, unsigned> media_count;
        MediaKind dominant = members.front()->media;
        for (const Device* m : members)
            if (++media_count[m->media] > media_count[dominant]) dominant = m->media;
        fill(key + ".media", d.media, dominant, Provenance::derived);
        if (const std::uint64_t capacity = derived_capacity(d, members); capacity > 0)
            fill(key + ".capacity", d.capacity, capacity, Provenance::derived);

        const unsigned width = data_width(d, static_cast<unsigned>(members.size()));
        if (width == 0) return;
        // Members that each limit reads and writes separately make a device that does.
        if (std::all_of(members.begin(), members.end(),
                        [](const Device* m) { return m->performance.independent_read_write; }))
            fill(key + ".performance.independent_read_write", d.performance.independent_read_write,
                 true, Provenance::derived);
        const auto scaled_min = [&](double Performance::* field) {
            double smallest = std::numeric_limits<double>::infinity();
            for (const Device* m : members)
                smallest = std::min(smallest, m->performance.*field);
            return smallest > 0 && smallest < std::numeric_limits<double>::infinity()
                       ? width * smallest
                       : 0.0;
        };
        const auto largest = [&](double Performance::* field) {
            double value = 0;
            for (const Device* m : members)
                value = std::max(value, m->performance.*field);
            return value;
        };
        Performance& p = d.performance;
        const std::string perf = key + ".performance.";
        fill_if_known(perf + "seq_read_bw", p.seq_read_bw, scaled_min(&Performance::seq_read_bw),
                      Provenance::derived);
        fill_if_known(perf + "seq_write_bw", p.seq_write_bw, scaled_min(&Performance::seq_write_bw),
                      Provenance::derived);
        // A sequential figure given for the device itself beats the members' random ones.
        if (!given(perf + "seq_read_bw"))
            fill_if_known(perf + "rand_read_bw", p.rand_read_bw,
                          scaled_min(&Performance::rand_read_bw), Provenance::derived);
        if (!given(perf + "seq_write_bw"))
            fill_if_known(perf + "rand_write_bw", p.rand_write_bw,
                          scaled_min(&Performance::rand_write_bw), Provenance::derived);
        fill_if_known(perf + "op_latency", p.op_latency, largest(&Performance::op_latency),
                      Provenance::derived);
        fill_if_known(perf + "seek_latency", p.seek_latency, largest(&Performance::seek_latency),
                      Provenance::derived);
        // An uncapped member leaves the whole device uncapped (0).
        fill_if_known(perf + "max_iops", p.max_iops, scaled_min(&Performance::max_iops),
                      Provenance::derived);
    }

    void fill_mount(Mount& m) {
        const std::string key = mount_key(m.path);
        if (const Device* device = node_.find_device(m.device); device && device->capacity > 0)
            fill(key + ".capacity", m.capacity, device->capacity, Provenance::derived);
        if (m.capacity > 0) fill(key + ".free", m.free_space, m.capacity, Provenance::defaulted);
    }

    Node& node_;
    const Locations& locations_;
    std::set<std::string> resolved_;
};

} // namespace

void infer_missing_values(Node& node, const Locations& locations) {
    Inference(node, locations).run();
}

} // namespace iosig::node_yaml_detail
