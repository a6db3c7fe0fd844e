// Orders over slots that the policies compose: recency (LruOrder), frequency with FIFO among equal
// frequencies (LfuOrder), uniform choice (RandomSet), and bounded ghost lists of keys (GhostList).
// All operations are O(1) except LfuOrder::insert at a frequency other than 1 (O(#frequencies)).
#pragma once

#include "flat_map.hpp"
#include "iosig/tier/policy.hpp"

#include <cstdint>
#include <random>
#include <vector>

namespace iosig::tier::detail {

inline constexpr std::uint32_t nil = 0xffffffffu;

// Doubly linked list over slots; front = most recently used. prev/next of a slot share a cache
// line.
class LruOrder {
public:
    bool empty() const { return head_ == nil; }
    std::size_t size() const { return size_; }
    Slot front() const { return head_; }
    Slot back() const { return tail_; }
    Slot next_toward_back(Slot s) const { return links_[s].next; }
    Slot next_toward_front(Slot s) const { return links_[s].prev; }
    // Makes room for slots 0 .. n-1 now, so that no insert copies the links later.
    void reserve_slots(std::size_t n) {
        if (n > links_.size()) links_.resize(n);
    }

    void push_front(Slot s) {
        if (s >= links_.size()) links_.resize(std::max<std::size_t>(s + 1, links_.size() * 2));
        links_[s] = Link{nil, head_};
        if (head_ != nil)
            links_[head_].prev = s;
        else
            tail_ = s;
        head_ = s;
        ++size_;
    }
    void unlink(Slot s) {
        const Link l = links_[s];
        if (l.prev != nil)
            links_[l.prev].next = l.next;
        else
            head_ = l.next;
        if (l.next != nil)
            links_[l.next].prev = l.prev;
        else
            tail_ = l.prev;
        --size_;
    }
    void move_to_front(Slot s) {
        if (head_ == s) return;
        unlink(s);
        push_front(s);
    }

private:
    struct Link {
        Slot prev = nil, next = nil;
    };
    std::vector<Link> links_;
    Slot head_ = nil, tail_ = nil;
    std::size_t size_ = 0;
};

// Frequency buckets in ascending order, each a FIFO of the slots that reached that frequency: the
// victim is the slot that has had the lowest frequency the longest (libCacheSim's LFU tie rule).
class LfuOrder {
public:
    bool empty() const { return first_ == nil; }
    std::uint64_t frequency(Slot s) const { return buckets_[bucket_of_[s]].freq; }
    Slot min() const { return buckets_[first_].head; }
    // Makes room for slots 0 .. n-1 now, so that no insert copies the lists later.
    void reserve_slots(std::size_t n) {
        if (n > 0) ensure(static_cast<Slot>(n - 1));
    }
    // The slot n places after min() in eviction order, or nil if there are not that many.
    Slot nth_from_min(unsigned n) const {
        for (std::uint32_t b = first_; b != nil; b = buckets_[b].next)
            for (Slot s = buckets_[b].head; s != nil; s = next_[s])
                if (n-- == 0) return s;
        return nil;
    }

    void insert(Slot s, std::uint64_t freq = 1) {
        ensure(s);
        std::uint32_t before = nil, b = first_;
        while (b != nil && buckets_[b].freq < freq) {
            before = b;
            b = buckets_[b].next;
        }
        if (b == nil || buckets_[b].freq != freq) b = new_bucket(freq, before);
        append(b, s);
    }
    void increment(Slot s) {
        const std::uint32_t b = bucket_of_[s];
        const std::uint64_t freq = buckets_[b].freq + 1;
        std::uint32_t target = buckets_[b].next;
        if (target == nil || buckets_[target].freq != freq) target = new_bucket(freq, b);
        detach(b, s);
        append(target, s);
        if (buckets_[b].head == nil) drop_bucket(b);
    }
    void erase(Slot s) {
        const std::uint32_t b = bucket_of_[s];
        detach(b, s);
        if (buckets_[b].head == nil) drop_bucket(b);
    }

private:
    struct Bucket {
        std::uint64_t freq = 0;
        Slot head = nil, tail = nil;
        std::uint32_t prev = nil, next = nil;
    };
    void ensure(Slot s) {
        if (s < prev_.size()) return;
        const std::size_t n = std::max<std::size_t>(std::size_t{s} + 1, prev_.size() * 2);
        prev_.resize(n, nil);
        next_.resize(n, nil);
        bucket_of_.resize(n, nil);
    }
    std::uint32_t new_bucket(std::uint64_t freq, std::uint32_t after) {
        std::uint32_t b;
        if (!free_.empty()) {
            b = free_.back();
            free_.pop_back();
        } else {
            b = static_cast<std::uint32_t>(buckets_.size());
            buckets_.emplace_back();
        }
        Bucket& nb = buckets_[b];
        nb = Bucket{freq, nil, nil, after, nil};
        if (after == nil) {
            nb.next = first_;
            if (first_ != nil) buckets_[first_].prev = b;
            first_ = b;
        } else {
            nb.next = buckets_[after].next;
            if (nb.next != nil) buckets_[nb.next].prev = b;
            buckets_[after].next = b;
        }
        return b;
    }
    void drop_bucket(std::uint32_t b) {
        const Bucket& ob = buckets_[b];
        if (ob.prev != nil)
            buckets_[ob.prev].next = ob.next;
        else
            first_ = ob.next;
        if (ob.next != nil) buckets_[ob.next].prev = ob.prev;
        free_.push_back(b);
    }
    void append(std::uint32_t b, Slot s) {
        Bucket& bk = buckets_[b];
        prev_[s] = bk.tail;
        next_[s] = nil;
        if (bk.tail != nil)
            next_[bk.tail] = s;
        else
            bk.head = s;
        bk.tail = s;
        bucket_of_[s] = b;
    }
    void detach(std::uint32_t b, Slot s) {
        Bucket& bk = buckets_[b];
        const Slot p = prev_[s], n = next_[s];
        if (p != nil)
            next_[p] = n;
        else
            bk.head = n;
        if (n != nil)
            prev_[n] = p;
        else
            bk.tail = p;
    }

