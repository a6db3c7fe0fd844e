// Checks across values of a node (docs/config.md, "Validation"): device references, what each
// device structure and redundancy scheme needs, cycles, mount references; then, after inference,
// that each mounted device has what the throughput model needs.
#include "node_yaml_internal.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>

namespace iosig::node_yaml_detail {
namespace {

class StructureCheck {
public:
    StructureCheck(const Node& node, const Locations& locations, Diagnostics& diagnostics)
        : node_(node), locations_(locations), diagnostics_(diagnostics) {
        for (const Device& d : node.devices)
            names_.push_back(d.name);
    }

    bool run() {
        for (const Device& device : node_.devices) {
            switch (device.structure) {
            case DeviceStructure::simple:
                check_simple(device);
                break;
            case DeviceStructure::complex:
                check_complex(device);
                break;
            case DeviceStructure::partition:
                check_partition(device);
                break;
            }
        }
        if (references_ok_) check_cycles();
        for (const Mount& mount : node_.mounts)
            check_mount(mount);
        return references_ok_;
    }

private:
    SourceLocation at(const Device& d, std::string_view key) const {
        return located(locations_, device_key(d.name) + "." + std::string(key), d.where);
    }
    SourceLocation at(const Mount& m, std::string_view key) const {
        return located(locations_, mount_key(m.path) + "." + std::string(key), m.where);
    }
    bool given(const Device& d, std::string_view key) const {
        return locations_.contains(device_key(d.name) + "." + std::string(key));
    }
    void error(const SourceLocation& where, std::string message) {
        diagnostics_.error(where, std::move(message));
    }

    // Device names to suggest for a misspelled reference from `from` (never `from` itself).
    std::string suggest(std::string_view wrong, std::string_view from) const {
        std::vector<std::string_view> others;
        for (std::string_view name : names_)
            if (name != from) others.push_back(name);
        return did_you_mean(wrong, others);
    }

    // Keys of one structure given on a device of another.
    void reject_keys(const Device& d, std::initializer_list<std::string_view> keys,
                     std::string_view belongs_to) {
        for (std::string_view key : keys)
            if (given(d, key))
                error(at(d, key), fmt::format("'{}' only applies to {}; device '{}' is {}", key,
                                              belongs_to, d.name, to_string(d.structure)));
    }

    void check_simple(const Device& d) {
        reject_keys(d, {"scheme", "members", "replicas", "data_units", "parity_units", "mttdl"},
                    "complex devices");
        reject_keys(d, {"owner"}, "partitions");
        if (!given(d, "media"))
            error(d.where, fmt::format("simple device '{}' needs 'media' (one of ram, nvram, ssd, "
                                       "hdd, network)",
                                       d.name));
    }

    void check_partition(const Device& d) {
        reject_keys(d, {"scheme", "members", "replicas", "data_units", "parity_units", "mttdl"},
                    "complex devices");
        if (d.owner.empty()) {
            error(d.where, fmt::format("partition '{}' needs an 'owner' (the device it is a "
                                       "partition of)",
                                       d.name));
            references_ok_ = false;
            return;
        }
        const Device* owner = node_.find_device(d.owner);
        if (!owner) {
            error(at(d, "owner"), fmt::format("partition '{}' has unknown owner '{}'{}", d.name,
                                              d.owner, suggest(d.owner, d.name)));
            references_ok_ = false;
        } else if (owner == &d) {
            error(at(d, "owner"), fmt::format("partition '{}' cannot be its own owner", d.name));
            references_ok_ = false;
        } else if (owner->structure == DeviceStructure::partition) {
            error(at(d, "owner"), fmt::format("the owner of partition '{}' cannot be a partition, "
                                              "and '{}' is one; name the device it is on",
                                              d.name, d.owner));
            references_ok_ = false;
        }
    }

    void check_members(const Device& d) {
        std::set<std::string_view> seen;
        for (std::size_t i = 0; i < d.members.size(); ++i) {
            const std::string& member = d.members[i];
            const SourceLocation where =
                located(locations_, fmt::format("{}.members[{}]", device_key(d.name), i), d.where);
            if (member == d.name) {
                error(where, fmt::format("device '{}' cannot be a member of itself", d.name));
                references_ok_ = false;
            } else if (!node_.find_device(member)) {
                error(where, fmt::format("device '{}' has unknown member '{}'{}", d.name, member,
                                         suggest(member, d.name)));
                references_ok_ = false;
            } else if (!seen.insert(member).second) {
                error(where, fmt::format("device '{}' lists member '{}' twice", d.name, member));
            }
        }
    }

