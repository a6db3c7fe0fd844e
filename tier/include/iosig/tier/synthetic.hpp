// Synthetic block traces for the learner and prefetcher evaluations (paper Sec. 6.1). Every request
// reads one page of `page_size` bytes; page numbers are scattered over the address space by a
// bijection so that neighbouring pages in the model are not neighbours on disk (only the strided
// generator produces spatial patterns on purpose). Same parameters and seed => same trace.
#pragma once

#include "iosig/tier/trace.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace iosig::tier {

// Poisson temporal locality: new pages arrive at rate `new_page_probability` per request; a request
// for an existing page picks one whose age (in page arrivals) is exponential with mean `mean_age`,
// so the chance that a page is requested decays exponentially with the time since it arrived.
// Slowly evolving working set: LRU's case.
struct PoissonLocality {
    std::uint64_t requests = 200000;
    double new_page_probability = 0.05;
    double mean_age = 400;
};

// Independent reference model with Zipf(alpha) popularity over `pages` pages: LFU's case.
struct IrmZipf {
    std::uint64_t requests = 200000;
    std::uint64_t pages = 20000;
    double alpha = 0.8;
};

// Alternates `phases` phases of `phase_requests` requests, starting with IRM; every IRM phase has a
// fresh set of popular pages, every Poisson phase fresh arrivals. Neither LRU nor LFU suits both.
struct RegimeSwitching {
    unsigned phases = 6;
    std::uint64_t phase_requests = 60000;
    PoissonLocality poisson{};
    IrmZipf irm{};
};

// `streams` interleaved sequential scans (each `stride` pages apart) over separate regions, each
// restarting after `run_length` requests at a new region.
struct Strided {
    std::uint64_t requests = 200000;
    unsigned streams = 4;
    std::uint64_t stride = 1;
    std::uint64_t run_length = 4096;
};

// A random walk on a Markov chain over `states` scattered pages: from each page the walk moves to
// its preferred successor with probability `follow`, otherwise to a second, also fixed, successor.
struct MarkovChain {
    std::uint64_t requests = 200000;
    std::uint64_t states = 16384;
    double follow = 0.85;
};

// Uniformly random pages out of `pages`.
struct UniformRandom {
    std::uint64_t requests = 200000;
    std::uint64_t pages = 65536;
};

Trace generate(const PoissonLocality& spec, std::uint64_t seed, std::uint32_t page_size = 4096);
Trace generate(const IrmZipf& spec, std::uint64_t seed, std::uint32_t page_size = 4096);
Trace generate(const RegimeSwitching& spec, std::uint64_t seed, std::uint32_t page_size = 4096);
Trace generate(const Strided& spec, std::uint64_t seed, std::uint32_t page_size = 4096);
Trace generate(const MarkovChain& spec, std::uint64_t seed, std::uint32_t page_size = 4096);
Trace generate(const UniformRandom& spec, std::uint64_t seed, std::uint32_t page_size = 4096);

// By name with default parameters and `requests` requests (0 = the default length): poisson, irm,
// switching, strided, markov, random. Throws std::invalid_argument for other names.
Trace generate_named(std::string_view kind, std::uint64_t requests, std::uint64_t seed,
                     std::uint32_t page_size = 4096);
std::vector<std::string> synthetic_names();

} // namespace iosig::tier
