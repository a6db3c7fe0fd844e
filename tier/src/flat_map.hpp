// An open-addressing hash map from 64-bit keys to 32-bit values (linear probing, backward-shift
// deletion, so there are no tombstones). The hot lookups of the simulator, the ghost lists and the
// engine's line index go through it; std::unordered_map's node per entry costs 3-5x here.
//
// The table comes from calloc: an empty bucket is all zero bits, so a large table (which calloc
// maps fresh from the kernel) costs no writes when it is made, and its pages are faulted in as
// keys land on them. The engine makes its tables for every line of the cache when it opens; a
// table written full of empty buckets there made opening a large cache take seconds.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <optional>
#include <utility>

namespace iosig::tier::detail {

class FlatMap {
public:
    explicit FlatMap(std::size_t expected = 16) { rehash(capacity_for(expected)); }
    // A moved-from map is empty and usable (the table is a unique_ptr; a defaulted move would
    // leave its capacity without a table).
    FlatMap(FlatMap&& other) : FlatMap() { swap(other); }
    FlatMap& operator=(FlatMap&& other) {
        FlatMap taken(std::move(other));
        swap(taken);
        return *this;
    }
    void swap(FlatMap& other) noexcept {
        std::swap(buckets_, other.buckets_);
        std::swap(capacity_, other.capacity_);
        std::swap(mask_, other.mask_);
        std::swap(shift_, other.shift_);
        std::swap(size_, other.size_);
    }

    std::size_t size() const { return size_; }
    std::size_t table_bytes() const { return capacity_ * sizeof(Bucket); }
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
        if ((size_ + 1) * 4 > capacity_ * 3) rehash(capacity_ * 2);
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
        for (std::size_t i = 0; i < capacity_; ++i)
            buckets_[i].used = 0;
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
    struct FreeTable {
        void operator()(Bucket* table) const { std::free(table); }
    };
    using Table = std::unique_ptr<Bucket[], FreeTable>;
    static Table zeroed_table(std::size_t capacity) {
        auto* table = static_cast<Bucket*>(std::calloc(capacity, sizeof(Bucket)));
        if (table == nullptr) throw std::bad_alloc();
        return Table(table);
    }
    void rehash(std::size_t capacity) {
        const Table old = std::move(buckets_);
        const std::size_t old_capacity = capacity_;
        buckets_ = zeroed_table(capacity);
        capacity_ = capacity;
        mask_ = capacity - 1;
        shift_ = 64;
        for (std::size_t c = capacity; c > 1; c >>= 1)
            --shift_;
        size_ = 0;
        for (std::size_t i = 0; i < old_capacity; ++i)
            if (old[i].used) put(old[i].key, old[i].value);
    }

    Table buckets_; // capacity_ buckets, a power of two; all zero bits = empty
    std::size_t capacity_ = 0;
    std::size_t mask_ = 0;
    unsigned shift_ = 64;
    std::size_t size_ = 0;
};

} // namespace iosig::tier::detail
