// TEMPORARY: placeholder definitions so that everything links while the core is being written.
// Each helper deletes the functions it implements from this file; the file is deleted when empty.
#include <cmath>
#include <limits>

#include "iosig/montecarlo.hpp"
#include "iosig/node.hpp"
#include "iosig/node_yaml.hpp"
#include "iosig/reliability.hpp"
#include "iosig/selection.hpp"
#include "iosig/signature.hpp"
#include "iosig/throughput.hpp"

namespace iosig {

// --- signature.cpp (core-lang) ---
Parsed<Signature> parse_signature(std::string_view) { return {Signature{}, {}}; }
Parsed<Directive> parse_directive(std::string_view) { return {std::nullopt, {SigError{0, 0, "not implemented", {}}}}; }
Signature apply_overrides(Signature base, const Signature&) { return base; }
std::string to_canonical(const Signature&) { return {}; }
bool SigdefTable::define(std::string name, Signature signature) { return definitions_.emplace(std::move(name), signature).second; }
const Signature* SigdefTable::find(std::string_view name) const { auto it = definitions_.find(name); return it == definitions_.end() ? nullptr : &it->second; }
Parsed<Signature> resolve_sig(std::string_view text, const SigdefTable&) { return parse_signature(text); }

// --- node.cpp / node_yaml.cpp (core-model) ---
const Device* Node::find_device(std::string_view) const { return nullptr; }
const Mount* Node::find_mount(std::string_view) const { return nullptr; }
std::string_view to_string(MediaKind) { return "?"; }
std::string_view to_string(RedundancyScheme) { return "?"; }
std::string_view to_string(DeviceStructure) { return "?"; }
std::string_view to_string(Provenance) { return "?"; }
std::string ConfigDiagnostic::format() const { return message; }
NodeLoadResult load_node_files(const std::vector<std::filesystem::path>&) { return {}; }
NodeLoadResult load_node_text(std::string_view, std::string_view) { return {}; }
std::string to_yaml(const Node&) { return {}; }

// --- throughput.cpp / reliability.cpp / montecarlo.cpp / selection.cpp (core-select) ---
double eq3_throughput(const Eq3Parameters&, std::uint64_t) { return 0; }
Eq3Parameters eq3_parameters(const Node&, const Mount&, AccessPattern) { return {}; }
double uber(double, unsigned, unsigned) { return 0; }
double mttdl_mds(unsigned, unsigned, double, double, double, double) { return 0; }
MttdlEstimate mount_mttdl(const Node&, const Mount&, std::uint64_t) { return {}; }
double loss_probability(double, double) { return 0; }
MonteCarloResult simulate_mttdl(const MonteCarloSetup&) { return {}; }
SelectionContext selection_context_from_environment() { return {}; }
Selection select_mount(const Node&, const Signature&, const SelectionContext&) { return {}; }

} // namespace iosig
