// Choosing the mount for a signature ("Matching Demand and Resources"): filter the node's mounts by
// the constraint parameters, rank the rest by Eq. 3, break ties deterministically, explain
// everything. Reference: docs/selection.md.
#pragma once

#include "iosig/node.hpp"
#include "iosig/signature.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace iosig {

// The file size MTTDL and availability are evaluated for when a signature gives no totalsize.
inline constexpr std::uint64_t default_reliability_file_size = std::uint64_t{1} << 30;

struct SelectionContext {
    // Job lifetime for `availability` (s). See job_lifetime_from_environment().
    double job_lifetime = 24 * 3600;
    std::string job_lifetime_source = "default (24 h)";
    // false: decide only. Exclusions keep their reason but get no text, and mttdl_basis and
    // tie_break stay empty; the choice, throughputs and MTTDLs are the same (for hot paths such as
    // open()).
    bool explain = true;
};

// IOSIG_JOB_LIFETIME (a duration), else the Slurm job's span (SLURM_JOB_END_TIME -
// SLURM_JOB_START_TIME, identical in every rank; SLURM_JOB_END_TIME - now without a start time),
// else SLURM_TIME_LIMIT minutes, else the documented default of 24 h.
SelectionContext selection_context_from_environment();

enum class ExclusionReason : std::uint8_t {
    not_global,      // signature says global, mount is local
    not_local,       // signature says local, mount is global
    is_volatile,     // persist on a volatile mount
    mttdl_too_low,   // MTTDL for totalsize below the demand
    loss_too_likely, // availability: loss probability over the job lifetime above the demand
    not_archive,
    not_tamperproof,
    too_small,      // totalsize above free space
    file_too_large, // totalsize above the fs max file size
};

struct Exclusion {
    ExclusionReason reason;
    std::string text; // "needs MTTDL >= 20y for 1G, has 3.2y (single ssd, not redundant)"
};

struct Candidate {
    const Mount* mount = nullptr;
    bool eligible = false;
    std::vector<Exclusion> exclusions; // empty iff eligible
    double throughput = 0;             // Eq. 3, B/s (computed for every mount)
    double mttdl = 0;                  // s, for the signature's totalsize (or 1 GiB if unset)
    std::string mttdl_basis;
};

struct Selection {
    std::vector<Candidate> candidates; // in the node's mount order
    std::optional<std::size_t> choice; // index into candidates
    std::uint64_t size_per_io = 0;     // the ds used (the signature's or the default)
    std::string tie_break;             // non-empty when a tie decided the choice

    const Mount* chosen() const { return choice ? candidates[*choice].mount : nullptr; }
};

// An MTTDL for people: "7711 y", "15.6 months" is shown as "1.3 y", "none" for 0 (not reliable),
// "unbounded" for +inf. human_duration() would write 7.71e+03 y.
std::string human_mttdl(double seconds);

// Deterministic: the same node and signature give the same choice in every process. Ties in
// throughput (relative difference < 1e-9) are broken by mount path, lexicographically.
Selection select_mount(const Node& node, const Signature& signature,
                       const SelectionContext& context);

// A node prepared for many selections: what depends only on the node (each mount's Eq. 3
// parameters, its reliability model, the fixed parts of its explanation, its free space) is
// computed once. select(s, c) gives exactly select_mount(node, s, c). The node must outlive the
// selector; changes to it after construction are not seen.
class MountSelector {
public:
    explicit MountSelector(const Node& node);
    ~MountSelector();
    MountSelector(MountSelector&&) noexcept;
    MountSelector& operator=(MountSelector&&) noexcept;

    Selection select(const Signature& signature, const SelectionContext& context) const;
    const Node& node() const { return *node_; }

private:
    struct PreparedMount;
    const Node* node_;
    std::vector<PreparedMount> mounts_;
};

} // namespace iosig
