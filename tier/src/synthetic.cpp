// Synthetic traces (synthetic.hpp). Distributions are sampled by hand from mt19937_64 so that the
// traces are identical with every standard library.
#include "iosig/tier/synthetic.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <random>
#include <stdexcept>

namespace iosig::tier {
namespace {

double uniform01(std::mt19937_64& rng) {
    return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

double exponential(std::mt19937_64& rng, double mean) {
    return -mean * std::log1p(-uniform01(rng));
}

// Page number -> byte offset: a bijection on 32-bit page numbers, so pages are scattered.
std::uint64_t scattered(std::uint64_t page, std::uint32_t page_size) {
    const std::uint64_t mixed = (page * 0x9E3779B1ull) & 0xffffffffull;
    return mixed * page_size;
}

Trace block_trace(std::string source) {
    Trace t;
    t.source = std::move(source);
    t.kind = TraceKind::blocks;
    return t;
}

void read_page(Trace& t, std::uint64_t page, std::uint32_t page_size) {
    t.requests.push_back(Request{scattered(page, page_size), page_size, false});
}

// Zipf(alpha) over ranks 0..n-1 by inversion of the cumulative distribution.
class Zipf {
public:
    Zipf(std::uint64_t n, double alpha) : cdf_(n) {
        double sum = 0;
        for (std::uint64_t i = 0; i < n; ++i)
            cdf_[i] = sum += 1.0 / std::pow(static_cast<double>(i + 1), alpha);
        for (double& c : cdf_)
            c /= sum;
    }
    std::uint64_t operator()(std::mt19937_64& rng) const {
        const auto it = std::lower_bound(cdf_.begin(), cdf_.end(), uniform01(rng));
        return std::min<std::uint64_t>(static_cast<std::uint64_t>(it - cdf_.begin()),
                                       cdf_.size() - 1);
    }

private:
    std::vector<double> cdf_;
};

// Emits `count` Poisson-locality requests; `arrived` holds the pages in arrival order, `next_page`
// the next unused page number.
void poisson_requests(Trace& t, const PoissonLocality& spec, std::uint64_t count,
                      std::vector<std::uint64_t>& arrived, std::uint64_t& next_page,
                      std::mt19937_64& rng, std::uint32_t page_size) {
    for (std::uint64_t i = 0; i < count; ++i) {
        if (arrived.empty() || uniform01(rng) < spec.new_page_probability) {
            arrived.push_back(next_page++);
            read_page(t, arrived.back(), page_size);
            continue;
        }
        const auto age = static_cast<std::uint64_t>(exponential(rng, spec.mean_age));
        const std::uint64_t index = age >= arrived.size() ? 0 : arrived.size() - 1 - age;
        read_page(t, arrived[index], page_size);
    }
}

} // namespace

Trace generate(const PoissonLocality& spec, std::uint64_t seed, std::uint32_t page_size) {
    Trace t =
        block_trace(fmt::format("poisson(requests={}, new={}, mean_age={}, seed={})", spec.requests,
                                spec.new_page_probability, spec.mean_age, seed));
    std::mt19937_64 rng(seed);
    std::vector<std::uint64_t> arrived;
    std::uint64_t next_page = 0;
    poisson_requests(t, spec, spec.requests, arrived, next_page, rng, page_size);
    return t;
}

Trace generate(const IrmZipf& spec, std::uint64_t seed, std::uint32_t page_size) {
    Trace t = block_trace(fmt::format("irm(requests={}, pages={}, alpha={}, seed={})",
                                      spec.requests, spec.pages, spec.alpha, seed));
    std::mt19937_64 rng(seed);
    const Zipf zipf(spec.pages, spec.alpha);
    // Popularity rank -> page: a random permutation, so popular pages are not the low page numbers.
    std::vector<std::uint64_t> page_of(spec.pages);
    for (std::uint64_t i = 0; i < spec.pages; ++i)
        page_of[i] = i;
    for (std::uint64_t i = spec.pages; i > 1; --i)
        std::swap(page_of[i - 1], page_of[rng() % i]);
    for (std::uint64_t i = 0; i < spec.requests; ++i)
        read_page(t, page_of[zipf(rng)], page_size);
    return t;
}

Trace generate(const RegimeSwitching& spec, std::uint64_t seed, std::uint32_t page_size) {
    Trace t = block_trace(fmt::format("switching(phases={}, phase_requests={}, seed={})",
                                      spec.phases, spec.phase_requests, seed));
    std::mt19937_64 rng(seed);
    const Zipf zipf(spec.irm.pages, spec.irm.alpha);
    std::uint64_t next_page = 0;
    for (unsigned phase = 0; phase < spec.phases; ++phase) {
        if (phase % 2 == 0) {
            const std::uint64_t base = next_page;
            next_page += spec.irm.pages;
            for (std::uint64_t i = 0; i < spec.phase_requests; ++i)
                read_page(t, base + zipf(rng), page_size);
        } else {
            std::vector<std::uint64_t> arrived;
            poisson_requests(t, spec.poisson, spec.phase_requests, arrived, next_page, rng,
                             page_size);
        }
    }
    return t;
}

Trace generate(const Strided& spec, std::uint64_t seed, std::uint32_t page_size) {
    Trace t =
        block_trace(fmt::format("strided(requests={}, streams={}, stride={}, run={}, seed={})",
                                spec.requests, spec.streams, spec.stride, spec.run_length, seed));
    std::mt19937_64 rng(seed);
    const std::uint64_t region = spec.run_length * spec.stride + 1;
    std::vector<std::uint64_t> position(spec.streams), remaining(spec.streams, 0);
    std::uint64_t next_region = rng() % 1024;
    for (std::uint64_t i = 0; i < spec.requests; ++i) {
        const std::size_t s = i % spec.streams;
        if (remaining[s] == 0) {
            position[s] = (next_region++) * region;
            remaining[s] = spec.run_length;
        }
        // Contiguous pages on disk here: strides only mean something in a linear address space.
        t.requests.push_back(Request{position[s] * page_size, page_size, false});
        position[s] += spec.stride;
        --remaining[s];
    }
    return t;
}

Trace generate(const MarkovChain& spec, std::uint64_t seed, std::uint32_t page_size) {
    Trace t = block_trace(fmt::format("markov(requests={}, states={}, follow={}, seed={})",
                                      spec.requests, spec.states, spec.follow, seed));
    std::mt19937_64 rng(seed);
    std::vector<std::uint64_t> first(spec.states), second(spec.states);
    for (std::uint64_t s = 0; s < spec.states; ++s) {
        first[s] = rng() % spec.states;
        second[s] = rng() % spec.states;
    }
    std::uint64_t state = 0;
    for (std::uint64_t i = 0; i < spec.requests; ++i) {
        read_page(t, state, page_size);
        state = uniform01(rng) < spec.follow ? first[state] : second[state];
    }
    return t;
}

Trace generate(const UniformRandom& spec, std::uint64_t seed, std::uint32_t page_size) {
    Trace t = block_trace(
        fmt::format("random(requests={}, pages={}, seed={})", spec.requests, spec.pages, seed));
    std::mt19937_64 rng(seed);
    for (std::uint64_t i = 0; i < spec.requests; ++i)
        read_page(t, rng() % spec.pages, page_size);
    return t;
}

std::vector<std::string> synthetic_names() {
    return {"poisson", "irm", "switching", "strided", "markov", "random"};
}

Trace generate_named(std::string_view kind, std::uint64_t requests, std::uint64_t seed,
                     std::uint32_t page_size) {
    auto with = [requests](auto spec) {
        if (requests != 0) spec.requests = requests;
        return spec;
    };
    if (kind == "poisson") return generate(with(PoissonLocality{}), seed, page_size);
    if (kind == "irm") return generate(with(IrmZipf{}), seed, page_size);
    if (kind == "switching") {
        RegimeSwitching spec;
        if (requests != 0) spec.phase_requests = std::max<std::uint64_t>(1, requests / spec.phases);
        return generate(spec, seed, page_size);
    }
    if (kind == "strided") return generate(with(Strided{}), seed, page_size);
    if (kind == "markov") return generate(with(MarkovChain{}), seed, page_size);
    if (kind == "random") return generate(with(UniformRandom{}), seed, page_size);
    throw std::invalid_argument(fmt::format(
        "unknown synthetic trace '{}' (known: poisson, irm, switching, strided, markov, random)",
        kind));
}

} // namespace iosig::tier
