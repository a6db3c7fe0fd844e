// The page cache's readahead for one file (readahead_model.hpp).
#include "iosig/tier/readahead_model.hpp"

#include "iosig/block_device.hpp"

#include <algorithm>
#include <bit>
#include <fmt/format.h>
#include <fstream>
#include <iterator>
#include <limits>
#include <stdexcept>

namespace iosig::tier {
namespace {

std::optional<std::uint64_t> read_kib(const std::filesystem::path& file) {
    std::ifstream in(file);
    std::uint64_t kib = 0;
    if (!(in >> kib)) return std::nullopt;
    return kib << 10;
}

} // namespace

std::optional<DeviceReadahead> readahead_of(const std::filesystem::path& file) {
    const std::optional<DiskOfFile> disk = disk_of(file);
    if (!disk) return std::nullopt; // tmpfs, NFS, FUSE: no disk
    const std::filesystem::path queue = disk->sysfs_dir / "queue";
    const auto window = read_kib(queue / "read_ahead_kb");
    const auto max_io = read_kib(queue / "max_sectors_kb");
    if (!window || !max_io) return std::nullopt;
    DeviceReadahead found;
    found.config.window_bytes = *window;
    found.config.max_io_bytes = *max_io;
    found.source = queue.string();
    return found;
}

bool CachedPages::contains(std::uint64_t page) const {
    auto it = ranges_.upper_bound(page);
    return it != ranges_.begin() && page < std::prev(it)->second;
}

void CachedPages::insert(std::uint64_t first, std::uint64_t end) {
    if (first >= end) return;
    auto it = ranges_.upper_bound(first);
    if (it != ranges_.begin() && std::prev(it)->second >= first) { // overlaps or touches one before
        it = std::prev(it);
        first = it->first;
        end = std::max(end, it->second);
        it = ranges_.erase(it);
    }
    while (it != ranges_.end() && it->first <= end) { // ... or ones after
        end = std::max(end, it->second);
        it = ranges_.erase(it);
    }
    ranges_.emplace(first, end);
}

std::uint64_t CachedPages::run_from(std::uint64_t page, std::uint64_t limit) const {
    auto it = ranges_.upper_bound(page);
    if (it == ranges_.begin() || page >= std::prev(it)->second) return 0;
    return std::min(limit, std::prev(it)->second - page);
}

std::uint64_t CachedPages::run_before(std::uint64_t page, std::uint64_t limit) const {
    if (page == 0 || !contains(page - 1)) return 0;
    const auto range = std::prev(ranges_.upper_bound(page - 1));
    return std::min(limit, page - range->first);
}

std::uint64_t CachedPages::next_after(std::uint64_t page) const {
    auto it = ranges_.upper_bound(page);
    return it == ranges_.end() ? std::numeric_limits<std::uint64_t>::max() : it->first;
}

PageCacheModel::PageCacheModel(ReadaheadConfig config, std::uint64_t file_size) : config_(config) {
    if (config_.page_bytes == 0) throw std::invalid_argument("page size must be > 0");
    if (config_.max_io_bytes < config_.page_bytes)
        throw std::invalid_argument(
            fmt::format("largest IO of {} bytes is less than a page", config_.max_io_bytes));
    max_pages_ = config_.window_bytes / config_.page_bytes;
    io_pages_ = config_.max_io_bytes / config_.page_bytes;
    file_pages_ = (file_size + config_.page_bytes - 1) / config_.page_bytes;
}

std::uint64_t PageCacheModel::initial_window(std::uint64_t request_pages, std::uint64_t max) const {
    const std::uint64_t size = std::bit_ceil(request_pages);
    if (size <= max / 32) return size * 4;
    if (size <= max / 4) return size * 2;
    return max;
}

std::uint64_t PageCacheModel::next_window(std::uint64_t size, std::uint64_t max) const {
    if (size < max / 16) return size * 4;
    if (size <= max / 2) return size * 2;
    return max;
}

HomeReads PageCacheModel::read(std::uint64_t offset, std::uint64_t bytes) {
    HomeReads reads;
    const std::uint64_t file_bytes = file_pages_ * config_.page_bytes;
    if (bytes == 0 || offset >= file_bytes) return reads;
    const std::uint64_t end = std::min(offset + bytes, file_bytes);
    const std::uint64_t first = offset / config_.page_bytes;
    const std::uint64_t last = (end + config_.page_bytes - 1) / config_.page_bytes; // exclusive
    for (std::uint64_t page = first; page < last; ++page) {
        if (max_pages_ == 0) { // readahead off: each missing page alone
            if (!cached_.contains(page)) issue(page, 1, 0, reads);
            continue;
        }
        if (!cached_.contains(page)) sync_readahead(page, last - page, reads);
        if (markers_.erase(page)) async_readahead(page, last - page, reads);
    }
    // The kernel keeps the byte position the read ended at (file_ra_state::prev_pos).
    prev_end_ = end;
    return reads;
}

void PageCacheModel::write(std::uint64_t offset, std::uint64_t bytes) {
    if (bytes == 0) return;
    const std::uint64_t last = (offset + bytes + config_.page_bytes - 1) / config_.page_bytes;
    file_pages_ = std::max(file_pages_, last);
    cached_.insert(offset / config_.page_bytes, last);
}

void PageCacheModel::sync_readahead(std::uint64_t index, std::uint64_t request_pages,
                                    HomeReads& reads) {
    std::uint64_t max = max_pages_;
    // A request larger than the window may read up to the device's largest IO at once.
    if (request_pages > max && io_pages_ > max) max = std::min(request_pages, io_pages_);
    // Sequential: at the page the previous read ended in, or the one after it.
    const bool sequential = prev_end_ && index >= *prev_end_ / config_.page_bytes &&
                            index - *prev_end_ / config_.page_bytes <= 1;
    if (index == 0 || request_pages > max || sequential) {
        window_.start = index;
        window_.size = initial_window(request_pages, max);
        window_.async_size =
            window_.size > request_pages ? window_.size - request_pages : window_.size / 2;
        issue(window_.start, window_.size, window_.async_size, reads);
        return;
    }
    // Cached pages right before this one are the trace a sequential stream leaves behind.
    const std::uint64_t contiguous = cached_.run_before(index, max);
    if (contiguous <= request_pages) { // a small random read: only what was asked
        issue(index, request_pages, 0, reads);
        return;
    }
    window_.start = index;
    window_.size = std::min(contiguous + request_pages, max);
    window_.async_size = 1;
    issue(window_.start, window_.size, window_.async_size, reads);
}

void PageCacheModel::async_readahead(std::uint64_t index, std::uint64_t request_pages,
                                     HomeReads& reads) {
    if (index == window_.start + window_.size - window_.async_size) {
        // The expected marker: the stream goes on, and the window grows.
        window_.start += window_.size;
        window_.size = std::max(window_.size, next_window(window_.size, max_pages_));
    } else {
        // A marker of another window (interleaved reads): restart from the cached run after it.
        const std::uint64_t next_miss = index + 1 + cached_.run_from(index + 1, max_pages_);
        if (next_miss >= file_pages_ || next_miss - index > max_pages_) return;
        window_.start = next_miss;
        window_.size = next_window(next_miss - index + request_pages, max_pages_);
    }
    window_.async_size = window_.size;
    issue(window_.start, window_.size, window_.async_size, reads);
}

void PageCacheModel::issue(std::uint64_t start, std::uint64_t pages, std::uint64_t async_size,
                           HomeReads& reads) {
    if (start >= file_pages_) return;
    const std::uint64_t end = start + std::min(pages, file_pages_ - start);
    const std::uint64_t mark =
        async_size > 0 && async_size <= end - start ? end - async_size : end; // end: none
    for (std::uint64_t page = start; page < end;) {
        if (const std::uint64_t cached = cached_.run_from(page, end - page)) {
            page += cached; // a cached page ends an IO, and is not read again
            continue;
        }
        const std::uint64_t run_end = std::min(end, cached_.next_after(page));
        const std::uint64_t run = run_end - page;
        reads.ios += (run + io_pages_ - 1) / io_pages_;
        reads.bytes += run * config_.page_bytes;
        cached_.insert(page, run_end);
        if (mark >= page && mark < run_end) markers_.insert(mark); // only a page read now
        page = run_end;
    }
}

} // namespace iosig::tier
