// Filter the node's mounts by the signature's constraints, rank the rest by Eq. 3, break ties by
// path, and say why for every mount (docs/selection.md, "Selection").
//
// Everything that depends only on the node is prepared once (MountSelector); a selection then costs
// a few arithmetic operations per mount plus the explanation's strings.
#include "iosig/selection.hpp"

#include "iosig/reliability.hpp"
#include "iosig/throughput.hpp"
#include "iosig/units.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace iosig {
namespace {

// Relative throughput difference below which two mounts tie (then the path decides).
constexpr double tie_tolerance = 1e-9;

bool has_label(const Mount& mount, std::string_view label) {
    return std::find(mount.labels.begin(), mount.labels.end(), label) != mount.labels.end();
}

// Bytes the user may still write there; 0 when neither the mount nor its device says.
std::uint64_t available_space(const Node& node, const Mount& mount) {
    if (mount.free_space != 0) return mount.free_space;
    if (mount.capacity != 0) return mount.capacity;
    const Device* device = node.find_device(mount.device);
    return device != nullptr ? device->capacity : 0;
}

std::string fs_name(const Mount& m, const char* otherwise) {
    return m.fs_type.empty() ? std::string(otherwise) : m.fs_type;
}

// The parts of the exclusion texts that depend on the signature only, formatted once per selection.
struct DemandTexts {
    std::string mttdl;        // "needs MTTDL >= 20 y for 1 GiB, has "
    std::string availability; // "needs loss probability <= 1e-06 over ..., has "
    std::string size;         // "needs 6 GiB (totalsize), has "
    std::string file;         // "needs a 6 GiB file, "

    DemandTexts(const Signature& sig, const SelectionContext& context,
                std::uint64_t reliability_size) {
        if (!context.explain) return;
        const std::string for_size = human_size(static_cast<double>(reliability_size));
        if (sig.mttdl_seconds)
            mttdl = fmt::format("needs MTTDL >= {} for {}, has ", human_mttdl(*sig.mttdl_seconds),
                                for_size);
        if (sig.availability)
            availability =
                fmt::format("needs loss probability <= {:.3g} over the job lifetime of {} ({}) "
                            "for {}, has ",
                            *sig.availability, human_duration(context.job_lifetime),
                            context.job_lifetime_source, for_size);
        if (sig.total_size) {
            const std::string total = human_size(static_cast<double>(*sig.total_size));
            size = "needs " + total + " (totalsize), has ";
            file = "needs a " + total + " file, ";
        }
    }
};

std::string describe_mttdl(double seconds, const std::string& basis) {
    return human_mttdl(seconds) + " (" + basis + ")";
}

} // namespace

std::string human_mttdl(double seconds) {
    if (!(seconds > 0)) return "none";
    const double years = seconds / seconds_per_year;
    if (std::isfinite(years) && years >= 10 && years < 1e7) return fmt::format("{:.0f} y", years);
    return human_duration(seconds);
}

struct MountSelector::PreparedMount {
    const Mount* mount = nullptr;
    Eq3Parameters sequential, random;
    MountReliability reliability;
    std::uint64_t available = 0; // 0: unknown, not checked
    bool archive = false, tamperproof = false;
    std::string volatile_text, free_text, max_file_text;
    std::string fixed_mttdl_text; // "none (why)" or "1000 y (stated)": MTTDLs that do not depend on
                                  // the size

    std::string mttdl_text(double mttdl) const {
        return fixed_mttdl_text.empty() ? describe_mttdl(mttdl, reliability.basis)
                                        : fixed_mttdl_text;
    }
};

MountSelector::MountSelector(const Node& node) : node_(&node) {
    mounts_.reserve(node.mounts.size());
    for (const Mount& m : node.mounts) {
        PreparedMount& p = mounts_.emplace_back();
        p.mount = &m;
        p.sequential = eq3_parameters(node, m, AccessPattern::sequential);
        p.random = eq3_parameters(node, m, AccessPattern::random);
        p.reliability = prepare_mount_reliability(node, m);
        if (p.reliability.kind != MountReliability::Kind::eq2)
            p.fixed_mttdl_text = describe_mttdl(p.reliability.mttdl(0), p.reliability.basis);
        p.available = available_space(node, m);
        p.archive = m.archive || has_label(m, "archive");
        p.tamperproof = m.tamperproof || has_label(m, "tamperproof");
        p.volatile_text =
            "needs persist; " + fs_name(m, "the") + " mount is volatile (contents lost on reboot)";
        p.free_text = human_size(static_cast<double>(p.available)) + " free";
        if (m.max_file_size != 0)
            p.max_file_text = fs_name(m, "the file system") + " allows at most " +
                              human_size(static_cast<double>(m.max_file_size));
    }
}