    void check_complex(const Device& d) {
        reject_keys(d, {"owner"}, "partitions");
        if (d.scheme == RedundancyScheme::none) {
            error(at(d, "scheme"),
                  fmt::format("complex device '{}' needs a 'scheme' (raid0, raid1, "
                              "raid5, raid6, raid10, replication, erasure or "
                              "opaque)",
                              d.name));
            return;
        }
        const std::size_t k = d.members.size();
        if (d.scheme != RedundancyScheme::opaque && k == 0) {
            error(at(d, "scheme"), fmt::format("complex device '{}' ({}) needs 'members'", d.name,
                                               to_string(d.scheme)));
        }
        check_members(d);
        const SourceLocation members_at = at(d, "members");
        const auto need_members = [&](std::size_t minimum, std::string_view why) {
            if (k != 0 && k < minimum)
                error(members_at, fmt::format("{} device '{}' needs at least {} members{}, has {}",
                                              to_string(d.scheme), d.name, minimum, why, k));
        };
        switch (d.scheme) {
        case RedundancyScheme::raid0:
            need_members(2, "");
            break;
        case RedundancyScheme::raid1:
            need_members(2, "");
            break;
        case RedundancyScheme::raid5:
            need_members(3, "");
            break;
        case RedundancyScheme::raid6:
            need_members(4, "");
            break;
        case RedundancyScheme::raid10:
            need_members(4, "");
            if (k >= 4 && k % 2 != 0)
                error(members_at, fmt::format("raid10 device '{}' needs an even number of members "
                                              "(mirrored pairs), has {}",
                                              d.name, k));
            break;
        case RedundancyScheme::replication:
            if (!given(d, "replicas"))
                error(at(d, "scheme"), fmt::format("replication device '{}' needs 'replicas' (the "
                                                   "number of copies k >= 1)",
                                                   d.name));
            else
                need_members(d.replicas, fmt::format(" to hold {} replicas", d.replicas));
            break;
        case RedundancyScheme::erasure:
            if (!given(d, "data_units") || !given(d, "parity_units"))
                error(at(d, "scheme"), fmt::format("erasure device '{}' needs 'data_units' (n) and "
                                                   "'parity_units' (m) of its n+m code",
                                                   d.name));
            else
                need_members(d.data_units + d.parity_units,
                             fmt::format(" for its {}+{} code", d.data_units, d.parity_units));
            break;
        case RedundancyScheme::none:
        case RedundancyScheme::opaque:
            break;
        }
        const auto ignored = [&](std::string_view key, RedundancyScheme used_by) {
            if (given(d, key) && d.scheme != used_by)
                diagnostics_.warning(at(d, key), fmt::format("'{}' is only used by scheme {}; "
                                                             "ignored for '{}' ({})",
                                                             key, to_string(used_by), d.name,
                                                             to_string(d.scheme)));
        };
        ignored("replicas", RedundancyScheme::replication);
        ignored("data_units", RedundancyScheme::erasure);
        ignored("parity_units", RedundancyScheme::erasure);
        ignored("mttdl", RedundancyScheme::opaque);
    }

    // Members and owners must form a DAG (a RAID of a partition of the RAID is impossible).
    void check_cycles() {
        enum class Mark : std::uint8_t { unvisited, active, finished };
        std::map<std::string_view, Mark> marks;
        std::vector<std::string_view> stack;
        const auto visit = [&](const auto& self, const Device& d) -> bool {
            marks[d.name] = Mark::active;
            stack.push_back(d.name);
            std::vector<std::string_view> next(d.members.begin(), d.members.end());
            if (d.structure == DeviceStructure::partition) next.push_back(d.owner);
            for (std::string_view name : next) {
                const Device* child = node_.find_device(name);
                if (!child) continue;
                const Mark mark = marks[child->name];
                if (mark == Mark::active) {
                    const auto from = std::find(stack.begin(), stack.end(), child->name);
                    std::string cycle;
                    for (auto it = from; it != stack.end(); ++it)
                        cycle += std::string(*it) + " -> ";
                    error(child->where,
                          fmt::format("devices contain themselves: {}{}", cycle, child->name));
                    return false;
                }
                if (mark == Mark::unvisited && !self(self, *child)) return false;
            }
            stack.pop_back();
            marks[d.name] = Mark::finished;
            return true;
        };
        for (const Device& d : node_.devices) {
            if (marks[d.name] != Mark::unvisited) continue;
            stack.clear();
            if (!visit(visit, d)) {
                references_ok_ = false;
                return;
            }
        }
    }

