// RangeLock (range_lock.hpp): byte ranges of a file held for a call, granted in arrival order.
#include "range_lock.hpp"

namespace iosig::tier::detail {

RangeLock::Hold::Hold(RangeLock& owner, std::int64_t begin, std::int64_t end, bool exclusive)
    : owner_(owner), begin_(begin), end_(end), exclusive_(exclusive) {
    std::unique_lock lock(owner_.mutex_);
    previous_ = owner_.last_;
    (previous_ != nullptr ? previous_->next_ : owner_.first_) = this;
    owner_.last_ = this;
    owner_.released_.wait(lock, [&] {
        for (const Hold* earlier = owner_.first_; earlier != this; earlier = earlier->next_)
            if (conflicts_with(*earlier)) return false;
        return true;
    });
}

RangeLock::Hold::~Hold() {
    {
        std::lock_guard lock(owner_.mutex_);
        (previous_ != nullptr ? previous_->next_ : owner_.first_) = next_;
        (next_ != nullptr ? next_->previous_ : owner_.last_) = previous_;
    }
    owner_.released_.notify_all();
}

} // namespace iosig::tier::detail
