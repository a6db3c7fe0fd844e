// An open-addressing hash map from 64-bit keys to 32-bit values (linear probing, backward-shift
// deletion, so there are no tombstones). The hot lookups of the simulator, the ghost lists and the
// engine's line index go through it; std::unordered_map's node per entry costs 3-5x here.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace iosig::tier::detail {

class FlatMap {
public:
    explicit FlatMap(std::size_t expected = 16) { rehash(capacity_for(expected)); }

    std::size_t size() const { return size_; }
    std::size_t table_bytes() const { return buckets_.size() * sizeof(Bucket); }
    bool empty() const { return size_ == 0; }

    const std::uint32_t* find(std::uint64_t key) const {
        std::size_t i = home(key);
        while (buckets_[i].used) {
            if (buckets_[i].key == key) return &buckets_[i].value;
            i = (i + 1) & mask_;
        }
        return nullptr;
    }
    std::uint32_t* find(std::uint64_t key) {
        return const_cast<std::uint32_t*>(static_cast<const FlatMap*>(this)->find(key));
    }
    bool contains(std::uint64_t key) const { return find(key) != nullptr; }
    // Starts loading the bucket `key` hashes to, for a lookup a little later.
    void prefetch(std::uint64_t key) const { __builtin_prefetch(&buckets_[home(key)]); }

    // Inserts or overwrites.
    void put(std::uint64_t key, std::uint32_t value) {
        if ((size_ + 1) * 4 > buckets_.size() * 3) rehash(buckets_.size() * 2);
        std::size_t i = home(key);
        while (buckets_[i].used) {
            if (buckets_[i].key == key) {
                buckets_[i].value = value;
                return;
            }
            i = (i + 1) & mask_;
        }
        buckets_[i] = Bucket{key, value, 1};
        ++size_;
    }

    std::optional<std::uint32_t> erase(std::uint64_t key) {
        std::size_t i = home(key);
        while (buckets_[i].used && buckets_[i].key != key)
            i = (i + 1) & mask_;
        if (!buckets_[i].used) return std::nullopt;
        const std::uint32_t value = buckets_[i].value;
        // Backward shift: move later entries of the probe run into the hole when that keeps them
        // reachable from their home bucket.
        std::size_t hole = i;
        for (std::size_t j = (i + 1) & mask_; buckets_[j].used; j = (j + 1) & mask_) {
            const std::size_t h = home(buckets_[j].key);
            const bool movable = hole <= j ? (h <= hole || h > j) : (h <= hole && h > j);
            if (movable) {
                buckets_[hole] = buckets_[j];
                hole = j;
            }
        }
        buckets_[hole].used = 0;
        --size_;
        return value;
    }

    void clear() {
        if (size_ == 0) return;
        for (Bucket& b : buckets_)
            b.used = 0;
        size_ = 0;
    }

private:
    struct Bucket {
        std::uint64_t key = 0;
        std::uint32_t value = 0;
        std::uint32_t used = 0;
    };
    static std::size_t capacity_for(std::size_t n) {
        std::size_t c = 16;
        while (c * 3 < n * 4)
            c *= 2;
        return c;
    }
    std::size_t home(std::uint64_t key) const {
        // Fibonacci hashing: spreads sequential block numbers over the table.
        return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
    }
    void rehash(std::size_t capacity) {
        std::vector<Bucket> old = std::move(buckets_);
        buckets_.assign(capacity, Bucket{});
        mask_ = capacity - 1;
        shift_ = 64;
        for (std::size_t c = capacity; c > 1; c >>= 1)
            --shift_;
        size_ = 0;
        for (const Bucket& b : old)
            if (b.used) put(b.key, b.value);
    }

    std::vector<Bucket> buckets_;
    std::size_t mask_ = 0;
    unsigned shift_ = 64;
    std::size_t size_ = 0;
};

} // namespace iosig::tier::detail
