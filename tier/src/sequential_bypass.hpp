// The simulator's sequential bypass (SimConfig::sequential_cutoff): which requests go past the
// cache, by the engine's rule (Engine::bypass in engine_data.cpp), and what their lines that the
// cache does not hold cost the home device through its page cache.
#pragma once

#include "iosig/tier/readahead_model.hpp"
#include "iosig/tier/simulator.hpp"
#include "iosig/tier/trace.hpp"
#include "references.hpp"

#include <cstdint>
#include <vector>

namespace iosig::tier::detail {

class SequentialBypass {
public:
    // Decides every request of `trace` up front: a request continuing the stream where the previous
    // one ended adds its bytes to it, any other starts a new one; a request bypasses when the
    // stream, itself included, is longer than the cutoff. Requests of 0 bytes change nothing.
    SequentialBypass(const Trace& trace, const SimConfig& config);

    bool bypasses(std::uint32_t request) const { return bypassed_[request]; }

    // A line of a bypassing request that the cache does not hold: counted in `result`, and a
    // read goes through the page cache model. `per_request`: fill the per-request counts too.
    void serve(const Reference& ref, std::uint32_t request, SimResult& result, bool per_request);

private:
    const Trace& trace_;
    std::uint64_t line_size_;
    std::vector<bool> bypassed_;
    PageCacheModel page_cache_;
};

} // namespace iosig::tier::detail