    std::vector<Bucket> buckets_;
    std::vector<std::uint32_t> free_;
    std::uint32_t first_ = nil;
    std::vector<Slot> prev_, next_;
    std::vector<std::uint32_t> bucket_of_;
};

// Resident slots in an array, for a uniform random choice in O(1).
class RandomSet {
public:
    bool empty() const { return members_.empty(); }
    // Makes room for slots 0 .. n-1 now, so that no insert copies the arrays later.
    void reserve_slots(std::size_t n) {
        members_.reserve(n);
        if (n > position_.size()) position_.resize(n, nil);
    }
    void insert(Slot s) {
        if (s >= position_.size())
            position_.resize(std::max<std::size_t>(s + 1, position_.size() * 2), nil);
        position_[s] = static_cast<std::uint32_t>(members_.size());
        members_.push_back(s);
    }
    void erase(Slot s) {
        const std::uint32_t at = position_[s];
        const Slot last = members_.back();
        members_[at] = last;
        position_[last] = at;
        members_.pop_back();
        position_[s] = nil;
    }
    Slot pick(std::mt19937_64& rng) const {
        // Modulo keeps the choice identical across standard libraries (uniform_int_distribution
        // is implementation-defined); the bias is < 2^-40 for any realistic cache.
        return pick_by_draw(rng());
    }
    // The member a draw of the generator chooses (pick(rng) with the draw made earlier).
    Slot pick_by_draw(std::uint64_t draw) const { return members_[draw % members_.size()]; }
    // For a draw made ahead of its use: start loading the member pick_by_draw(draw) reads, or the
    // position erase() of that member reads (a dependent load: once the member is loaded). Hints
    // only; the members may move before the draw is used.
    void prefetch_member(std::uint64_t draw) const {
        if (!members_.empty()) __builtin_prefetch(&members_[draw % members_.size()]);
    }
    void prefetch_position_of_pick(std::uint64_t draw) const {
        if (!members_.empty()) __builtin_prefetch(&position_[pick_by_draw(draw)]);
    }

private:
    std::vector<Slot> members_;
    std::vector<std::uint32_t> position_;
};

// A bounded LRU list of keys that are no longer resident, with their sizes and the logical time of
// their eviction. Adding beyond the bound drops the oldest.
class GhostList {
public:
    struct Entry {
        Key key = 0;
        std::uint64_t size = 0;
        std::uint64_t time = 0;
        std::uint64_t freq = 0;
    };

    // `expected`: the most entries it will hold, if known (0: it grows as it fills).
    explicit GhostList(std::size_t expected = 0) : index_(expected) { nodes_.reserve(expected); }

    std::uint64_t bytes() const { return bytes_; }
    std::size_t count() const { return index_.size(); }
    bool empty() const { return index_.empty(); }
    bool contains(Key key) const { return index_.contains(key); }
    void prepare_lookup(Key key) const { index_.prefetch(key); }

    void push_front(const Entry& entry) {
        std::uint32_t n;
        if (!free_.empty()) {
            n = free_.back();
            free_.pop_back();
        } else {
            n = static_cast<std::uint32_t>(nodes_.size());
            nodes_.emplace_back();
        }
        nodes_[n] = Node{entry, nil, head_};
        if (head_ != nil)
            nodes_[head_].prev = n;
        else
            tail_ = n;
        head_ = n;
        index_.put(entry.key, n);
        bytes_ += entry.size;
    }
    const Entry& back() const { return nodes_[tail_].entry; }
    Entry pop_back() {
        const Entry e = nodes_[tail_].entry;
        remove_node(tail_);
        return e;
    }
    std::optional<Entry> take(Key key) {
        const auto n = index_.find(key);
        if (n == nullptr) return std::nullopt;
        const std::uint32_t node = *n;
        const Entry e = nodes_[node].entry;
        remove_node(node);
        return e;
    }

private:
    struct Node {
        Entry entry;
        std::uint32_t prev = nil, next = nil;
    };
    void remove_node(std::uint32_t n) {
        const Node& node = nodes_[n];
        if (node.prev != nil)
            nodes_[node.prev].next = node.next;
        else
            head_ = node.next;
        if (node.next != nil)
            nodes_[node.next].prev = node.prev;
        else
            tail_ = node.prev;
        bytes_ -= node.entry.size;
        index_.erase(node.entry.key);
        free_.push_back(n);
    }

    std::vector<Node> nodes_;
    std::vector<std::uint32_t> free_;
    std::uint32_t head_ = nil, tail_ = nil;
    FlatMap index_;
    std::uint64_t bytes_ = 0;
};

} // namespace iosig::tier::detail