    void check_mount(const Mount& m) {
        const std::string what =
            m.path.empty() ? std::string("a mount") : fmt::format("mount '{}'", m.path);
        if (m.path.empty())
            error(m.where, "a mount needs a 'path' (the absolute directory IO is redirected to)");
        else if (m.path.front() != '/')
            error(at(m, "path"), fmt::format("mount path '{}' must be absolute", m.path));
        if (m.device.empty())
            error(m.where, fmt::format("{} needs a 'device' (a name from 'devices')", what));
        else if (!node_.find_device(m.device))
            error(at(m, "device"), fmt::format("{} is on unknown device '{}'{}", what, m.device,
                                               did_you_mean(m.device, names_)));
        if (m.ecc.correctable_bits >= m.ecc.sector_bits)
            error(at(m, "ecc.correctable_bits"),
                  fmt::format("ecc of {} corrects {} bits per {}-bit sector: correctable_bits must "
                              "be less than sector_bits",
                              what, m.ecc.correctable_bits, m.ecc.sector_bits));
    }

    const Node& node_;
    const Locations& locations_;
    Diagnostics& diagnostics_;
    std::vector<std::string_view> names_;
    bool references_ok_ = true;
};

} // namespace

bool validate_structure(const Node& node, const Locations& locations, Diagnostics& diagnostics) {
    return StructureCheck(node, locations, diagnostics).run();
}

void validate_completed(const Node& node, const Locations& locations, Diagnostics& diagnostics) {
    for (const Mount& m : node.mounts) {
        const Device* device = node.find_device(m.device);
        if (!device) continue;
        const std::string key = mount_key(m.path);
        const SourceLocation device_at = located(locations, key + ".device", m.where);
        for (const auto& [field, value] :
             {std::pair{"seq_read_bw", device->performance.seq_read_bw},
              std::pair{"seq_write_bw", device->performance.seq_write_bw}})
            if (!(value > 0))
                diagnostics.error(
                    device_at,
                    fmt::format("mount '{}' is on device '{}', which has no performance.{} (the "
                                "throughput model needs it){}",
                                m.path, device->name, field,
                                device->structure == DeviceStructure::complex
                                    ? "; give it, or give its members' performance"
                                    : ""));
        if (m.capacity > 0 && m.free_space > m.capacity)
            diagnostics.error(located(locations, key + ".free", m.where),
                              fmt::format("mount '{}' has more free space ({} bytes) than capacity "
                                          "({} bytes)",
                                          m.path, m.free_space, m.capacity));
        if (locations.contains(key + ".capacity") && device->capacity > 0 &&
            m.capacity > device->capacity)
            diagnostics.warning(located(locations, key + ".capacity", m.where),
                                fmt::format("mount '{}' is larger ({} bytes) than its device '{}' "
                                            "({} bytes)",
                                            m.path, m.capacity, device->name, device->capacity));
        if (m.capacity == 0)
            diagnostics.warning(m.where, fmt::format("capacity of mount '{}' is unknown: give "
                                                     "'capacity' for the mount or its device",
                                                     m.path));
    }
    const SystemParameters& s = node.system;
    if (s.dirty_ratio && s.dirty_background_ratio && *s.dirty_background_ratio > *s.dirty_ratio)
        diagnostics.warning(located(locations, "system.dirty_background_ratio", {}),
                            "dirty_background_ratio exceeds dirty_ratio; Linux then uses half of "
                            "dirty_ratio as the background threshold");
}

} // namespace iosig::node_yaml_detail
