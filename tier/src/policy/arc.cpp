// ARC (arc.hpp). Case numbers refer to Fig. 4 of the ARC paper.
#include "arc.hpp"

#include <algorithm>

namespace iosig::tier::detail {

void ArcPolicy::on_hit(Slot slot, const Access&) {
    ++clock_;
    // Case I: a hit in T1 or T2 moves the entry to the MRU end of T2.
    if (list_of_[slot] == List::t1) {
        t1_.unlink(slot);
        t1_size_ -= static_cast<double>(size_of_[slot]);
        t2_.push_front(slot);
        t2_size_ += static_cast<double>(size_of_[slot]);
        list_of_[slot] = List::t2;
    } else {
        t2_.move_to_front(slot);
    }
}

void ArcPolicy::on_miss(const Access& access) {
    ++clock_;
    ghost_hit_ = GhostHit::none;
    const double b1 = static_cast<double>(b1_.bytes()), b2 = static_cast<double>(b2_.bytes());
    if (b1_.contains(access.key)) {
        // Case II: the key was evicted from T1 too early; grow T1's target.
        p_ = std::min(p_ + std::max(b2 / b1, 1.0), capacity_);
        b1_.take(access.key);
        ghost_hit_ = GhostHit::b1;
    } else if (b2_.contains(access.key)) {
        // Case III: evicted from T2 too early; shrink T1's target.
        p_ = std::max(p_ - std::max(b1 / b2, 1.0), 0.0);
        b2_.take(access.key);
        ghost_hit_ = GhostHit::b2;
    }
}

// REPLACE(x, p): evict from T1 when it exceeds its target (or equals it and x came from B2).
Slot ArcPolicy::replace_victim() {
    const bool from_t1 =
        (t1_size_ > 0 && (t1_size_ > p_ || (t1_size_ == p_ && ghost_hit_ == GhostHit::b2))) ||
        t2_size_ == 0;
    return from_t1 ? t1_.back() : t2_.back();
}

Slot ArcPolicy::choose_victim(const Access& incoming) {
    pending_keeps_ghost_ = true;
    if (ghost_hit_ != GhostHit::none) return pending_ = replace_victim();
    // Case IV: the key is in no list.
    const double incoming_size = static_cast<double>(incoming.size);
    const double b1 = static_cast<double>(b1_.bytes()), b2 = static_cast<double>(b2_.bytes());
    if (t1_size_ + b1 + incoming_size > capacity_) {
        if (!b1_.empty()) {
            b1_.pop_back();
            return pending_ = replace_victim();
        }
        pending_keeps_ghost_ = false;
        return pending_ = t1_.back();
    }
    if (t1_size_ + b1 + t2_size_ + b2 >= 2 * capacity_ && !b2_.empty()) b2_.pop_back();
    return pending_ = replace_victim();
}

void ArcPolicy::remove_resident(Slot slot) {
    if (list_of_[slot] == List::t1) {
        t1_.unlink(slot);
        t1_size_ -= static_cast<double>(size_of_[slot]);
    } else {
        t2_.unlink(slot);
        t2_size_ -= static_cast<double>(size_of_[slot]);
    }
}

void ArcPolicy::on_evict(Slot slot) {
    const List from = list_of_[slot];
    remove_resident(slot);
    list_of_[slot] = List::none;
    const bool keep_ghost = slot != pending_ || pending_keeps_ghost_;
    pending_ = nil;
    if (!keep_ghost) return;
    const GhostList::Entry ghost{key_of_[slot], size_of_[slot], clock_};
    if (from == List::t1)
        b1_.push_front(ghost);
    else
        b2_.push_front(ghost);
}

ArcPolicy::ArcPolicy(std::uint64_t capacity, std::size_t slots)
    : capacity_(static_cast<double>(capacity)) {
    t1_.reserve_slots(slots);
    t2_.reserve_slots(slots);
    key_of_.resize(slots);
    size_of_.resize(slots);
    list_of_.resize(slots, List::none);
}

void ArcPolicy::on_insert(Slot slot, const Access& access) {
    if (slot >= key_of_.size()) {
        const std::size_t n = std::max<std::size_t>(slot + 1, key_of_.size() * 2);
        key_of_.resize(n);
        size_of_.resize(n);
        list_of_.resize(n, List::none);
    }
    key_of_[slot] = access.key;
    size_of_[slot] = access.size;
    if (ghost_hit_ != GhostHit::none) {
        t2_.push_front(slot);
        t2_size_ += static_cast<double>(access.size);
        list_of_[slot] = List::t2;
    } else {
        t1_.push_front(slot);
        t1_size_ += static_cast<double>(access.size);
        list_of_[slot] = List::t1;
    }
    ghost_hit_ = GhostHit::none;
}

void ArcPolicy::on_erase(Slot slot) {
    remove_resident(slot);
    list_of_[slot] = List::none;
}

} // namespace iosig::tier::detail