MountSelector::~MountSelector() = default;
MountSelector::MountSelector(MountSelector&&) noexcept = default;
MountSelector& MountSelector::operator=(MountSelector&&) noexcept = default;

Selection MountSelector::select(const Signature& sig, const SelectionContext& context) const {
    Selection selection;
    selection.size_per_io = sig.size_per_io.value_or(default_size_per_io);
    if (selection.size_per_io == 0) selection.size_per_io = default_size_per_io;
    const std::uint64_t reliability_size = sig.total_size.value_or(default_reliability_file_size);
    const bool explain = context.explain;
    const DemandTexts demand(sig, context, reliability_size);

    selection.candidates.resize(mounts_.size());
    double best = -1;
    for (std::size_t i = 0; i < mounts_.size(); ++i) {
        const PreparedMount& p = mounts_[i];
        const Mount& m = *p.mount;
        Candidate& c = selection.candidates[i];
        c.mount = &m;
        c.throughput = eq3_throughput(
            sig.pattern == AccessPattern::random ? p.random : p.sequential, selection.size_per_io);
        c.mttdl = p.reliability.mttdl(reliability_size);
        if (explain) c.mttdl_basis = p.reliability.basis;

        auto exclude = [&](ExclusionReason reason, auto&& make_text) {
            c.exclusions.push_back(
                Exclusion{reason, explain ? std::string(make_text()) : std::string()});
        };
        if (sig.visibility == Visibility::global && !m.global)
            exclude(ExclusionReason::not_global, [] {
                return "needs global (the same files from every node of the job); mount is local";
            });
        if (sig.visibility == Visibility::local && m.global)
            exclude(ExclusionReason::not_local,
                    [] { return "needs local; mount is global (shared between nodes)"; });
        if (sig.persistence == Persistence::persist && m.is_volatile)
            exclude(ExclusionReason::is_volatile, [&] { return p.volatile_text; });
        if (sig.mttdl_seconds && !(c.mttdl >= *sig.mttdl_seconds))
            exclude(ExclusionReason::mttdl_too_low,
                    [&] { return demand.mttdl + p.mttdl_text(c.mttdl); });
        if (sig.availability) {
            const double loss = loss_probability(c.mttdl, context.job_lifetime);
            if (!(loss <= *sig.availability))
                exclude(ExclusionReason::loss_too_likely, [&] {
                    return demand.availability +
                           (loss >= 1 ? std::string("1") : fmt::format("{:.3g}", loss)) +
                           " (MTTDL " + p.mttdl_text(c.mttdl) + ")";
                });
        }
        if (sig.archive && !p.archive)
            exclude(ExclusionReason::not_archive, [] {
                return "needs archive; mount is neither `archive: true` nor labelled 'archive'";
            });
        if (sig.tamperproof && !p.tamperproof)
            exclude(ExclusionReason::not_tamperproof, [] {
                return "needs tamperproof; mount is neither `tamperproof: true` nor labelled "
                       "'tamperproof'";
            });
        if (sig.total_size) {
            if (p.available != 0 && *sig.total_size > p.available)
                exclude(ExclusionReason::too_small, [&] { return demand.size + p.free_text; });
            if (m.max_file_size != 0 && *sig.total_size > m.max_file_size)
                exclude(ExclusionReason::file_too_large,
                        [&] { return demand.file + p.max_file_text; });
        }
        c.eligible = c.exclusions.empty();
        if (c.eligible) best = std::max(best, c.throughput);
    }
    if (best < 0) return selection;

    std::size_t ties = 0;
    for (std::size_t i = 0; i < selection.candidates.size(); ++i) {
        const Candidate& c = selection.candidates[i];
        if (!c.eligible || c.throughput < best - tie_tolerance * best) continue;
        ++ties;
        if (!selection.choice ||
            c.mount->path < selection.candidates[*selection.choice].mount->path)
            selection.choice = i;
    }
    if (ties > 1 && explain)
        selection.tie_break = fmt::format(
            "{} mounts predict the same throughput ({}); chose {}, the first by path", ties,
            human_bandwidth(best), selection.candidates[*selection.choice].mount->path);
    return selection;
}

Selection select_mount(const Node& node, const Signature& signature,
                       const SelectionContext& context) {
    return MountSelector(node).select(signature, context);
}

} // namespace iosig
